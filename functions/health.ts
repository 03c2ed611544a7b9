/**
 * GET /health, this service's own (admins only): how what works in the
 * background is doing, for an operator without CloudWatch
 * (docs/operators/observability.md, "Health without CloudWatch";
 * placement-admin health calls it). The release this function runs; how far
 * the allocation history has read the change stream and how far behind that
 * is; when the change sweeper last ran and as which release; and what waits
 * for the sweeper: unfinished multi-step changes, owed count changes, entry
 * cleanups, each kind's oldest and how long it has waited.
 */
import { config } from '../shared/config.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import { sweeperBacklog, type Waiting } from '../shared/storage/backlog.js';
import { readHistoryHeartbeat, readHistoryPosition } from '../shared/storage/history.js';

const seconds = (milliseconds: number) => Math.max(0, Math.round(milliseconds / 100) / 10);

/** How many wait, and the oldest: since when the sweeper may take it over, and for how long it has waited. */
function waitingBody(waiting: Waiting[], now: number) {
  const oldest = waiting[0];
  return {
    count: waiting.length,
    oldest: oldest === undefined ? null : { id: oldest.id, since: new Date(oldest.since).toISOString(), seconds: seconds(now - oldest.since) },
  };
}

async function health(): Promise<Reply> {
  const [position, heartbeat, backlog] = await Promise.all([readHistoryPosition(), readHistoryHeartbeat(), sweeperBacklog()]);
  const now = Date.now();
  // The sweeper sends a change through the stream at every run (its heartbeat): the history is behind by as much as the
  // newest of them is newer than what it has read (to within the sweeper's period). Nothing read yet: not known.
  const read = position?.newestChangeRead;
  const behind = heartbeat === undefined ? null : read === undefined ? null : seconds(Date.parse(heartbeat.at) - Date.parse(read));
  return {
    status: 200,
    body: {
      release: config.release,
      history: {
        newest_change_read: read ?? null,
        read_at: position?.readAt ?? null,
        read_by_release: position?.release ?? null,
        newest_change_made: heartbeat?.at ?? null,
        behind_seconds: behind,
      },
      sweeper: { last_run_at: heartbeat?.at ?? null, release: heartbeat?.release ?? null },
      waiting_for_sweeper: {
        changes: waitingBody(backlog.changes, now),
        count_changes: waitingBody(backlog.countChanges, now),
        entry_cleanups: waitingBody(backlog.entryCleanups, now),
      },
    },
    lastModified: null,
  };
}

export const operations: Operations<'health'> = {
  'GET /health': health,
};

export const handler = lambdaHandler(operations);
