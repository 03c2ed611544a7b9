/**
 * The change sweeper's heartbeat through the change stream: at every run it
 * writes this item, whose key passes the history's event source filter (the
 * sort key of a consumer), so that the history function reads it as it reads
 * a consumer's change and moves its position to the heartbeat's time. How
 * much newer the heartbeat is than what the history has read is how far the
 * history is behind (GET /health), whether or not consumers change. The item
 * also says when the sweeper last ran and as which release. No index holds
 * it; a release that does not know it reads no consumer in it (its type).
 *
 *   pk HISTORY_HEARTBEAT   sk CONSUMER
 */
import { stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { CONSUMER_SK } from './consumer.js';

export const HISTORY_HEARTBEAT_TYPE = 'historyHeartbeat';

export interface HistoryHeartbeat {
  /** When the sweeper wrote it (ISO 8601, UTC). */
  at: string;
  /** The sweeper's release. */
  release: string;
}

export const historyHeartbeatKey: Key = { pk: 'HISTORY_HEARTBEAT', sk: CONSUMER_SK };

export const encodeHistoryHeartbeat = ({ at, release }: HistoryHeartbeat): Item => ({
  ...historyHeartbeatKey,
  [TYPE_ATTRIBUTE]: HISTORY_HEARTBEAT_TYPE,
  at,
  release,
});

export const isHistoryHeartbeat = (item: Item | undefined): boolean => item?.[TYPE_ATTRIBUTE] === HISTORY_HEARTBEAT_TYPE;

export const decodeHistoryHeartbeat = (item: Item): HistoryHeartbeat => ({ at: stringField(item, 'at'), release: stringField(item, 'release') });
