import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as rootHandler } from '../../../../functions/root.js';
import { errorResponse } from '../../../../shared/http/middleware/error-response.js';
import { metrics, METRICS_NAMESPACE } from '../../../../shared/http/middleware/metrics.js';
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

/** The parts of the real chain the record reads from, around an operation that consumes what it is told. */
function chain(lines: string[], operation: () => Promise<APIGatewayProxyStructuredResultV2>) {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PlacementContext>()
    .use(metrics((line) => lines.push(line)))
    .use(requestContext())
    .use(errorResponse())
    .use(microversion())
    .handler(operation);
}

const saved = { ...process.env };
beforeEach(() => {
  process.env.PLACEMENT_METRICS = 'true';
  process.env.PLACEMENT_STAGE = 'unit';
  takeConsumedCapacity();
});
afterEach(() => {
  process.env = { ...saved };
  vi.restoreAllMocks();
});

describe('the metrics middleware', () => {
  /** The metrics a record declares: what CloudWatch extracts from it. */
  const declared = (record: any): string[] => record._aws.CloudWatchMetrics.flatMap((directive: any) => directive.Metrics.map((metric: any) => metric.Name));

  it('writes one small embedded-metric-format record per request', async () => {
    const lines: string[] = [];
    // In the scope lambdaHandler opens for each invocation, outside which requests are not kept.
    const response = await trackConsumedCapacity(() =>
      chain(lines, async () => {
        recordConsumedCapacity({ TableName: 'placement', CapacityUnits: 1.5 }, 'read');
        recordConsumedCapacity([{ TableName: 'placement', CapacityUnits: 8 }], 'write');
        // Two requests at once, then one after them.
        recordRequest(1, 2);
        recordRequest(1.5, 3);
        recordRequest(3, 4);
        return { statusCode: 204, body: '' };
      })(event('PUT', '/allocations/7b0d8a1e-5f0c-4c1a-9d55-3a1c2a0e6f10', { 'openstack-api-version': 'placement 1.39' }), context),
    );

    expect(lines).toHaveLength(1);
    const record = JSON.parse(lines[0]!);
    expect(record._aws.Timestamp).toBeTypeOf('number');
    expect(record._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: METRICS_NAMESPACE,
        Dimensions: [['Stage']],
        Metrics: [{ Name: 'ReadCapacityUnits' }, { Name: 'WriteCapacityUnits' }, { Name: 'Claims' }],
      },
    ]);
    // Every declared metric is a top-level number, as EMF requires.
    for (const name of declared(record)) expect(record[name], name).toBeTypeOf('number');
    expect(record).toEqual({
      _aws: record._aws,
      Stage: 'unit',
      ReadCapacityUnits: 1.5,
      WriteCapacityUnits: 8,
      Claims: 1,
      Latency: expect.any(Number),
      route: 'PUT /allocations/{consumer_uuid}',
      status: 204,
      requestId: response.headers!['x-openstack-request-id'],
      itemsRead: 0,
      dynamoRequests: 3,
      criticalPath: 2,
    });
    expect(record.Latency).toBeGreaterThanOrEqual(0);
  });

  it('declares read units on every record and the other metrics only when they are not 0', async () => {
    const lines: string[] = [];
    await chain(lines, async () => {
      recordConsumedCapacity({ CapacityUnits: 0.5 }, 'read');
      return { statusCode: 200, body: '' };
    })(event('GET', '/allocations/7b0d8a1e-5f0c-4c1a-9d55-3a1c2a0e6f10'), context);
    const record = JSON.parse(lines[0]!);
    // One read-units sample per request: its sample count is the request count the dashboard divides by.
    expect(declared(record)).toEqual(['ReadCapacityUnits']);
    expect(record).toMatchObject({ ReadCapacityUnits: 0.5, WriteCapacityUnits: 0, status: 200 });
    expect(record.Claims).toBeUndefined();
    // About a third of what it was (726 bytes for this request before, docs/operators/observability.md).
    expect(Buffer.byteLength(lines[0]!)).toBeLessThan(400);
  });

  it('counts a concurrent update as a conflict and not as a claim', async () => {
    const lines: string[] = [];
    const response = await chain(lines, async () => {
      throw new ConcurrentUpdate();
    })(event('POST', '/allocations'), context);
    expect(response.statusCode).toBe(409);
    const record = JSON.parse(lines[0]!);
    expect(declared(record)).toEqual(['ReadCapacityUnits', 'Conflicts']);
    expect(record).toMatchObject({ Conflicts: 1, status: 409, route: 'POST /allocations' });
    expect(record.Claims).toBeUndefined();
  });

  it('records a crash as status 500', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    await chain(lines, async () => {
      throw new Error('boom');
    })(event('GET', '/resource_providers'), context);
    expect(JSON.parse(lines[0]!)).toMatchObject({ status: 500, route: 'GET /resource_providers' });
  });

  it('names unmatched paths $default', async () => {
    const lines: string[] = [];
    await chain(lines, async () => ({ statusCode: 404, body: '' }))(event('GET', '/nowhere'), context);
    expect(JSON.parse(lines[0]!)).toMatchObject({ route: '$default', status: 404 });
  });

  it('writes nothing and leaves the unit totals alone when metrics are off', async () => {
    process.env.PLACEMENT_METRICS = 'false';
    const lines: string[] = [];
    await chain(lines, async () => {
      recordConsumedCapacity({ CapacityUnits: 2 }, 'write');
      return { statusCode: 200, body: '' };
    })(event('GET', '/traits'), context);
    expect(lines).toEqual([]);
    expect(takeConsumedCapacity().write).toBe(2);
  });

  it('is part of every handler: the record goes to stdout after the whole chain', async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const response = await rootHandler(event('GET', '/'), context);
    const records = written.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line));
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
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
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
    const records = written.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line));
    expect(records.map((record) => record.ReadCapacityUnits).sort((a, b) => a - b)).toEqual([2, 20]);
  });
});
