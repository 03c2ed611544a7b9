/**
 * The handlers' own metrics: latency, the DynamoDB units requests consumed,
 * server errors, successful claims and 409 conflicts, per route.
 *
 * Each instance aggregates its requests per route and writes one CloudWatch
 * embedded-metric-format (EMF) record per route (Powertools Metrics; namespace
 * Placement, dimensions Stage and Route) after every FLUSH_EVERY_REQUESTS
 * requests of the route, or at the first request after FLUSH_AFTER_MS since
 * the route's oldest unwritten one. Every request pays for the log bytes it
 * causes (CloudWatch Logs ingestion): a record per request cost about 360
 * bytes, an aggregate of 100 about 14 a request (`npm run log-report`). The
 * record carries each request's latency (CloudWatch computes percentiles
 * from the values, and their count is the request count) and the sums of the
 * others, each declared only when not 0.
 *
 * The price: Lambda freezes an instance between requests and may reclaim it
 * without warning, so what an instance held unwritten (up to 99 requests of
 * a route, or a minute of them) is lost with it
 * (docs/operators/observability.md says what that means for the dashboard).
 *
 * For the benchmarks and tests, PLACEMENT_REQUEST_RECORDS adds one plain JSON
 * line per request (parseRequestRecord): its request id, route, status,
 * latency, units, items read and DynamoDB requests.
 *
 * Registered first in the chain, so its `after`/`onError` run last and see
 * the final response. The unit totals are per invocation (lambdaHandler
 * scopes them), so they stay right under the local server's concurrency;
 * the aggregates are off outside Lambda unless PLACEMENT_METRICS asks for them.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { config } from '../../config.js';
import { takeConsumedCapacity, takeRequests } from '../../storage/consumed-capacity.js';
import { routeKey } from '../routes.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export const METRICS_NAMESPACE = 'Placement';
/** The dimensions of every aggregate, in this order. */
export const REQUEST_METRIC_DIMENSIONS = ['Stage', 'Route'] as const;
export const FLUSH_EVERY_REQUESTS = 100;
export const FLUSH_AFTER_MS = 60_000;

/** The metrics summed per aggregate: declared only when not 0. */
const SUMMED = ['ReadCapacityUnits', 'WriteCapacityUnits', 'ServerErrors', 'Claims', 'Conflicts'] as const;
type Summed = (typeof SUMMED)[number];
/** Every metric an aggregate may declare. */
export const REQUEST_METRICS = ['Latency', ...SUMMED] as const;
export type RequestMetric = (typeof REQUEST_METRICS)[number];

/** What one request adds to its route's aggregate. */
export interface RequestSample extends Record<Summed, number> {
  latencyMs: number;
}

interface Aggregate {
  /** When the oldest request not written yet ended. */
  since: number;
  latencies: number[];
  sums: Record<Summed, number>;
}

/** One instance's unwritten requests, per route. */
export class RouteAggregates {
  private readonly byRoute = new Map<string, Aggregate>();
  private readonly metrics: Metrics;

  constructor(private readonly now: () => number = Date.now) {
    this.metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'placement' });
    // Powertools adds a `service` dimension of its own: the stack's alarms and dashboard know Stage and Route only.
    this.metrics.clearDefaultDimensions();
  }

  add(route: string, sample: RequestSample): void {
    const now = this.now();
    let aggregate = this.byRoute.get(route);
    if (aggregate === undefined) {
      aggregate = { since: now, latencies: [], sums: { ReadCapacityUnits: 0, WriteCapacityUnits: 0, ServerErrors: 0, Claims: 0, Conflicts: 0 } };
      this.byRoute.set(route, aggregate);
    }
    // A tenth of a millisecond is all a latency needs, and every character of it is paid for.
    aggregate.latencies.push(Math.round(sample.latencyMs * 10) / 10);
    for (const name of SUMMED) aggregate.sums[name] += sample[name];
    if (aggregate.latencies.length >= FLUSH_EVERY_REQUESTS) this.write(route, aggregate);
    // An instance has no timer between requests (Lambda freezes it): any request writes what has waited long enough.
    for (const [other, waiting] of this.byRoute) if (now - waiting.since >= FLUSH_AFTER_MS) this.write(other, waiting);
  }

  /** Writes every route's aggregate now. */
  flush(): void {
    for (const [route, aggregate] of this.byRoute) this.write(route, aggregate);
  }

  private write(route: string, aggregate: Aggregate): void {
    this.byRoute.delete(route);
    this.metrics.addDimension('Stage', config.stage).addDimension('Route', route);
    for (const name of SUMMED) {
      // Sums of fractional units: two decimals are DynamoDB's own resolution (0.5 units), with room for averages.
      if (aggregate.sums[name] > 0) this.metrics.addMetric(name, MetricUnit.Count, Math.round(aggregate.sums[name] * 100) / 100);
    }
    // Powertools writes the record by itself when a metric reaches 100 values: the 100th latency of a full aggregate.
    for (const latency of aggregate.latencies) this.metrics.addMetric('Latency', MetricUnit.Milliseconds, latency);
    if (this.metrics.hasStoredMetrics()) this.metrics.publishStoredMetrics();
  }
}

