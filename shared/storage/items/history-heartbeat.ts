/**
 * The change sweeper's heartbeat through the change stream: at every run it
 * writes this item once per lane, whose key passes the history's event
 * source filter (the sort key of a consumer), so that the history function
 * reads it as it reads a consumer's change and moves its position to the
 * heartbeat's time. How much newer the heartbeat is than what the history
 * has read is how far the history is behind (GET /health), whether or not
 * consumers change.
 *
 * Lanes: Lambda does not tell the history function which stream shard a
 * batch came from, and a stream has a shard per table partition, each read
 * on its own. The heartbeat goes out under HEARTBEAT_LANES keys, which
 * DynamoDB's hashing spreads over the partitions, so each shard carries some
 * lanes, and a shard whose reading is stuck holds back the lanes on it
 * (history-lanes.ts keeps how far each lane was read). Lane 0's item, the
 * key release 1.1.0 wrote and reads, also says when the sweeper last ran and
 * as which release. No index holds these; a release that does not know them
 * reads no consumer in them (their type).
 *
 *   pk HISTORY_HEARTBEAT       sk CONSUMER   (lane 0)
 *   pk HISTORY_HEARTBEAT#<n>   sk CONSUMER   (lane n, 1 to HEARTBEAT_LANES - 1)
 */
import { stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { CONSUMER_SK } from './consumer.js';

export const HISTORY_HEARTBEAT_TYPE = 'historyHeartbeat';

/**
 * Enough that every partition of a region's table carries a lane: with 32 keys hashed over 4 partitions the
 * chance that one carries none is 4 x (3/4)^32, about 1 in 2,500; a table of this service's items past 4
 * partitions (40 GB, or 12,000 reads a second) is beyond the largest region measured. 32 writes a minute cost
 * about $0.90 a month at on-demand's $0.625 per million writes (us-east-1).
 */
export const HEARTBEAT_LANES = 32;

const HEARTBEAT_PK = 'HISTORY_HEARTBEAT';

export interface HistoryHeartbeat {
  /** When the sweeper wrote it (ISO 8601, UTC). */
  at: string;
  /** The sweeper's release. */
  release: string;
}

export const historyHeartbeatKey = (lane: number): Key => ({ pk: lane === 0 ? HEARTBEAT_PK : `${HEARTBEAT_PK}#${lane}`, sk: CONSUMER_SK });

export const encodeHistoryHeartbeat = ({ at, release }: HistoryHeartbeat, lane: number): Item => ({
  ...historyHeartbeatKey(lane),
  [TYPE_ATTRIBUTE]: HISTORY_HEARTBEAT_TYPE,
  at,
  release,
});

export const isHistoryHeartbeat = (item: Item | undefined): boolean => item?.[TYPE_ATTRIBUTE] === HISTORY_HEARTBEAT_TYPE;

export const decodeHistoryHeartbeat = (item: Item): HistoryHeartbeat => ({ at: stringField(item, 'at'), release: stringField(item, 'release') });

/** The lane of a heartbeat item, from its key. */
export const heartbeatLane = (item: Item): number => {
  const pk = stringField(item, 'pk');
  return pk === HEARTBEAT_PK ? 0 : Number(pk.slice(HEARTBEAT_PK.length + 1));
};
