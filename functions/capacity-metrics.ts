/**
 * The scheduled capacity function (EventBridge, every 5 minutes by default;
 * infra/constructs/capacity.ts): reads every provider's inventories and
 * usages straight from the table and publishes, per resource class, the
 * region's capacity, used, reserved and free amounts, utilisation and the
 * number of providers with free capacity, as CloudWatch metrics.
 *
 * Metrics go out as embedded-metric-format records on stdout, like the
 * request metrics (shared/http/middleware/metrics.ts), not through
 * PutMetricData: no CloudWatch client in the bundle, no permission to grant,
 * no API call that can fail or throttle, and the metrics cost the same
 * (custom metrics are billed per metric either way; the records add a few
 * KB of log ingestion per run).
 *
 * The fullest providers are log records too (one per provider and class,
 * ranked, with the run's timestamp), which the dashboard shows with a Logs
 * Insights query: a metric per provider would be a custom metric for every
 * provider that was ever among the fullest.
 *
 * It reads the table, not the API: the API would take two requests per
 * provider (inventories, usages), each a Lambda invocation and a strongly
 * consistent read; the sharded index gives every provider item, and only
 * those, in eventually consistent pages (docs/operators/observability.md, "Capacity at a glance").
 */
import { config } from '../shared/config.js';
import { regionCapacity, type RegionCapacity } from '../shared/domain/region-capacity.js';
import { METRICS_NAMESPACE } from '../shared/http/middleware/metrics.js';
import { takeConsumedCapacity, trackConsumedCapacity } from '../shared/storage/consumed-capacity.js';
import { listProviderCapacities } from '../shared/storage/providers.js';

/** Metric name to EMF unit; amounts are in each class's own unit (MB, GB, VCPUs...), hence None. */
export const CAPACITY_METRICS = {
  Capacity: 'None',
  Used: 'None',
  Reserved: 'None',
  Free: 'None',
  Utilisation: 'Percent',
  ProvidersWithFree: 'Count',
} as const;
export const CAPACITY_DIMENSIONS = ['Stage', 'ResourceClass'] as const;
/** The `record` field of the log lines listing the fullest providers, which the dashboard queries. */
export const FULLEST_RECORD = 'fullest-provider';
export const RUN_RECORD = 'capacity-run';
const FULLEST_COUNT = 10;

export interface CapacityRun {
  report: RegionCapacity;
  /** The read units DynamoDB reported for the run's queries. */
  readUnits: number;
  itemsRead: number;
}

export type LineWriter = (line: string) => void;
const toStdout: LineWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

export async function publishCapacity(write: LineWriter = toStdout, now = new Date()): Promise<CapacityRun> {
  const started = performance.now();
  const { providers, units } = await trackConsumedCapacity(async () => ({ providers: await listProviderCapacities(), units: takeConsumedCapacity() }));
  const report = regionCapacity(providers, FULLEST_COUNT);
  const run = now.toISOString();
  const definition = [
    { Namespace: METRICS_NAMESPACE, Dimensions: [[...CAPACITY_DIMENSIONS]], Metrics: Object.entries(CAPACITY_METRICS).map(([Name, Unit]) => ({ Name, Unit })) },
  ];
  for (const summary of report.classes) {
    write(
      JSON.stringify({
        _aws: { Timestamp: now.getTime(), CloudWatchMetrics: definition },
        Stage: config.stage,
        ResourceClass: summary.resourceClass,
        Capacity: summary.capacity,
        Used: summary.used,
        Reserved: summary.reserved,
        Free: summary.free,
        Utilisation: summary.utilisationPercent,
        ProvidersWithFree: summary.providersWithFree,
        providers: summary.providers,
        total: summary.total,
        histogram: summary.histogram,
        run,
      }),
    );
  }
  for (const [index, provider] of report.fullest.entries()) write(JSON.stringify({ record: FULLEST_RECORD, run, rank: index + 1, ...provider }));
  write(
    JSON.stringify({
      record: RUN_RECORD,
      run,
      providers: report.providers,
      classes: report.classes.length,
      readCapacityUnits: units.read,
      itemsRead: units.items,
      durationMs: Math.round(performance.now() - started),
    }),
  );
  return { report, readUnits: units.read, itemsRead: units.items };
}

export const handler = async (): Promise<void> => {
  await publishCapacity();
};
