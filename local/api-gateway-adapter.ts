/**
 * The local stand-in for API Gateway: turns a Node HTTP request into an HTTP
 * API payload 2.0 event, runs the Lambda authorizer on every route but the
 * public GET / (as the deployed API does), picks the Lambda handler the route
 * table names (the root handler answers unmatched paths and CORS preflights,
 * like the $default route in AWS), and writes the handler's result back.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { handler as authorizer } from '../functions/authorizer.js';
import { handlerFor, matchRoute } from '../shared/http/route-matcher.js';
import { routeKey, type HandlerName } from '../shared/http/routes.js';
import type { PlacementHandler } from '../shared/http/types.js';
import { config } from '../shared/config.js';

export type HandlerModules = Record<HandlerName, PlacementHandler>;

/** API Gateway's payload limit for HTTP APIs: a larger body never reaches a function. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

class PayloadTooLarge extends Error {}

/** The body, or PayloadTooLarge as soon as it passes API Gateway's limit (the rest is not read). */
async function readBody(request: IncomingMessage): Promise<string | undefined> {
  if (Number(request.headers['content-length']) > MAX_PAYLOAD_BYTES) throw new PayloadTooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) throw new PayloadTooLarge();
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
}

/** What the adapter needs of an HTTP request (Node's, or one parsed from raw bytes). */
export interface HttpRequest {
  method: string;
  url: string;
  httpVersion: string;
  /** Lower-case names; repeated headers joined with ",". */
  headers: Record<string, string>;
  remoteAddress: string | undefined;
}

function fromIncoming(request: IncomingMessage): HttpRequest {
  const headers = Object.fromEntries(
    Object.entries(request.headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(',') : value]])),
  );
  return { method: request.method ?? 'GET', url: request.url ?? '/', httpVersion: request.httpVersion, headers, remoteAddress: request.socket.remoteAddress };
}

/**
 * The path and query string of a request target exactly as sent, as API
 * Gateway passes them: no dot segments resolved, and "//x" is a path, not a
 * host (as URL would read them).
 */
function splitTarget(target: string): { path: string; query: string } {
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i.exec(target)?.[0] ?? '';
  const rest = target.slice(origin.length) || '/';
  const mark = rest.indexOf('?');
  return mark < 0 ? { path: rest, query: '' } : { path: rest.slice(0, mark), query: rest.slice(mark + 1) };
}

/** The route API Gateway picked for a request: its key and path parameters. */
export interface SelectedRoute {
  key: string;
  params?: Record<string, string>;
}

/** The route the route table gives a request; `$default` when none matches. */
function routeFromTable(method: string, path: string): SelectedRoute {
  const match = matchRoute(method, path);
  return match ? { key: routeKey(match.route), params: match.params } : { key: '$default' };
}

/**
 * The payload 2.0 event API Gateway hands the function of the request's
 * route, chosen from the route table unless `selectRoute` (the bundle
 * runtime's, from the template's routes) chooses it.
 */
export function toEvent(
  request: HttpRequest,
  body: string | undefined,
  selectRoute: (method: string, path: string) => SelectedRoute = routeFromTable,
): APIGatewayProxyEventV2 {
  const { path, query } = splitTarget(request.url);
  const method = request.method.toUpperCase();
  const { key, params } = selectRoute(method, path);
  const headers = request.headers;
  const now = new Date();
  return {
    version: '2.0',
    routeKey: key,
    rawPath: path,
    rawQueryString: query,
    headers,
    pathParameters: params,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method,
        path,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.remoteAddress ?? '127.0.0.1',
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
    // Lambda's longest timeout unless configured: middy fails a request that outlives it.
    getRemainingTimeInMillis: () => config.localRequestSeconds * 1000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The event API Gateway sends a REQUEST authorizer (payload 2.0, simple responses) for a request. */
export function authorizerEvent(event: APIGatewayProxyEventV2, identitySource: string[]) {
  return {
    version: '2.0',
    type: 'REQUEST' as const,
    routeArn: `arn:aws:execute-api:local:000000000000:local/$default/${event.routeKey.replace(' ', '')}`,
    identitySource,
    routeKey: event.routeKey,
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString,
    cookies: [],
    headers: event.headers,
    pathParameters: event.pathParameters,
    requestContext: event.requestContext,
  };
}

/** Runs our authorizer like API Gateway does and puts its context where API Gateway puts it. */
async function authorize(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyEventV2> {
  const { context } = await authorizer(authorizerEvent(event, []));
  return { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: context } } } as APIGatewayProxyEventV2;
}

/** What answers a request: the handlers in this process, or the deployed bundles (local/bundles/runtime.ts). */
export type Dispatch = (request: HttpRequest, body: string | undefined) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway in front of the handlers of this process: the authorizer, then the route table's handler. */
export function inProcessDispatch(handlers: HandlerModules): Dispatch {
  return async (request, body) => {
    const event = toEvent(request, body);
    const match = matchRoute(event.requestContext.http.method, event.rawPath);
    // As in the deployed API (infra/constructs/api.ts): only a route without a policy rule skips the authorizer.
    const isPublic = match !== undefined && match.route.policy === undefined;
    const name = handlerFor(event.requestContext.http.method, event.rawPath);
    return handlers[name](isPublic ? event : await authorize(event), lambdaContext(name));
  };
}

/** The bytes API Gateway sends for a function's result (a base64 body is decoded). */
const resultBody = (result: APIGatewayProxyStructuredResultV2): Buffer => Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');

/** A Node request listener that serves the API through a front door's dispatch. */
export function requestListener(dispatch: Dispatch) {
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    try {
      const result = await dispatch(fromIncoming(request), await readBody(request));
      const body = resultBody(result);
      // API Gateway sends a length, not chunks, as upstream does.
      response.writeHead(result.statusCode ?? 200, { ...(result.headers as Record<string, string>), 'content-length': String(body.length) });
      response.end(body);
    } catch (error) {
      if (error instanceof PayloadTooLarge) {
        // API Gateway's own answer; the connection closes as the rest of the body is not read.
        response.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
        response.end('{"message":"Request Entity Too Large"}');
        return;
      }
      // The handlers map every error to a response; reaching here is a bug in the adapter itself.
      console.error(error);
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('adapter error');
    }
  };
}