/** The instance's aggregates: one per process, which every handler family in it shares (the router serves them all). */
export const routeAggregates = new RouteAggregates();

const REQUEST_RECORD = 'request';

/** A request record (PLACEMENT_REQUEST_RECORDS): what the benchmarks and tests read of each request. */
export interface RequestRecord {
  record: typeof REQUEST_RECORD;
  requestId: string | undefined;
  route: string;
  status: number;
  Latency: number;
  ReadCapacityUnits: number;
  WriteCapacityUnits: number;
  itemsRead: number;
  /** DynamoDB requests, and those one after another (what AWS's latency multiplies): what a large change costs. */
  dynamoRequests: number;
  criticalPath: number;
}

/** The request record a line of a service's output holds, if it is one. */
export function parseRequestRecord(line: string): RequestRecord | undefined {
  if (!line.startsWith(`{"record":"${REQUEST_RECORD}"`)) return undefined;
  return JSON.parse(line) as RequestRecord;
}

export type MetricsWriter = (line: string) => void;

const toStdout: MetricsWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

function observe(request: LambdaRequest, latencyMs: number, aggregates: RouteAggregates, write: MetricsWriter): void {
  const placement = request.context.placement;
  const route = placement?.match?.route;
  const key = route ? routeKey(route) : '$default';
  const status = request.response?.statusCode ?? 500;
  const units = takeConsumedCapacity();
  const { requests, critical } = takeRequests();
  if (config.metrics) {
    aggregates.add(key, {
      latencyMs,
      ReadCapacityUnits: units.read,
      WriteCapacityUnits: units.write,
      ServerErrors: status >= 500 ? 1 : 0,
      Claims: route?.handler === 'allocations' && (route.method === 'PUT' || route.method === 'POST') && status < 300 ? 1 : 0,
      Conflicts: status === 409 ? 1 : 0,
    });
  }
  if (config.requestRecords) {
    const record: RequestRecord = {
      record: REQUEST_RECORD,
      requestId: placement?.requestId,
      route: key,
      status,
      Latency: Math.round(latencyMs * 100) / 100,
      ReadCapacityUnits: units.read,
      WriteCapacityUnits: units.write,
      itemsRead: units.items,
      dynamoRequests: requests,
      criticalPath: critical,
    };
    write(JSON.stringify(record));
  }
}

export const metrics = (aggregates: RouteAggregates = routeAggregates, write: MetricsWriter = toStdout): PlacementMiddleware => {
  const started = new WeakMap<LambdaRequest, number>();
  const end = (request: LambdaRequest) => {
    const start = started.get(request);
    if (start === undefined) return;
    started.delete(request);
    observe(request, performance.now() - start, aggregates, write);
  };
  return {
    before: (request: LambdaRequest) => {
      if (!config.metrics && !config.requestRecords) return;
      // Units consumed outside any request (module initialisation) are not this request's.
      takeConsumedCapacity();
      takeRequests();
      started.set(request, performance.now());
    },
    after: end,
    onError: end,
  };
};
