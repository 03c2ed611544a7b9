/**
 * The two front doors of a synthesized stack, as AWS runs them in front of
 * the functions, driven by what the template says (local/bundles/cloud-assembly.ts):
 *
 * - the HTTP API: the route API Gateway selects (the most specific route
 *   key, else `$default`), the Lambda authorizer (REQUEST, payload 2.0) with
 *   its identity sources and its cache, the integration's function; and API
 *   Gateway's own answers where it gives them: 401 for a missing identity
 *   source, 403 for an authorizer's "no", 500 when the authorizer or the
 *   function fails, 404 for a request no route takes;
 * - the function URL: every request to the one function, in the URL's event
 *   shape (no route key, no path parameters, no authorizer); 502 when it fails.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { authorizerEvent, toEvent, type Dispatch, type HttpRequest, type SelectedRoute } from '../api-gateway-adapter.js';
import type { Authorizer, HttpRoute } from './cloud-assembly.js';
import type { Invocation } from './lambda-function.js';

/** Invokes a function of the stack by logical id. */
export type Invoke = (functionId: string, event: unknown) => Promise<Invocation>;

const gatewayAnswer = (statusCode: number, message: string): APIGatewayProxyStructuredResultV2 => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message }),
});

/** A function's answer as the front door passes it on: a result without a status code is a 200 JSON body (payload 2.0). */
function toResult(result: unknown): APIGatewayProxyStructuredResultV2 {
  if (typeof result === 'object' && result !== null && 'statusCode' in result) return result as APIGatewayProxyStructuredResultV2;
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: typeof result === 'string' ? result : JSON.stringify(result) };
}

interface CompiledRoute {
  route: HttpRoute;
  method: string;
  pattern: RegExp;
  names: string[];
  /** Literal segments: the more, the more specific. */
  literals: number;
  greedy: boolean;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function compile(route: HttpRoute): CompiledRoute | undefined {
  if (route.routeKey === '$default') return undefined;
  const [method, path] = route.routeKey.split(' ') as [string, string];
  const names: string[] = [];
  const segments = path.split('/').slice(1);
  const source = segments
    .map((segment) => {
      const variable = /^\{(\w+)(\+?)\}$/.exec(segment);
      if (variable === null) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(variable[1]!);
      return variable[2] ? '(.+)' : '([^/]+)';
    })
    .join('/');
  return {
    route,
    method,
    pattern: new RegExp(`^/${source}$`),
    names,
    literals: segments.filter((segment) => !segment.startsWith('{')).length,
    greedy: path.includes('+}'),
  };
}

/** API Gateway's HTTP API in front of the stack's functions. */
export function httpApiDispatch(routes: HttpRoute[], authorizer: Authorizer | undefined, invoke: Invoke): Dispatch {
  const compiled = routes
    .map(compile)
    .filter((route) => route !== undefined)
    .sort((a, b) => b.literals - a.literals || Number(a.greedy) - Number(b.greedy));
  const fallback = routes.find((route) => route.routeKey === '$default');

  /** The route API Gateway selects: the most specific key that matches, else `$default`. */
  const select = (method: string, path: string): { route: HttpRoute; selected: SelectedRoute } | undefined => {
    for (const candidate of compiled) {
      if (candidate.method !== method && candidate.method !== 'ANY') continue;
      const match = candidate.pattern.exec(path);
      if (match === null) continue;
      const params = Object.fromEntries(candidate.names.map((name, index) => [name, decodeSegment(match[index + 1]!)]));
      return { route: candidate.route, selected: { key: candidate.route.routeKey, params: candidate.names.length > 0 ? params : undefined } };
    }
    return fallback === undefined ? undefined : { route: fallback, selected: { key: '$default' } };
  };

  const cache = new Map<string, { expires: number; context: unknown }>();

  /** The authorizer's context for the request, or the answer API Gateway gives instead. */
  async function authorize(event: APIGatewayProxyEventV2): Promise<{ context: unknown } | { answer: APIGatewayProxyStructuredResultV2 }> {
    const { functionId, identitySource, cacheTtlSeconds } = authorizer!;
    const identity = identitySource.map((source) => {
      const header = /^\$request\.header\.(.+)$/.exec(source)?.[1];
      return header === undefined ? undefined : event.headers[header.toLowerCase()];
    });
    if (identity.some((value) => value === undefined || value === '')) return { answer: gatewayAnswer(401, 'Unauthorized') };
    const key = JSON.stringify(identity);
    const cached = cacheTtlSeconds > 0 && identity.length > 0 ? cache.get(key) : undefined;
    if (cached !== undefined && cached.expires > Date.now()) return { context: cached.context };
    const invocation = await invoke(functionId, authorizerEvent(event, identity as string[]));
    if (!invocation.ok) return { answer: gatewayAnswer(500, 'Internal Server Error') };
    const result = invocation.result as { isAuthorized?: unknown; context?: unknown } | null;
    if (typeof result?.isAuthorized !== 'boolean') return { answer: gatewayAnswer(500, 'Internal Server Error') };
    if (!result.isAuthorized) return { answer: gatewayAnswer(403, 'Forbidden') };
    if (cacheTtlSeconds > 0 && identity.length > 0) cache.set(key, { expires: Date.now() + cacheTtlSeconds * 1000, context: result.context });
    return { context: result.context };
  }

  return async (request: HttpRequest, body: string | undefined) => {
    const chosen: { route?: HttpRoute } = {};
    const event = toEvent(request, body, (method, path) => {
      const selection = select(method, path);
      chosen.route = selection?.route;
      return selection?.selected ?? { key: '$default' };
    });
    const { route } = chosen;
    if (route === undefined) return gatewayAnswer(404, 'Not Found');
    let authorized = event;
    if (route.authorized) {
      const outcome = await authorize(event);
      if ('answer' in outcome) return outcome.answer;
      authorized = { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: outcome.context } } } as APIGatewayProxyEventV2;
    }
    const invocation = await invoke(route.functionId, authorized);
    return invocation.ok ? toResult(invocation.result) : gatewayAnswer(500, 'Internal Server Error');
  };
}

const FUNCTION_URL_ID = 'local0function0url0000000000000';

/**
 * The event a function URL (auth type NONE) hands its function: payload 2.0
 * with the URL's own requestContext. Lambda adds the X-Forwarded headers;
 * the host is the one the client asked for (here this machine, over plain
 * HTTP), so that the links the handlers build lead back here.
 */
export function functionUrlEvent(request: HttpRequest, body: string | undefined): APIGatewayProxyEventV2 {
  const apiEvent = toEvent(request, body, () => ({ key: '$default' }));
  const now = new Date();
  const { http } = apiEvent.requestContext;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: apiEvent.rawPath,
    rawQueryString: apiEvent.rawQueryString,
    headers: { ...apiEvent.headers, 'x-forwarded-proto': 'http', 'x-forwarded-for': http.sourceIp },
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'anonymous',
      apiId: FUNCTION_URL_ID,
      domainName: apiEvent.requestContext.domainName,
      domainPrefix: FUNCTION_URL_ID,
      http,
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
  };
}

/** A Lambda function URL in front of one function; 502 when it fails, as Lambda answers. */
export function functionUrlDispatch(functionId: string, invoke: Invoke): Dispatch {
  return async (request: HttpRequest, body: string | undefined) => {
    const invocation = await invoke(functionId, functionUrlEvent(request, body));
    return invocation.ok
      ? toResult(invocation.result)
      : { statusCode: 502, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Message: null }) };
  };
}