/** The request line and headers of a request Node's parser refused, or undefined when they cannot be read either. */
function parseRawRequest(packet: Buffer, remoteAddress: string | undefined): HttpRequest | undefined {
  const head = packet.toString('latin1').split('\r\n\r\n')[0]!;
  const [requestLine = '', ...lines] = head.split('\r\n');
  const start = /^([A-Z]+) (\S+) HTTP\/(\d\.\d)$/.exec(requestLine);
  if (start === null) return undefined;
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const earlier = headers.get(name);
    headers.set(name, earlier === undefined ? value : `${earlier},${value}`);
  }
  return { method: start[1]!, url: start[2]!, httpVersion: start[3]!, headers: Object.fromEntries(headers), remoteAddress };
}

/** Node's bounds for a request's head (http's default maxHeaderSize and headersTimeout), kept for a refused one that arrives in pieces. */
const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_TIMEOUT_MS = 60_000;

/** Node's own bare answer to a request it cannot parse. */
function bareAnswer(socket: Duplex, error: Error & { code?: string }): void {
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
}

/**
 * Node's HTTP parser refuses a request whose Content-Length is not a number
 * before any listener sees it; upstream answers it with Placement's own 400
 * (after authentication and the microversion, like any request). Such a
 * request is re-read from its raw bytes and answered through the handlers,
 * without its body (which cannot be delimited), and the connection closed.
 * Other parse errors get Node's usual bare answer.
 *
 * The error's rawPacket holds only what the socket had delivered when the
 * parser failed: the head may still be arriving (a client's writes, TCP
 * segments). Once failed, the parser reports every later chunk of the
 * connection as the same error, its rawPacket that chunk: those chunks
 * complete the head (up to its blank line, within Node's bounds for a head)
 * before it is read, and once it is answered they are the body, dropped.
 * So the answer does not depend on how the request was cut on the way.
 */
export function clientErrorHandler(dispatch: Dispatch) {
  /** Per connection: the refused request's head so far, or "answered" once it went to the handlers. */
  const refused = new WeakMap<Duplex, Buffer | 'answered'>();

  const answer = (head: Buffer, socket: Duplex & { remoteAddress?: string }, error: Error): void => {
    refused.set(socket, 'answered');
    const request = parseRawRequest(head, socket.remoteAddress);
    if (request === undefined) {
      bareAnswer(socket, error);
      return;
    }
    dispatch(request, undefined).then(
      (result) => {
        const body = resultBody(result);
        const status = result.statusCode ?? 200;
        const headers = Object.entries(result.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`);
        socket.end(
          Buffer.concat([
            Buffer.from(
              `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${headers.join('')}content-length: ${body.length}\r\nconnection: close\r\n\r\n`,
              'latin1',
            ),
            body,
          ]),
        );
      },
      (failure) => {
        console.error(failure);
        socket.destroy();
      },
    );
  };

  return (error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex & { remoteAddress?: string }): void => {
    const earlier = refused.get(socket);
    if (error.code === 'ECONNRESET' || (earlier !== 'answered' && !socket.writable)) {
      socket.destroy();
      return;
    }
    if (earlier === 'answered') return;
    if (earlier === undefined) {
      // What the client is still sending (a body, the rest of an oversized head) is read and dropped while the request
      // is answered: closing a socket with unread data resets it, and the client can lose the answer (seen with a
      // handler's cold start, and with Node 24's 431 to a head of hundreds of kilobytes).
      socket.resume();
      if (error.code !== 'HPE_INVALID_CONTENT_LENGTH' || error.rawPacket === undefined) {
        refused.set(socket, 'answered');
        bareAnswer(socket, error);
        return;
      }
    }
    const head = earlier === undefined ? error.rawPacket! : Buffer.concat([earlier, error.rawPacket ?? Buffer.alloc(0)]);
    if (head.includes('\r\n\r\n') || head.length > MAX_HEAD_BYTES) {
      answer(head, socket, error);
      return;
    }
    refused.set(socket, head);
    if (earlier !== undefined) return;
    const timer = setTimeout(() => {
      const held = refused.get(socket);
      if (held instanceof Buffer && socket.writable) answer(held, socket, error);
    }, HEAD_TIMEOUT_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}
