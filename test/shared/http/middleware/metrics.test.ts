import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as rootHandler } from '../../../../functions/root.js';
import { errorResponse } from '../../../../shared/http/middleware/error-response.js';
import {
  FLUSH_AFTER_MS,
  FLUSH_EVERY_REQUESTS,
  metrics,
  METRICS_NAMESPACE,
  parseRequestRecord,
  REQUEST_METRIC_DIMENSIONS,
  REQUEST_METRICS,
  RouteAggregates,
} from '../../../../shared/http/middleware/metrics.js';
import { microversion } from '../../../../shared/http/middleware/microversion.js';
import { requestContext } from '../../../../shared/http/middleware/request-context.js';
import { lambdaHandler } from '../../../../shared/http/lambda.js';
import { operations as traitsOperations } from '../../../../functions/traits.js';
import type { PlacementContext } from '../../../../shared/http/types.js';
import {
  recordConsumedCapacity,
  recordRequest,
  takeConsumedCapacity,
  takeRequests,
  trackConsumedCapacity,
} from '../../../../shared/storage/consumed-capacity.js';
import { ConcurrentUpdate } from '../../../../shared/storage/errors.js';

function event(method: string, path: string, headers: Record<string, string> = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'x-auth-token': 'admin', ...headers },
    isBase64Encoded: false,
    requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' } },
  } as unknown as APIGatewayProxyEventV2;
}

const context = { awsRequestId: 'test', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

/** The parts of the real chain the metrics read from, around an operation; records go to `lines`, aggregates to stdout. */
function chain(aggregates: RouteAggregates, lines: string[], operation: () => Promise<APIGatewayProxyStructuredResultV2>) {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PlacementContext>()
    .use(metrics(aggregates, (line) => lines.push(line)))
    .use(requestContext())
    .use(errorResponse())
    .use(microversion())
    .handler(operation);
}

/** The lines written to stdout meanwhile (Powertools writes the aggregates there). */
function captureStdout(): string[] {
  const written: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(
      ...String(chunk)
        .split('\n')
        .filter((line) => line !== ''),
    );
    return true;
  });
  return written;
}
const aggregatesIn = (written: string[]) => written.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line));

const saved = { ...process.env };
beforeEach(() => {
  process.env.PLACEMENT_METRICS = 'true';
  process.env.PLACEMENT_REQUEST_RECORDS = 'false';
  process.env.PLACEMENT_STAGE = 'unit';
  takeConsumedCapacity();
});
afterEach(() => {
  process.env = { ...saved };
  vi.restoreAllMocks();
});

const CLAIM = '/allocations/7b0d8a1e-5f0c-4c1a-9d55-3a1c2a0e6f10';

