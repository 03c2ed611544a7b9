/**
 * How far the history function has read the change stream: the commit time
 * of the newest consumer change (or sweeper heartbeat, history-heartbeat.ts)
 * in the last batch it finished, when it finished it, and as which release
 * (absent when written by release 1.1.0 or earlier). Each history answer
 * carries it (shared/storage/history/stream.ts), and GET /health.
 *
 *   pk HISTORY_STREAM   sk POSITION
 */
import { optionalStringField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const HISTORY_POSITION_TYPE = 'historyPosition';

export interface HistoryPosition {
  /** The newest commit time of a consumer change the history function has read. */
  newestChangeRead: string;
  readAt: string;
  release?: string;
}

export const historyPositionKey: Key = { pk: 'HISTORY_STREAM', sk: 'POSITION' };

export const encodeHistoryPosition = ({ newestChangeRead, readAt, release }: HistoryPosition): Item => ({
  ...historyPositionKey,
  [TYPE_ATTRIBUTE]: HISTORY_POSITION_TYPE,
  newestChangeRead,
  readAt,
  ...(release === undefined ? {} : { release }),
});

export const decodeHistoryPosition = (item: Item): HistoryPosition => ({
  newestChangeRead: stringField(item, 'newestChangeRead'),
  readAt: stringField(item, 'readAt'),
  release: optionalStringField(item, 'release'),
});
