/**
 * The one HTTP client of placement-admin, the tests and the benchmarks: any
 * Placement API (this service, upstream, a proxy in between) over node:http.
 *
 * Written on node:http rather than fetch because the tools must send exactly
 * the bytes they mean: fetch adds `content-type: text/plain` to a string body
 * and refuses some headers, which would hide the differences the
 * differential tester looks for. Connections are kept alive, as nova's
 * keystoneauth session does. A gzip-compressed answer (to a request that
 * sent Accept-Encoding, as nova's does) is decoded, as python-requests
 * decodes it.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { gunzipSync } from 'node:zlib';

export interface ClientDefaults {
  /** x-auth-token; noauth2's `admin` unless given (null: send none). */
  token?: string | null;
  /** The microversion for `openstack-api-version: placement <version>`; none unless given. */
  version?: string | null;
  /** Further headers sent with every request. */
  headers?: Record<string, string>;
  /** Give up on a request after this long (default 120 s). */
  timeoutMs?: number;
  /**
   * Send a GET again, at most this many more times, when it got no answer or
   * a 502/503/504 (a proxy or the service briefly unavailable). Writes are
   * never sent twice: one whose fate is unknown is for the caller to settle.
   * Default 0: the tests want to see every answer as it came.
   */
  retries?: number;
  /** Told of every answer, e.g. to count the requests a tool sent. */
  onResponse?: (method: string, path: string, response: ApiResponse) => void;
}

export interface RequestOptions {
  /** Serialised as JSON, with `content-type: application/json` unless a content-type header is given. */
  json?: unknown;
  /** Sent exactly as given, with no content-type unless a header says one. */
  rawBody?: string | Buffer;
  /** Replace or add headers; a null value removes a default header. */
  headers?: Record<string, string | null>;
  /** The microversion of this request (null: no version header). */
  version?: string | null;
  timeoutMs?: number;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** The body as text, decoded (empty when there is none). */
  text: string;
  /** The bytes of the body as they came over the wire (compressed, when they were). */
  wireBytes: number;
  /** The body parsed as JSON; undefined when it is empty or not JSON. */
  body: any;
  /** From sending the request until its whole body arrived. */
  ms: number;
}

/** The server closed a kept-alive connection as the request went out on it (Node's documented case for a retry). */
class StaleConnection extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
    this.name = 'StaleConnection';
  }
}

/** Answers of a proxy or a service that is briefly unavailable: worth sending again. */
const RETRIED_STATUSES = new Set([502, 503, 504]);

/**
 * Waits before retry number `attempt` (0 for the first), longer each time: random up to `baseMs` × 2^attempt, at most
 * `maxMs` ("full jitter", as the service's own retry policy waits), so that parallel workers spread out.
 */
export const backOff = (attempt: number, { baseMs = 200, maxMs = 5000 } = {}): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(maxMs, baseMs * 2 ** attempt)));

const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 64 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }) };

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class PlacementClient {
  readonly baseUrl: string;
  private readonly defaults: ClientDefaults;

  constructor(baseUrl: string, defaults: ClientDefaults = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.defaults = defaults;
  }

  /** A client for the same service with some defaults changed. */
  with(defaults: ClientDefaults): PlacementClient {
    return new PlacementClient(this.baseUrl, { ...this.defaults, ...defaults, headers: { ...this.defaults.headers, ...defaults.headers } });
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const retries = method === 'GET' ? (this.defaults.retries ?? 0) : 0;
    for (let attempt = 0; ;) {
      let response: ApiResponse;
      try {
        response = await this.send(method, path, options);
      } catch (error) {
        // A kept-alive connection the server had closed: the request never reached it, so any method may go again, on the
        // next pooled connection (uWSGI closes them all when it recycles its worker) or a new one, which is never stale.
        if (error instanceof StaleConnection) continue;
        if (attempt >= retries) throw error;
        await backOff(attempt++);
        continue;
      }
      this.defaults.onResponse?.(method, path, response);
      if (!RETRIED_STATUSES.has(response.status) || attempt >= retries) return response;
      await backOff(attempt++);
    }
  }

  private send(method: string, path: string, options: RequestOptions): Promise<ApiResponse> {
    const url = new URL(`${this.baseUrl}${path}`);
    const headers: Record<string, string> = {};
    const token = this.defaults.token === undefined ? 'admin' : this.defaults.token;
    if (token !== null) headers['x-auth-token'] = token;
    const version = options.version === undefined ? this.defaults.version : options.version;
    if (version != null) headers['openstack-api-version'] = `placement ${version}`;
    Object.assign(headers, this.defaults.headers);
    let body: string | Buffer | undefined = options.rawBody;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      for (const existing of Object.keys(headers)) if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
      if (value !== null) headers[name] = value;
    }
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const timeoutMs = options.timeoutMs ?? this.defaults.timeoutMs ?? 120_000;
    const https = url.protocol === 'https:';
    const started = performance.now();
    return new Promise<ApiResponse>((resolve, reject) => {
      const send = https ? httpsRequest : httpRequest;
      const outgoing = send(url, { method, headers, agent: https ? agents.https : agents.http }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const wire = Buffer.concat(chunks);
          let text: string;
          try {
            text = (incoming.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire).toString('utf8');
          } catch (error) {
            reject(error as Error);
            return;
          }
          resolve({
            status: incoming.statusCode ?? 0,
            headers: toHeaders(incoming.headers),
            text,
            wireBytes: wire.length,
            body: parseJson(text),
            ms: performance.now() - started,
          });
        });
      });
      outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`${method} ${url.href}: no answer within ${timeoutMs} ms`)));
      outgoing.on('error', (error: NodeJS.ErrnoException) => reject(outgoing.reusedSocket && error.code === 'ECONNRESET' ? new StaleConnection(error) : error));
      outgoing.end(body);
    });
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }
  delete(path: string, options?: RequestOptions) {
    return this.request('DELETE', path, options);
  }
  put(path: string, json: unknown, options?: RequestOptions) {
    return this.request('PUT', path, { ...options, json });
  }
  post(path: string, json: unknown, options?: RequestOptions) {
    return this.request('POST', path, { ...options, json });
  }
}

/**
 * The tests' short form: `call(method, path, body?, headers?)`. Without a
 * token default it sends none, as the tests expect of a bare client.
 */
export function client(baseUrl: string, defaults: { token?: string; version?: string; timeoutMs?: number } = {}) {
  const placement = new PlacementClient(baseUrl, { token: defaults.token ?? null, version: defaults.version ?? null, timeoutMs: defaults.timeoutMs });
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> =>
    placement.request(method, path, { json: body, headers });
}