describe('the metrics middleware', () => {
  /** The metrics an aggregate declares: what CloudWatch extracts from it. */
  const declared = (record: any): string[] => record._aws.CloudWatchMetrics.flatMap((directive: any) => directive.Metrics.map((metric: any) => metric.Name));

  it('writes one embedded-metric record per route for every 100 requests of it, and nothing before', async () => {
    const stdout = captureStdout();
    const aggregates = new RouteAggregates();
    const claim = chain(aggregates, [], async () => {
      recordConsumedCapacity({ TableName: 'placement', CapacityUnits: 1.5 }, 'read');
      recordConsumedCapacity([{ TableName: 'placement', CapacityUnits: 8 }], 'write');
      return { statusCode: 204, body: '' };
    });
    const read = chain(aggregates, [], async () => {
      recordConsumedCapacity({ CapacityUnits: 0.5 }, 'read');
      return { statusCode: 200, body: '' };
    });
    for (let n = 1; n < FLUSH_EVERY_REQUESTS; n++) await claim(event('PUT', CLAIM, { 'openstack-api-version': 'placement 1.39' }), context);
    for (let n = 1; n <= 3; n++) await read(event('GET', CLAIM), context);
    expect(aggregatesIn(stdout)).toEqual([]);
    await claim(event('PUT', CLAIM, { 'openstack-api-version': 'placement 1.39' }), context);

    const written = aggregatesIn(stdout);
    expect(written).toHaveLength(1);
    const record = written[0];
    expect(record._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: METRICS_NAMESPACE,
        Dimensions: [[...REQUEST_METRIC_DIMENSIONS]],
        Metrics: [
          { Name: 'ReadCapacityUnits', Unit: 'Count' },
          { Name: 'WriteCapacityUnits', Unit: 'Count' },
          { Name: 'Claims', Unit: 'Count' },
          { Name: 'Latency', Unit: 'Milliseconds' },
        ],
      },
    ]);
    expect(record).toMatchObject({ Stage: 'unit', Route: 'PUT /allocations/{consumer_uuid}', ReadCapacityUnits: 150, WriteCapacityUnits: 800, Claims: 100 });
    expect(record.Latency).toHaveLength(FLUSH_EVERY_REQUESTS);
    // Only the stack's dimensions (no Powertools `service`), and every declared metric one the stack knows.
    expect(record.service).toBeUndefined();
    for (const name of declared(record)) expect(REQUEST_METRICS).toContain(name);
    // About 14 bytes a request where a record per request took about 360 (docs/operators/observability.md).
    expect(Buffer.byteLength(JSON.stringify(record)) / FLUSH_EVERY_REQUESTS).toBeLessThan(20);

    // The other route's 3 requests wait for their hundredth, or for the minute.
    aggregates.flush();
    const rest = aggregatesIn(stdout).slice(1);
    expect(rest).toHaveLength(1);
    expect(declared(rest[0])).toEqual(['ReadCapacityUnits', 'Latency']);
    expect(rest[0]).toMatchObject({ Route: 'GET /allocations/{consumer_uuid}', ReadCapacityUnits: 1.5 });
    expect(rest[0].Latency).toHaveLength(3);
  });

  it("writes a route's requests at the first request a minute after the oldest of them", async () => {
    const stdout = captureStdout();
    let now = 0;
    const aggregates = new RouteAggregates(() => now);
    const answer = chain(aggregates, [], async () => ({ statusCode: 200, body: '' }));
    await answer(event('GET', '/traits', { 'openstack-api-version': 'placement 1.6' }), context);
    now = FLUSH_AFTER_MS - 1;
    await answer(event('GET', '/traits', { 'openstack-api-version': 'placement 1.6' }), context);
    expect(aggregatesIn(stdout)).toEqual([]);
    now = FLUSH_AFTER_MS;
    await answer(event('GET', '/nowhere'), context);
    // The minute is up for /traits (its two requests), not for the request that found it so.
    expect(aggregatesIn(stdout).map((record) => [record.Route, record.Latency])).toEqual([['GET /traits', [expect.any(Number), expect.any(Number)]]]);
  });

  it('counts a concurrent update as a conflict, a crash as a server error, never as claims', async () => {
    const stdout = captureStdout();
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const aggregates = new RouteAggregates();
    await chain(aggregates, [], async () => {
      throw new ConcurrentUpdate();
    })(event('POST', '/allocations'), context);
    await chain(aggregates, [], async () => {
      throw new Error('boom');
    })(event('GET', '/resource_providers'), context);
    aggregates.flush();
    const written = aggregatesIn(stdout);
    expect(written.find((record) => record.Route === 'POST /allocations')).toMatchObject({ Conflicts: 1 });
    expect(written.find((record) => record.Route === 'POST /allocations').Claims).toBeUndefined();
    expect(written.find((record) => record.Route === 'GET /resource_providers')).toMatchObject({ ServerErrors: 1 });
  });

  it('writes a plain record per request when asked, with what the benchmarks read', async () => {
    process.env.PLACEMENT_METRICS = 'false';
    process.env.PLACEMENT_REQUEST_RECORDS = 'true';
    const stdout = captureStdout();
    const lines: string[] = [];
    const aggregates = new RouteAggregates();
    // In the scope lambdaHandler opens for each invocation, outside which requests are not kept.
    const response = await trackConsumedCapacity(() =>
      chain(aggregates, lines, async () => {
        recordConsumedCapacity({ CapacityUnits: 0.5 }, 'read');
        // Two DynamoDB requests at once, then one after them.
        recordRequest(1, 2);
        recordRequest(1.5, 3);
        recordRequest(3, 4);
        return { statusCode: 200, body: '' };
      })(event('GET', CLAIM), context),
    );
    aggregates.flush();
    expect(aggregatesIn(stdout)).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(parseRequestRecord(lines[0]!)).toEqual({
      record: 'request',
      requestId: response.headers!['x-openstack-request-id'],
      route: 'GET /allocations/{consumer_uuid}',
      status: 200,
      Latency: expect.any(Number),
      ReadCapacityUnits: 0.5,
      WriteCapacityUnits: 0,
      itemsRead: 0,
      dynamoRequests: 3,
      criticalPath: 2,
    });
    expect(parseRequestRecord('{"_aws":{}}')).toBeUndefined();
  });

  it('names unmatched paths $default', async () => {
    process.env.PLACEMENT_REQUEST_RECORDS = 'true';
    const lines: string[] = [];
    await chain(new RouteAggregates(), lines, async () => ({ statusCode: 404, body: '' }))(event('GET', '/nowhere'), context);
    expect(parseRequestRecord(lines[0]!)).toMatchObject({ route: '$default', status: 404 });
  });

  it('writes nothing and leaves the unit totals alone when metrics and records are off', async () => {
    process.env.PLACEMENT_METRICS = 'false';
    const stdout = captureStdout();
    const lines: string[] = [];
    const aggregates = new RouteAggregates();
    await chain(aggregates, lines, async () => {
      recordConsumedCapacity({ CapacityUnits: 2 }, 'write');
      return { statusCode: 200, body: '' };
    })(event('GET', '/traits'), context);
    aggregates.flush();
    expect(lines).toEqual([]);
    expect(aggregatesIn(stdout)).toEqual([]);
    expect(takeConsumedCapacity().write).toBe(2);
  });

  it('is part of every handler: its request record goes to stdout after the whole chain', async () => {
    process.env.PLACEMENT_REQUEST_RECORDS = 'true';
    const stdout = captureStdout();
    const response = await rootHandler(event('GET', '/'), context);
    const records = stdout.map(parseRequestRecord).filter((record) => record !== undefined);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ route: 'GET /', status: 200, requestId: response.headers!['x-openstack-request-id'] });
  });
});

