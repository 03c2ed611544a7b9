/**
 * The request as handlers see it: built once per invocation from the API
 * Gateway (payload 2.0) event by the request-context middleware, then filled
 * in by the other middlewares (version, identity).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { Microversion, MIN_VERSION } from '../api/microversion.js';
import { QueryString } from '../api/query-string.js';
import { matchRoute, type RouteMatch } from './route-matcher.js';
import type { JsonSchema } from '../api/json-schema.js';
import { validateBody } from './validation.js';
import { readJsonBody } from './json-body.js';
import type { Identity } from '../domain/policy.js';

export class PlacementRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly query: QueryString;
  readonly params: Record<string, string>;
  readonly match: RouteMatch | undefined;
  readonly rawBody: string | undefined;
  version: Microversion = Microversion.parse(MIN_VERSION);
  /** False until the microversion middleware accepted the header. */
  versionKnown = false;
  identity: Identity | undefined;
  /** What our API Gateway Lambda authorizer found (requestContext.authorizer.lambda), when the request passed one. */
  readonly authorizerContext: Record<string, unknown> | undefined;

  constructor(
    readonly requestId: string,
    event: APIGatewayProxyEventV2,
  ) {
    this.method = event.requestContext.http.method.toUpperCase();
    this.path = event.rawPath;
    this.headers = Object.fromEntries(Object.entries(event.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v ?? '']));
    this.query = QueryString.parse(event.rawQueryString ?? '');
    this.match = matchRoute(this.method, this.path);
    this.params = this.match?.params ?? {};
    this.authorizerContext = (event.requestContext as { authorizer?: { lambda?: Record<string, unknown> } }).authorizer?.lambda;
    this.rawBody =
      event.body === undefined || event.body === null ? undefined : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  }

  header(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }

  param(name: string): string {
    return this.params[name] ?? '';
  }

  isAtLeast(version: string): boolean {
    return this.version.isAtLeast(version);
  }

  isBefore(version: string): boolean {
    return this.version.isBefore(version);
  }

  /** The JSON body, parsed and validated against the schema of this microversion (see json-body.ts for the bounds). */
  json<T>(schema: JsonSchema): T {
    return readJsonBody(this.rawBody ?? '', (body) => validateBody(schema, body)) as T;
  }

  /** Scheme and host the client used, for absolute Location headers. */
  get baseUrl(): string {
    const proto = this.header('x-forwarded-proto') ?? 'http';
    return `${proto}://${this.header('host') ?? 'localhost'}`;
  }
}
