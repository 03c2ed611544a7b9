/**
 * One CloudWatch embedded-metric-format (EMF) record per request, written to
 * stdout, where Lambda's log pipeline turns it into metrics: the DynamoDB
 * units the request consumed, successful claims and 409 conflicts, the
 * numbers only the handlers know (request counts, errors and latency come
 * from the front door's and Lambda's own metrics). The same line carries
 * what the benchmarks and an operator chasing a request id need: route,
 * status, handler latency, request id, items read, DynamoDB requests.
 *
 * It is kept small because every request pays for its bytes (CloudWatch Logs
 * ingestion): units are the only metric declared on every record (so the
 * sample count of ReadCapacityUnits is the request count), the others only
 * when non-zero (their sums are what the dashboard shows), no units, nothing
 * the front door's access log already says. Records are not batched across
 * requests: Lambda freezes an instance between requests and may reclaim it
 * without warning, so whatever a batch held would be lost or arrive late.
 *
 * Registered first in the chain, so its `after`/`onError` run last and see
 * the final response. The unit totals are per invocation (lambdaHandler
 * scopes them), so they stay right under the local server's concurrency; the
 * record is off outside Lambda unless PLACEMENT_METRICS asks for it.
 */
import { config } from '../../config.js';
import { takeConsumedCapacity, takeRequests } from '../../storage/consumed-capacity.js';
import { routeKey } from '../routes.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export const METRICS_NAMESPACE = 'Placement';

/** Every metric a record may declare (dimension `Stage`, no unit). */
export const REQUEST_METRICS = ['ReadCapacityUnits', 'WriteCapacityUnits', 'Claims', 'Conflicts'] as const;
export type RequestMetric = (typeof REQUEST_METRICS)[number];

export type MetricsWriter = (line: string) => void;

const toStdout: MetricsWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

function record(request: LambdaRequest, latencyMs: number): Record<string, unknown> {
  const placement = request.context.placement;
  const route = placement?.match?.route;
  const status = request.response?.statusCode ?? 500;
  const units = takeConsumedCapacity();
  const { requests, critical } = takeRequests();
  const values: Partial<Record<RequestMetric, number>> = { ReadCapacityUnits: units.read };
  if (units.write > 0) values.WriteCapacityUnits = units.write;
  if (route?.handler === 'allocations' && (route.method === 'PUT' || route.method === 'POST') && status < 300) values.Claims = 1;
  if (status === 409) values.Conflicts = 1;
  return {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: [['Stage']], Metrics: Object.keys(values).map((Name) => ({ Name })) }],
    },
    Stage: config.stage,
    ...values,
    // A plain field when it is 0 and so not declared: the benchmarks read every record's units.
    WriteCapacityUnits: units.write,
    Latency: Math.round(latencyMs * 100) / 100,
    route: route ? routeKey(route) : '$default',
    status,
    requestId: placement?.requestId,
    itemsRead: units.items,
    // DynamoDB requests, and those one after another (what AWS's latency multiplies): what a large change costs.
    dynamoRequests: requests,
    criticalPath: critical,
  };
}

export const metrics = (write: MetricsWriter = toStdout): PlacementMiddleware => {
  const started = new WeakMap<LambdaRequest, number>();
  const emit = (request: LambdaRequest) => {
    const start = started.get(request);
    if (start === undefined) return;
    started.delete(request);
    write(JSON.stringify(record(request, performance.now() - start)));
  };
  return {
    before: (request: LambdaRequest) => {
      if (!config.metrics) return;
      // Units consumed outside any request (module initialisation) are not this request's.
      takeConsumedCapacity();
      takeRequests();
      started.set(request, performance.now());
    },
    after: emit,
    onError: emit,
  };
};
