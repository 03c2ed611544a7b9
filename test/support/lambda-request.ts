/** A middy request as the chain hands it to a middleware, built from an API Gateway (payload 2.0) event. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { PlacementRequest } from '../../shared/http/request.js';
import type { LambdaRequest, PlacementContext } from '../../shared/http/types.js';

export interface EventShape {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  query?: string;
  body?: string;
  authorizer?: Record<string, string>;
}

export function apiGatewayEvent({ method = 'GET', path = '/', headers = {}, query = '', body, authorizer }: EventShape = {}): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query,
    headers,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'placement.example.com',
      domainPrefix: 'placement',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
      requestId: 'apigw-request',
      routeKey: '$default',
      stage: '$default',
      time: '23/Nov/2026:00:00:00 +0000',
      timeEpoch: 0,
      ...(authorizer ? { authorizer: { lambda: authorizer } } : {}),
    },
  };
}

export function lambdaContext(): PlacementContext {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'placement-traits',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:placement-traits',
    memoryLimitInMB: '512',
    awsRequestId: 'lambda-request',
    logGroupName: '/aws/lambda/placement-traits',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The request before any middleware ran. */
export function freshRequest(shape: EventShape = {}): LambdaRequest {
  return { event: apiGatewayEvent(shape), context: lambdaContext(), response: null, error: null, internal: {} };
}

/** The request after the request-context middleware ran: `context.placement` built from the event. */
export function lambdaRequest(shape: EventShape = {}): LambdaRequest {
  const request = freshRequest(shape);
  request.context.placement = new PlacementRequest('req-test', request.event);
  return request;
}

/** The error a `before` step throws, or undefined when it lets the request through. */
export async function thrownBy(step: () => unknown): Promise<unknown> {
  try {
    await step();
  } catch (error) {
    return error;
  }
  return undefined;
}
