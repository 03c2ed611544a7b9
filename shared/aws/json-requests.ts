/**
 * Requests to an AWS service's JSON protocol (awsJson1_0, awsJson1_1) sent
 * by hand, the one way the service calls AWS without an SDK client: POST /
 * naming the operation in X-Amz-Target, signed with SigV4
 * (@smithy/signature-v4), over Node's http(s) with a keep-alive agent,
 * within time limits, retried as the SDK's "standard" mode retries, signed
 * at the service's time as the SDK corrects a clock that is off.
 *
 * Every DynamoDB request goes through it (shared/storage/dynamodb.ts), so
 * that no function carries the SDK's DynamoDB client (a third of a bundle)
 * nor pays the CPU of its command pipeline on every request; so does the
 * Keystone secret's read (shared/auth/secret-credentials.ts). A failed
 * answer is named as the SDK names it (`name`, `$fault`,
 * `$metadata.httpStatusCode`, and the members of the error's body, such as
 * DynamoDB's CancellationReasons), so the SDK's classification of what to
 * retry (isRetryable) reads it as it reads the SDK's own errors.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { Sha256 } from '@smithy/core/checksum';
import { isClockSkewCorrectedError, isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { SignatureV4 } from '@smithy/signature-v4';

type SignerInit = ConstructorParameters<typeof SignatureV4>[0];
type SdkError = Parameters<typeof isThrottlingError>[0];

/** The SDK's own classification of the errors it retries: throttling, timeouts, reset connections, 5xx, a signature refused before the clock was corrected. */
export const isRetryable = (error: unknown): boolean =>
  error instanceof Error &&
  (isClockSkewCorrectedError(error as SdkError) ||
    isThrottlingError(error as SdkError) ||
    isTransientError(error as SdkError) ||
    isServerError(error as SdkError));

/** Where a service answers and as whom to sign: what an SDK client's configuration resolves to. */
export interface ServiceLocation {
  /** Scheme, host and port; requests go to its root. */
  url: URL;
  region: string;
  credentials: SignerInit['credentials'];
  /** The signer's hash; by default @smithy/core's Node SHA-256, the SDK clients' own. */
  sha256?: SignerInit['sha256'];
}

/** An SDK client's resolved configuration, as far as a request sent by hand uses it. */
export interface SdkClientConfig {
  region: () => Promise<string>;
  /** Only when the client was given an endpoint. */
  endpoint?: () => Promise<{ protocol: string; hostname: string; port?: number }>;
  credentials: SignerInit['credentials'];
  sha256: SignerInit['sha256'];
}

/** Where and as whom the SDK client of `config` sends: the endpoint it was given, else `regional(region)`. */
export async function locationOf(config: SdkClientConfig, regional: (region: string) => URL | Promise<URL>): Promise<ServiceLocation> {
  const region = await config.region();
  const given = config.endpoint === undefined ? undefined : await config.endpoint();
  const url = given ? new URL(`${given.protocol}//${given.hostname}${given.port ? `:${given.port}` : ''}`) : await regional(region);
  return { url, region, credentials: config.credentials, sha256: config.sha256 };
}

export interface JsonServiceSettings {
  /** SigV4's name of the service: `dynamodb`, `secretsmanager`. */
  signingName: string;
  /** What X-Amz-Target puts before the operation's name: `DynamoDB_20120810`, `secretsmanager`. */
  targetPrefix: string;
  /** The protocol's version: DynamoDB speaks awsJson1_0, Secrets Manager awsJson1_1. */
  jsonVersion: '1.0' | '1.1';
  /** Resolved at the first request; a failed resolution is tried again by the next, not remembered. */
  locate: () => Promise<ServiceLocation>;
  /** Read at each request: the attempts at most, and each attempt's time limit (a third of it to connect). */
  maxAttempts: () => number | Promise<number>;
  attemptTimeoutMs: () => number;
  /** How the service's JSON is read where this module reads it (an error's body): JSON.parse unless given (DynamoDB's binary values). */
  parseJson?: (text: string) => unknown;
}

interface Connection {
  url: URL;
  signer: SignatureV4;
  agent: HttpAgent;
  request: typeof httpRequest;
}

/** The SDK's standard retry quota: a retry takes tokens (more after a timeout), a success gives some back; none left, no retry. */
const QUOTA_TOKENS = 500;
const RETRY_COST = 5;
const TIMEOUT_RETRY_COST = 10;
/** The SDK's standard backoff: full jitter under a ceiling doubling from 100 ms (500 ms when throttled) up to 20 s. */
const BASE_DELAY_MS = 100;
export const THROTTLED_BASE_DELAY_MS = 500;
export const MAX_DELAY_MS = 20_000;
/**
 * The SDK's clock skew correction: every answer's Date header sets the offset
 * its requests are signed with (unless a cache answered, Age, or the answer
 * took so long that its Date says nothing of now), and a failed answer that
 * moved it by this much or more is retried (a signature refused as expired
 * or not yet current, signed again at the service's time).
 */
const SKEW_CORRECTED_MS = 240_000;
const ANSWER_TOO_LATE_FOR_CLOCK_MS = 900_000;

/** One service's endpoint, with its connections and its retry quota, as an SDK client has them. */
export class JsonService {
  private connection: Promise<Connection> | undefined;
  private quotaTokens = QUOTA_TOKENS;
  /** The service's clock less ours, from its last answer's Date; requests are signed at our time plus this. */
  private clockOffsetMs = 0;

  constructor(private readonly settings: JsonServiceSettings) {}

