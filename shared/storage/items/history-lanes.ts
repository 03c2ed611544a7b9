/**
 * How far the history function has read each heartbeat lane
 * (history-heartbeat.ts): the time of the newest heartbeat it read on each,
 * one attribute per lane, each set by the batch that read it (a shard's
 * batches come in order, so a lane only moves forward). GET /health takes
 * the history's lag from the slowest lane. Unknown to release 1.1.0, which
 * keeps only history-position.ts.
 *
 *   pk HISTORY_STREAM   sk LANES   lane#0 ... lane#31: ISO 8601 times
 */
import type { Item, Key } from './fields.js';

export const historyLanesKey: Key = { pk: 'HISTORY_STREAM', sk: 'LANES' };

export const laneAttribute = (lane: number): string => `lane#${lane}`;

/** Each lane read so far, with the newest heartbeat time read on it. */
export function decodeHistoryLanes(item: Item): Map<number, string> {
  const lanes = new Map<number, string>();
  for (const [name, value] of Object.entries(item)) {
    if (name.startsWith('lane#') && typeof value === 'string') lanes.set(Number(name.slice('lane#'.length)), value);
  }
  return lanes;
}
