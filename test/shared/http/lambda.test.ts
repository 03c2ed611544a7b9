import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { operations as traits } from '../../../functions/traits.js';
import { lambdaHandler } from '../../../shared/http/lambda.js';
import { DependencyUnavailable } from '../../../shared/storage/errors.js';

const event = {
  version: '2.0',
  routeKey: '$default',
  rawPath: '/traits',
  rawQueryString: '',
  headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' },
  isBase64Encoded: false,
  requestContext: { http: { method: 'GET', path: '/traits', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' } },
} as unknown as APIGatewayProxyEventV2;

const contextWith = (remainingMs: number) => ({ awsRequestId: 'test', getRemainingTimeInMillis: () => remainingMs }) as unknown as Context;

function expectUnavailable(response: { statusCode?: number; headers?: Record<string, unknown>; body?: string }) {
  expect(response.statusCode).toBe(503);
  expect(response.headers?.['retry-after']).toBe('1');
  expect(JSON.parse(response.body!).errors[0]).toMatchObject({ status: 503, title: 'Service Unavailable', code: 'placement.undefined_code' });
}

describe('a database that cannot serve the request', () => {
  it('is a 503 with Retry-After, not a 500', async () => {
    const handler = lambdaHandler<'traits'>({
      ...traits,
      'GET /traits': async () => {
        throw new DependencyUnavailable('DynamoDB failed: ThrottlingException');
      },
    });
    expectUnavailable(await handler(event, contextWith(30_000)));
  });

  it('is a 503 shortly before the function would time out, rather than a timeout', async () => {
    const handler = lambdaHandler<'traits'>({ ...traits, 'GET /traits': () => new Promise(() => {}) });
    const started = performance.now();
    expectUnavailable(await handler(event, contextWith(1_000)));
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
