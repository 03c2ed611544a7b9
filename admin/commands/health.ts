/**
 * placement-admin health: how what works in the background is doing, from
 * this service's GET /health (admins only), for an operator without
 * CloudWatch (docs/operators/observability.md, "Health without
 * CloudWatch"): the allocation history's position in the change stream and
 * its lag (lane by lane, or why it is not known), the change sweeper's last
 * run and what waits for it, and the release each part runs.
 */
import { command } from '../command-line.js';
import { connect, expectStatus } from '../endpoint.js';
import { THIS_SERVICE_URL, TOKEN } from './options.js';

interface Waiting {
  count: number;
  oldest: { id: string; since: string; seconds: number } | null;
}

export interface Health {
  release: string;
  history: {
    newest_change_read: string | null;
    read_at: string | null;
    read_by_release: string | null;
    newest_change_made: string | null;
    behind_seconds: number | null;
    behind_unknown_because: string | null;
    lanes: { lane: number; newest_heartbeat_read: string | null; behind_seconds: number | null }[];
  };
  sweeper: { last_run_at: string | null; release: string | null };
  waiting_for_sweeper: { changes: Waiting; count_changes: Waiting; entry_cleanups: Waiting };
}

/** How much further behind than the fastest lane a lane is before it is named. */
const LANE_APART_SECONDS = 60;

const WAITING_KINDS = [
  ['changes', 'unfinished multi-step changes'],
  ['count_changes', 'owed count changes'],
  ['entry_cleanups', 'entry cleanups'],
] as const;

function describe(health: Health): string {
  const { history, sweeper } = health;
  const lag =
    history.behind_seconds === null
      ? `not known (${history.behind_unknown_because})`
      : history.behind_seconds === 0
        ? 'up to date'
        : `${history.behind_seconds} s behind`;
  // A lane well behind the others (a sweeper period, a minute) is a stream shard read slower than the rest, or stuck.
  const lags = history.lanes.flatMap((lane) => (lane.behind_seconds === null ? [] : [lane.behind_seconds]));
  const laggards = history.lanes.filter((lane) => lane.behind_seconds !== null && lane.behind_seconds > Math.min(...lags) + LANE_APART_SECONDS);
  const lines = [
    `answered by release ${health.release}`,
    history.newest_change_read === null
      ? 'allocation history: has read nothing of the change stream yet'
      : `allocation history: read changes up to ${history.newest_change_read} (at ${history.read_at}, release ${history.read_by_release ?? 'unknown'}): ${lag}`,
    `heartbeat lanes (${history.lanes.length}, spread over the stream's shards): ${
      laggards.length === 0
        ? 'none behind the others'
        : laggards.map((lane) => `lane ${lane.lane} read to ${lane.newest_heartbeat_read} (${lane.behind_seconds} s behind)`).join(', ')
    }`,
    sweeper.last_run_at === null ? 'change sweeper: has not run' : `change sweeper: last ran at ${sweeper.last_run_at} (release ${sweeper.release})`,
  ];
  for (const [kind, label] of WAITING_KINDS) {
    const { count, oldest } = health.waiting_for_sweeper[kind];
    lines.push(
      oldest === null ? `${label}: none waiting` : `${label}: ${count} waiting, the oldest ${oldest.id} for ${oldest.seconds} s (since ${oldest.since})`,
    );
  }
  return lines.join('\n');
}

export const health = command({
  name: 'health',
  summary: "how the region's background work is doing: the allocation history's lag, the change sweeper and what waits for it",
  synopsis: '--url URL [--token T] [--json]',
  description: [
    "Asks this service's GET /health (admins only by default): how far the allocation history has read the table's change",
    'stream and how far behind that is, when the change sweeper last ran, the unfinished multi-step changes, owed count',
    'changes and entry cleanups that wait for it (how many, the oldest and for how long), and the release each part runs.',
    'The same figures as the alarms of docs/operators/observability.md, without CloudWatch.',
  ].join('\n'),
  options: {
    url: THIS_SERVICE_URL,
    token: TOKEN,
    json: { type: 'boolean', help: "print the service's answer as JSON" },
  },
  run: async (values) => {
    const { client } = await connect(values.url!, values.token);
    const body = expectStatus(await client.get('/health'), [200], 'GET /health').body as Health;
    console.log(values.json ? JSON.stringify(body) : describe(body));
    return 0;
  },
});