describe('consumed capacity', () => {
  it('files a bare CapacityUnits total under the kind of call that reported it', () => {
    recordConsumedCapacity({ CapacityUnits: 3 }, 'read');
    recordConsumedCapacity({ CapacityUnits: 10 }, 'write');
    recordConsumedCapacity({ CapacityUnits: 6, ReadCapacityUnits: 2, WriteCapacityUnits: 4 }, 'write');
    expect(takeConsumedCapacity()).toEqual({ read: 5, write: 14, items: 0 });
  });

  it('counts the requests on the critical path: the longest chain of requests each sent after the previous was answered', () => {
    trackConsumedCapacity(() => {
      // Thirty-two at once, then a worker of the pool sends one more as soon as its first is answered, twice over.
      for (let n = 0; n < 32; n++) recordRequest(0, 10 + n);
      recordRequest(10, 50);
      recordRequest(50, 60);
      expect(takeRequests()).toEqual({ requests: 34, critical: 3 });
      expect(takeRequests()).toEqual({ requests: 0, critical: 0 });
    });
    // Outside a request's scope nothing is kept.
    recordRequest(0, 1);
    expect(takeRequests()).toEqual({ requests: 0, critical: 0 });
  });

  it('keeps the units of requests served at the same time apart', async () => {
    process.env.PLACEMENT_REQUEST_RECORDS = 'true';
    const written = captureStdout();
    // Each request reads its `units` twice, with the other request's reads in between.
    const handler = lambdaHandler<'traits'>({
      ...traitsOperations,
      'GET /traits': async (request) => {
        const units = Number(request.query.get('units'));
        recordConsumedCapacity({ CapacityUnits: units }, 'read');
        await new Promise((resolve) => setTimeout(resolve, 20));
        recordConsumedCapacity({ CapacityUnits: units }, 'read');
        return { status: 200, body: {} };
      },
    });
    const request = (units: number) =>
      handler({ ...event('GET', '/traits', { 'openstack-api-version': 'placement 1.6' }), rawQueryString: `units=${units}` }, { ...context });
    await Promise.all([request(1), request(10)]);
    const records = written.map(parseRequestRecord).filter((record) => record !== undefined);
    expect(records.map((record) => record.ReadCapacityUnits).sort((a, b) => a - b)).toEqual([2, 20]);
  });
});
