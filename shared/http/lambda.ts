/**
 * Builds a Lambda handler for one family of routes: the middy middleware
 * chain every Placement request goes through, then the operation the route
 * table names. Operations are plain functions from a PlacementRequest to a
 * Reply; they throw HttpError for anything that is not a success.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { PlacementRequest } from './request.js';
import type { Operation, Operations, PlacementContext, PlacementHandler, Reply } from './types.js';
import { serviceUnavailable } from '../api/errors.js';
import { logger } from './logger.js';
import { unmatchedRouteError } from './route-matcher.js';
import { routeKey, type HandlerName } from './routes.js';
import { requestContext } from './middleware/request-context.js';
import { errorResponse } from './middleware/error-response.js';
import { cors } from './middleware/cors.js';
import { authenticate } from './middleware/authenticate.js';
import { microversion } from './middleware/microversion.js';
import { requestGuards } from './middleware/request-guards.js';
import { authorize } from './middleware/authorize.js';
import { cacheHeaders } from './middleware/cache-headers.js';
import { metrics } from './middleware/metrics.js';
import { responseSize } from './middleware/response-size.js';
import { trackConsumedCapacity } from '../storage/consumed-capacity.js';
import { withDeadline } from '../storage/deadline.js';

/** How long before Lambda's timeout middy gives up on the operation and answers 503. */
const TIMEOUT_EARLY_MS = 250;

function toResult(reply: Reply, request: PlacementRequest): APIGatewayProxyStructuredResultV2 {
  const headers: Record<string, string> = { ...reply.headers };
  const lastModified = reply.lastModified === undefined && reply.status === 200 ? new Date() : reply.lastModified;
  if (lastModified && request.isAtLeast('1.15')) headers['last-modified'] = lastModified.toUTCString();
  if (reply.body === undefined && reply.json === undefined) return { statusCode: reply.status, headers, body: '' };
  return {
    statusCode: reply.status,
    headers: { 'content-type': 'application/json', ...headers },
    body: reply.json ?? JSON.stringify(reply.body),
  };
}

export function lambdaHandler<H extends HandlerName>(operations: Operations<H>): PlacementHandler {
  const byRouteKey: Readonly<Record<string, Operation | undefined>> = operations;
  // Shortly before the function would time out, middy abandons the operation (a slow or unreachable
  // DynamoDB) and the error middleware answers 503, where Lambda would leave API Gateway a 5xx of its own.
  const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, PlacementContext>({
    timeoutEarlyInMillis: TIMEOUT_EARLY_MS,
    timeoutEarlyResponse: () => {
      throw serviceUnavailable('The request could not be completed in time. Please retry.');
    },
  })
    .use(metrics())
    // Powertools' own middleware: every log line gets the function's name, memory, ARN, request id and cold start;
    // the request id and microversion clients see are added where they become known (request context, microversion).
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(responseSize())
    .use(requestContext())
    .use(cors())
    .use(errorResponse())
    .use(authenticate())
    .use(microversion())
    .use(cacheHeaders())
    .use(requestGuards())
    .use(authorize())
    .handler(async (_event, context) => {
      const request = context.placement!;
      const operation = request.match ? byRouteKey[routeKey(request.match.route)] : undefined;
      if (operation === undefined) throw unmatchedRouteError(request.method, request.path);
      return toResult(await operation(request), request);
    });
  // Each invocation counts its DynamoDB units apart (the local server runs many at once in one process), and its
  // storage knows the invocation's deadline (a multi-step change acts on it before middy's early answer).
  return (event, context) =>
    trackConsumedCapacity(() => withDeadline(Date.now() + context.getRemainingTimeInMillis() - TIMEOUT_EARLY_MS, () => handler(event, context)));
}
