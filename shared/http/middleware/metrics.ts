/**
 * One CloudWatch embedded-metric-format (EMF) record per request, written to
 * stdout, where Lambda's log pipeline turns it into metrics: latency, 4xx,
 * 5xx, 409 conflicts, claims, and the DynamoDB units the request consumed.
 * The record is also the request's access log line (request id, route,
 * status, microversion).
 *
 * Registered first in the chain, so its `after`/`onError` run last and see
 * the final response. The unit totals are per invocation (lambdaHandler
 * scopes them), so they stay right under the local server's concurrency; the
 * record is off outside Lambda unless PLACEMENT_METRICS asks for it.
 */
import type middy from '@middy/core';
import { config } from '../../config.js';
import { takeConsumedCapacity } from '../../storage/consumed-capacity.js';
import { routeKey } from '../routes.js';
import type { LambdaRequest } from '../types.js';

export const METRICS_NAMESPACE = 'Placement';

/** Metric name to EMF unit. Error classes are 0 or 1 per request, so their Average is a rate. */
export const REQUEST_METRICS = {
  Latency: 'Milliseconds',
  '4xx': 'Count',
  '5xx': 'Count',
  Conflicts: 'Count',
  Claims: 'Count',
  ReadCapacityUnits: 'Count',
  WriteCapacityUnits: 'Count',
} as const;

export type MetricsWriter = (line: string) => void;

const toStdout: MetricsWriter = (line) => {
  process.stdout.write(`${line}\n`);
};

/** The embedded-metric-format declaration, the same for every record. */
const METRIC_DEFINITIONS = [
  { Namespace: METRICS_NAMESPACE, Dimensions: [['Stage']], Metrics: Object.entries(REQUEST_METRICS).map(([Name, Unit]) => ({ Name, Unit })) },
];

function record(request: LambdaRequest, latencyMs: number): Record<string, unknown> {
  const placement = request.context.placement;
  const route = placement?.match?.route;
  const status = request.response?.statusCode ?? 500;
  const units = takeConsumedCapacity();
  const values: Record<keyof typeof REQUEST_METRICS, number> = {
    Latency: Math.round(latencyMs * 100) / 100,
    '4xx': status >= 400 && status < 500 ? 1 : 0,
    '5xx': status >= 500 ? 1 : 0,
    Conflicts: status === 409 ? 1 : 0,
    Claims: route?.handler === 'allocations' && (route.method === 'PUT' || route.method === 'POST') && status < 300 ? 1 : 0,
    ReadCapacityUnits: units.read,
    WriteCapacityUnits: units.write,
  };
  return {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: METRIC_DEFINITIONS,
    },
    Stage: config.stage,
    ...values,
    requestId: placement?.requestId,
    route: route ? routeKey(route) : '$default',
    method: placement?.method,
    path: placement?.path,
    status,
    microversion: placement?.versionKnown ? placement.version.toString() : undefined,
    itemsRead: units.items,
  };
}

export const metrics = (write: MetricsWriter = toStdout): middy.MiddlewareObj => {
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
      started.set(request, performance.now());
    },
    after: emit,
    onError: emit,
  } as middy.MiddlewareObj;
};
