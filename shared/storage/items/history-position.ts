/**
 * How far the history function has read the change stream: the commit time
 * of the newest consumer change in the last batch it finished, and when it
 * finished it. Each history answer carries it (shared/storage/history.ts).
 *
 *   pk HISTORY_STREAM   sk POSITION
 */
import { stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const HISTORY_POSITION_TYPE = 'historyPosition';

export interface HistoryPosition {
  /** The newest commit time of a consumer change the history function has read. */
  newestChangeRead: string;
  readAt: string;
}

export const historyPositionKey: Key = { pk: 'HISTORY_STREAM', sk: 'POSITION' };

export const encodeHistoryPosition = ({ newestChangeRead, readAt }: HistoryPosition): Item => ({
  ...historyPositionKey,
  [TYPE_ATTRIBUTE]: HISTORY_POSITION_TYPE,
  newestChangeRead,
  readAt,
});

export const decodeHistoryPosition = (item: Item): HistoryPosition => ({
  newestChangeRead: stringField(item, 'newestChangeRead'),
  readAt: stringField(item, 'readAt'),
});
