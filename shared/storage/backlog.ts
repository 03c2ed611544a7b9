/**
 * What waits for the change sweeper (functions/change-sweeper.ts): the
 * multi-step changes not finished (journal.ts), the use-count changes whose
 * counts are owed (count-changes.ts) and the cleanups of deleted providers'
 * search entries (providers.ts), each with the time from which the sweeper
 * may take it over: its writer's lease or hold. The sweeper publishes how
 * long the oldest has waited; GET /health shows it.
 */
import { openCountChanges } from './commit/count-changes.js';
import { openChanges } from './commit/journal.js';
import { openEntryCleanups } from './entries/outside-commit.js';

export interface Waiting {
  id: string;
  /** When (ms since the epoch) its writer's lease or hold ends: from then on, it waits for the sweeper. */
  since: number;
}

/** Each kind, oldest first. */
export interface SweeperBacklog {
  changes: Waiting[];
  countChanges: Waiting[];
  entryCleanups: Waiting[];
}

const oldestFirst = (waiting: Waiting[]): Waiting[] => waiting.sort((a, b) => a.since - b.since);

export async function sweeperBacklog(): Promise<SweeperBacklog> {
  const [changes, countChanges, entryCleanups] = await Promise.all([openChanges(), openCountChanges(), openEntryCleanups()]);
  return {
    changes: oldestFirst(changes.map((head) => ({ id: head.id, since: head.leaseUntil }))),
    countChanges: oldestFirst(countChanges.map((change) => ({ id: change.changeId, since: change.due }))),
    entryCleanups: oldestFirst(entryCleanups.map((cleanup) => ({ id: cleanup.key.sk, since: cleanup.due }))),
  };
}

/** How long (ms) the oldest of the backlog has waited for the sweeper at `now`: 0 when nothing waits. */
export function longestWait(backlog: SweeperBacklog, now: number): number {
  const oldest = Math.min(...[backlog.changes, backlog.countChanges, backlog.entryCleanups].map((waiting) => waiting[0]?.since ?? now));
  return Math.max(0, now - oldest);
}
