/**
 * The local stand-in for API Gateway: turns a Node HTTP request into an HTTP
 * API payload 2.0 event, picks the Lambda handler the route table names (the
 * root handler answers unmatched paths, like the $default route in AWS), and
 * writes the handler's result back.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { matchRoute } from '../../shared/http/router.js';
import { routeKey, type HandlerName } from '../../shared/http/routes.js';
import type { PlacementHandler } from '../../shared/http/lambda.js';

export type HandlerModules = Record<HandlerName, PlacementHandler>;

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
}

export function toEvent(request: IncomingMessage, body: string | undefined): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const method = (request.method ?? 'GET').toUpperCase();
  const match = matchRoute(method, url.pathname);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const key = match ? routeKey(match.route) : '$default';
  const now = new Date();
  return {
    version: '2.0',
    routeKey: key,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    pathParameters: match?.params,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: key,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
  };
}

function lambdaContext(name: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `placement-${name}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:placement-${name}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/placement-${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A Node request listener that serves the API through the Lambda handlers. */
export function apiGatewayAdapter(handlers: HandlerModules) {
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    try {
      const event = toEvent(request, await readBody(request));
      const match = matchRoute(event.requestContext.http.method, event.rawPath);
      const name: HandlerName = match?.route.handler ?? 'root';
      const result = await handlers[name](event, lambdaContext(name));
      response.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
      response.end(result.body ?? '');
    } catch (error) {
      // The handlers map every error to a response; reaching here is a bug in the adapter itself.
      console.error(error);
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('adapter error');
    }
  };
}