  /**
   * Sends `operation` with its JSON `body` and returns the answer's text,
   * retried as the SDK would retry it; `signal` ends the whole of it, retries
   * and waits included, with the signal's reason.
   */
  async send(operation: string, body: string, signal?: AbortSignal): Promise<string> {
    this.connection ??= this.connect().catch((error: unknown) => {
      this.connection = undefined;
      throw error;
    });
    const target = await this.connection;
    for (let attempt = 1; ; attempt++) {
      try {
        signal?.throwIfAborted();
        const answer = await this.attempt(target, operation, body, signal);
        this.quotaTokens = Math.min(QUOTA_TOKENS, this.quotaTokens + (attempt > 1 ? RETRY_COST : 1));
        return answer;
      } catch (error) {
        signal?.throwIfAborted();
        const cost = (error as Error).name === 'TimeoutError' ? TIMEOUT_RETRY_COST : RETRY_COST;
        if (attempt >= (await this.settings.maxAttempts()) || !isRetryable(error) || this.quotaTokens < cost) throw error;
        this.quotaTokens -= cost;
        const base = isThrottlingError(error as SdkError) ? THROTTLED_BASE_DELAY_MS : BASE_DELAY_MS;
        // Only an abort ends the wait early.
        await sleep(Math.random() * Math.min(MAX_DELAY_MS, base * 2 ** (attempt - 1)), undefined, { signal }).catch(() => signal?.throwIfAborted());
      }
    }
  }

  private async connect(): Promise<Connection> {
    const { url, region, credentials, sha256 = Sha256 } = await this.settings.locate();
    const secure = url.protocol === 'https:';
    return {
      url,
      signer: new SignatureV4({ credentials, region, service: this.settings.signingName, sha256 }),
      agent: secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true }),
      request: secure ? httpsRequest : httpRequest,
    };
  }

  private async attempt(target: Connection, operation: string, body: string, signal: AbortSignal | undefined): Promise<string> {
    const { url } = target;
    const offsetBefore = this.clockOffsetMs;
    const sentAt = Date.now();
    const signed = await target.signer.sign(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: '/',
        query: {},
        headers: {
          host: url.host,
          'content-type': `application/x-amz-json-${this.settings.jsonVersion}`,
          'x-amz-target': `${this.settings.targetPrefix}.${operation}`,
          'content-length': String(Buffer.byteLength(body)),
        },
        body,
      },
      { signingDate: new Date(sentAt + offsetBefore) },
    );
    const { status, text, date, age } = await exchange(target, signed.headers, body, this.settings.attemptTimeoutMs(), signal);
    const serverTime = date === undefined ? NaN : Date.parse(date);
    const receivedAt = Date.now();
    if (age === undefined && !Number.isNaN(serverTime) && receivedAt - sentAt <= ANSWER_TOO_LATE_FOR_CLOCK_MS) this.clockOffsetMs = serverTime - receivedAt;
    if (status >= 200 && status < 300) return text;
    const error = serviceError(status, text, this.settings.parseJson ?? JSON.parse);
    if (Math.abs(this.clockOffsetMs) >= SKEW_CORRECTED_MS && this.clockOffsetMs !== offsetBefore) error.$metadata.clockSkewCorrected = true;
    throw error;
  }
}

/** One HTTP exchange within the attempt's limit: a third of it to connect, the whole of it for the answer. */
function exchange(
  target: Connection,
  headers: Record<string, string>,
  body: string,
  limitMs: number,
  signal: AbortSignal | undefined,
): Promise<{ status: number; text: string; date?: string; age?: string }> {
  return new Promise((resolve, reject) => {
    const request = target.request({
      agent: target.agent,
      protocol: target.url.protocol,
      hostname: target.url.hostname,
      port: target.url.port,
      method: 'POST',
      path: '/',
      headers,
      signal,
    });
    const timeout = (what: string, ms: number) => () => request.destroy(Object.assign(new Error(`${what} took more than ${ms} ms`), { name: 'TimeoutError' }));
    const answerTimer = setTimeout(timeout('The answer', limitMs), limitMs);
    const fail = (error: Error) => {
      clearTimeout(answerTimer);
      reject(error);
    };
    request.on('socket', (socket) => {
      if (!socket.connecting) return;
      const connectMs = Math.ceil(limitMs / 3);
      const connectTimer = setTimeout(timeout('Connecting', connectMs), connectMs);
      socket.once('connect', () => clearTimeout(connectTimer));
      socket.once('close', () => clearTimeout(connectTimer));
    });
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('end', () => {
        clearTimeout(answerTimer);
        const { date, age } = response.headers;
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), date, age });
      });
    });
    request.on('error', fail);
    request.end(body);
  });
}

/**
 * The service's error answer as the SDK names it (the part of `__type` after
 * '#'), with the status its retry classification reads and, as the SDK's
 * error objects have them, the other members of its body.
 */
function serviceError(
  status: number,
  text: string,
  parseJson: (text: string) => unknown,
): Error & { $metadata: { httpStatusCode: number; clockSkewCorrected?: boolean } } {
  let answer: { __type?: unknown; message?: unknown; Message?: unknown } = {};
  try {
    const parsed = parseJson(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) answer = parsed as typeof answer;
  } catch {
    // Not the service's JSON (a proxy's page): the status says what it is.
  }
  const { __type: type, ...members } = answer;
  const name = (typeof type === 'string' && type.split('#').pop()) || 'UnknownError';
  const message = String(answer.message ?? answer.Message ?? `HTTP ${status}`);
  return Object.assign(new Error(message), members, { name, message, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
}
