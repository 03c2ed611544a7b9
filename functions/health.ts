/**
 * GET /health, this service's own (admins only): how what works in the
 * background is doing, for an operator without CloudWatch
 * (docs/operators/observability.md, "Health without CloudWatch";
 * placement-admin health calls it). The release this function runs; how far
 * the allocation history has read the change stream and how far behind that
 * is, lane by lane (shared/storage/items/history-heartbeat.ts: a stuck
 * stream shard holds back the lanes it carries), or that it is not known
 * when the sweeper's heartbeat has stopped; when the change sweeper last ran
 * and as which release; and what waits for the sweeper: unfinished
 * multi-step changes, owed count changes, entry cleanups, each kind's oldest
 * and how long it has waited.
 */
import { config } from '../shared/config.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import { sweeperBacklog, type Waiting } from '../shared/storage/backlog.js';
import { readHistoryHeartbeat, readHistoryLanes, readHistoryPosition } from '../shared/storage/history/stream.js';
import { HEARTBEAT_LANES } from '../shared/storage/items/history-heartbeat.js';

const seconds = (milliseconds: number) => Math.max(0, Math.round(milliseconds / 100) / 10);

/**
 * A heartbeat older than this means the sweeper has stopped (it runs every minute in AWS): the lag cannot be told from
 * heartbeats that no longer come, and reading "up to date" then would hide a stopped history as well.
 */
export const HEARTBEAT_STOPPED_AFTER_SECONDS = 300;

/** Each lane's newest heartbeat read and how far behind the newest made that is (null: never read). */
function lanesBody(lanes: Map<number, string>, made: string | undefined) {
  return Array.from({ length: HEARTBEAT_LANES }, (_, lane) => {
    const read = lanes.get(lane);
    return {
      lane,
      newest_heartbeat_read: read ?? null,
      behind_seconds: read === undefined || made === undefined ? null : seconds(Date.parse(made) - Date.parse(read)),
    };
  });
}

/** How many wait, and the oldest: since when the sweeper may take it over, and for how long it has waited. */
function waitingBody(waiting: Waiting[], now: number) {
  const oldest = waiting[0];
  return {
    count: waiting.length,
    oldest: oldest === undefined ? null : { id: oldest.id, since: new Date(oldest.since).toISOString(), seconds: seconds(now - oldest.since) },
  };
}

async function health(): Promise<Reply> {
  const [position, heartbeat, lanes, backlog] = await Promise.all([readHistoryPosition(), readHistoryHeartbeat(), readHistoryLanes(), sweeperBacklog()]);
  const now = Date.now();
  // The sweeper sends a heartbeat through the stream at every run, on every lane: the history is behind by as much as
  // the newest is newer than what its slowest lane has read (to within the sweeper's period). Not known before anything
  // was read, while a lane has never been read, or once the heartbeat has stopped.
  const made = heartbeat?.at;
  const perLane = lanesBody(lanes, made);
  const stopped = made !== undefined && now - Date.parse(made) > HEARTBEAT_STOPPED_AFTER_SECONDS * 1000;
  const laneLags = perLane.map((lane) => lane.behind_seconds);
  const behind = made === undefined || stopped || laneLags.includes(null) ? null : Math.max(...(laneLags as number[]));
  const unknownBecause =
    made === undefined
      ? 'the sweeper has sent no heartbeat yet'
      : stopped
        ? `the sweeper's heartbeat stopped ${seconds(now - Date.parse(made))} s ago`
        : laneLags.includes(null)
          ? `${laneLags.filter((lag) => lag === null).length} of ${HEARTBEAT_LANES} heartbeat lanes not read yet`
          : null;
  return {
    status: 200,
    body: {
      release: config.release,
      history: {
        newest_change_read: position?.newestChangeRead ?? null,
        read_at: position?.readAt ?? null,
        read_by_release: position?.release ?? null,
        newest_change_made: made ?? null,
        behind_seconds: behind,
        behind_unknown_because: unknownBecause,
        lanes: perLane,
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
