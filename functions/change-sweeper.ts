/**
 * The scheduled change sweeper (not an API route): finishes every multi-step
 * change whose writer died, rolling a committed one forward and any other
 * back (shared/storage/commit/journal.ts, docs/design/multi-step-changes.md), and
 * removes the search entries of deleted providers that their requests left
 * (shared/storage/providers.ts providerChangePlan), and finishes the use
 * counts that provider changes moved outside their commits
 * (shared/storage/commit/count-changes.ts). Requests finish what they meet
 * themselves; this covers what nobody reads.
 *
 * At every run it then says how it is doing: how long the oldest of what is
 * left has waited for it (a metric, SweeperBacklogSeconds, which an alarm
 * watches), and a heartbeat through the change stream, by which the history
 * tells how far behind it reads (GET /health; docs/operators/observability.md).
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { config } from '../shared/config.js';
import { logger } from '../shared/http/logger.js';
import { METRICS_NAMESPACE } from '../shared/http/middleware/metrics.js';
import { longestWait, sweeperBacklog } from '../shared/storage/backlog.js';
import { writeHistoryHeartbeat } from '../shared/storage/history/stream.js';
import { sweepChanges } from '../shared/storage/commit/journal.js';
import { sweepEntryCleanups } from '../shared/storage/entries/outside-commit.js';
import { sweepCountChanges } from '../shared/storage/commit/count-changes.js';

/** The sweeper's own metric (namespace Placement): how long, in seconds, the oldest of what it finishes has waited for it. */
export const SWEEPER_BACKLOG_METRIC = 'SweeperBacklogSeconds';
export const SWEEPER_METRIC_DIMENSIONS = ['Stage'] as const;

export interface Sweep {
  finished: number;
  entryCleanups: number;
  countChanges: number;
  /** How long the oldest of what is left waited for the sweeper, at the end of the run. */
  backlogSeconds: number;
}

export const handler = async (): Promise<Sweep> => {
  const finished = await sweepChanges();
  if (finished > 0) logger.warn('finished changes whose writers had died', { finished });
  const entryCleanups = await sweepEntryCleanups();
  // A deletion past 792 entries leaves them to this sweep by design: information, not a warning.
  if (entryCleanups > 0) logger.info('removed the search entries of deleted providers', { entryCleanups });
  const countChanges = await sweepCountChanges();
  // Provider changes leave the counts they lower to this sweep by design: information, not a warning.
  if (countChanges > 0) logger.info('finished use-count changes', { countChanges });

  const backlogSeconds = longestWait(await sweeperBacklog(), Date.now()) / 1000;
  await writeHistoryHeartbeat({ at: new Date().toISOString(), release: config.release });
  // Locally (npm start) the sweeps are not Lambda's: their metric would only fill the log.
  if (config.inLambda) {
    const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'placement' });
    // Powertools adds a `service` dimension of its own: the alarm knows Stage only.
    metrics.clearDefaultDimensions();
    metrics.addDimension(SWEEPER_METRIC_DIMENSIONS[0], config.stage);
    metrics.addMetric(SWEEPER_BACKLOG_METRIC, MetricUnit.Seconds, backlogSeconds);
    metrics.publishStoredMetrics();
  }
  return { finished, entryCleanups, countChanges, backlogSeconds };
};
