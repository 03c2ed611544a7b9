/**
 * CORS as upstream's oslo.middleware CORS filter does it, outermost but for
 * the request id: an allowed Origin is echoed on every response (errors
 * included), others get no CORS headers at all. No route answers OPTIONS, so
 * a preflight always ends in an error further in (401 or 405); like upstream,
 * that error becomes an empty 200, with the preflight headers only when the
 * origin, method and headers asked for are all allowed.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { commaSeparated, config } from '../../config.js';
import type { PlacementRequest } from '../request.js';
import type { LambdaRequest, PlacementMiddleware } from '../types.js';

export interface CorsOptions {
  allowedOrigins: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
  allowMethods: string[];
  allowCredentials: boolean;
  maxAge: number;
}

/** Headers a browser may always send (CORS "simple" request headers, as oslo lists them). */
const SIMPLE_HEADERS = ['cache-control', 'content-language', 'content-type', 'expires', 'last-modified', 'pragma'];

/** The origin to echo: the request's when listed, "*" when a wildcard is listed, else undefined (not allowed). */
function allowedOrigin(options: CorsOptions, origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  if (options.allowedOrigins.includes(origin)) return origin;
  return options.allowedOrigins.includes('*') ? '*' : undefined;
}

function preflightHeaders(options: CorsOptions, request: PlacementRequest): Record<string, string> {
  const origin = allowedOrigin(options, request.header('origin'));
  const method = request.header('access-control-request-method');
  if (origin === undefined || method === undefined || !options.allowMethods.includes(method)) return {};
  const requested = commaSeparated(request.header('access-control-request-headers'));
  const permitted = new Set([...options.allowHeaders.map((header) => header.toLowerCase()), ...SIMPLE_HEADERS]);
  if (!requested.every((header) => permitted.has(header.toLowerCase()))) return {};
  return {
    vary: 'Origin',
    'access-control-allow-origin': origin,
    ...(options.allowCredentials ? { 'access-control-allow-credentials': 'true' } : {}),
    ...(options.maxAge ? { 'access-control-max-age': String(options.maxAge) } : {}),
    'access-control-allow-methods': method,
    ...(requested.length > 0 ? { 'access-control-allow-headers': requested.join(',') } : {}),
  };
}

function addRequestHeaders(options: CorsOptions, request: PlacementRequest, response: APIGatewayProxyStructuredResultV2): void {
  const origin = allowedOrigin(options, request.header('origin'));
  if (origin === undefined) return;
  const headers = { ...response.headers };
  const vary = Object.keys(headers).find((name) => name.toLowerCase() === 'vary');
  if (vary === undefined) headers.vary = 'Origin';
  else headers[vary] = `${headers[vary]},Origin`;
  headers['access-control-allow-origin'] = origin;
  if (options.allowCredentials) headers['access-control-allow-credentials'] = 'true';
  if (options.exposeHeaders.length > 0) headers['access-control-expose-headers'] = options.exposeHeaders.join(',');
  response.headers = headers;
}

function corsOptionsFromConfig(): CorsOptions {
  return {
    allowedOrigins: config.corsAllowedOrigins,
    allowHeaders: config.corsAllowHeaders,
    exposeHeaders: config.corsExposeHeaders,
    allowMethods: config.corsAllowMethods,
    allowCredentials: config.corsAllowCredentials,
    maxAge: config.corsMaxAge,
  };
}

/** Must come before the error middleware in the chain, so that it sees the error responses it makes. */
export const cors = (options: CorsOptions = corsOptionsFromConfig()): PlacementMiddleware => {
  const decorate = (request: LambdaRequest) => {
    const placement = request.context.placement;
    // Without an allowed origin upstream does not install the filter at all: OPTIONS stays 405.
    if (options.allowedOrigins.length === 0 || placement === undefined || !request.response) return;
    if (placement.method === 'OPTIONS') {
      request.response = { statusCode: 200, headers: preflightHeaders(options, placement), body: '' };
    } else {
      addRequestHeaders(options, placement, request.response);
    }
  };
  return { after: decorate, onError: decorate };
};
