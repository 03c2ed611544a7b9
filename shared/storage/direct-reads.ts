/**
 * DynamoDB's reads (GetItem, BatchGetItem, Query) sent as signed HTTP
 * requests of their own rather than through the SDK's command pipeline.
 *
 * By hand for the CPU time: per request the SDK resolves its middleware
 * stack, its endpoint rules and its schema serde, about 0.9 ms of CPU on
 * this machine where the signed request itself takes 0.4
 * (docs/operators/cost.md, "The polled reads"). Nine in ten requests nova
 * sends are polls of one or two reads, and Lambda bills CPU time at a
 * fraction of a vCPU.
 *
 * Writes, transactions and tables keep the SDK client (client.ts). This
 * takes its credentials, region, endpoint and hash from that client's
 * configuration and keeps its contract: the storage format check, the
 * request count, the SDK's own classification of what is retryable, its
 * backoff and retry quota ("standard" mode), the attempt's time limits, and
 * DependencyUnavailable for what outlasts them. Items go in and come out as
 * the document client gives them (util-dynamodb's conversion, which the
 * document client uses too).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { isThrottlingError } from '@smithy/core/retry';
import { config } from '../config.js';
import { asStorageFailure, dynamo, formatClient, isDependencyFailure } from './client.js';
import { recordRequest } from './consumed-capacity.js';
import { checkStorageFormat } from './storage-format.js';

type ReadOperation = 'GetItem' | 'BatchGetItem' | 'Query';

/** DynamoDB's typed attribute values, as its requests and answers hold them. */
type Typed = Parameters<typeof unmarshall>[0];
type Native = Record<string, NativeAttributeValue>;
const typed = (values: Native): Typed => marshall(values, { removeUndefinedValues: true });
const native = (values: Typed): Native => unmarshall(values);
const nativeOrNone = (values: Typed | undefined): Native | undefined => (values === undefined ? undefined : native(values));

/** GetItem, as the document client's GetCommand takes and answers it. */
export async function get(input: GetCommandInput): Promise<Pick<GetCommandOutput, 'Item' | 'ConsumedCapacity'>> {
  const answer = (await sendRead('GetItem', { ...input, Key: typed(input.Key ?? {}) })) as { Item?: Typed; ConsumedCapacity?: ConsumedCapacity };
  return { Item: nativeOrNone(answer.Item), ConsumedCapacity: answer.ConsumedCapacity };
}

type BatchReads<Key> = Record<string, { Keys?: Key[] } & Omit<NonNullable<BatchGetCommandInput['RequestItems']>[string], 'Keys'>>;

/** Each table's keys converted, the rest of its read as it was. */
function convertKeys<From, To>(reads: BatchReads<From>, convert: (key: From) => To): BatchReads<To> {
  return Object.fromEntries(Object.entries(reads).map(([table, read]) => [table, { ...read, Keys: read.Keys?.map(convert) }]));
}

/** BatchGetItem, as the document client's BatchGetCommand takes and answers it. */
export async function batchGet(input: BatchGetCommandInput): Promise<Pick<BatchGetCommandOutput, 'Responses' | 'UnprocessedKeys' | 'ConsumedCapacity'>> {
  const answer = (await sendRead('BatchGetItem', { ...input, RequestItems: convertKeys(input.RequestItems ?? {}, typed) })) as {
    Responses?: Record<string, Typed[]>;
    UnprocessedKeys?: BatchReads<Typed>;
    ConsumedCapacity?: ConsumedCapacity[];
  };
  return {
    Responses: Object.fromEntries(Object.entries(answer.Responses ?? {}).map(([table, items]) => [table, items.map(native)])),
    UnprocessedKeys: answer.UnprocessedKeys && (convertKeys(answer.UnprocessedKeys, native) as BatchGetCommandOutput['UnprocessedKeys']),
    ConsumedCapacity: answer.ConsumedCapacity,
  };
}

/** Query, as the document client's QueryCommand takes and answers it. */
export async function query(input: QueryCommandInput): Promise<Pick<QueryCommandOutput, 'Items' | 'ScannedCount' | 'LastEvaluatedKey' | 'ConsumedCapacity'>> {
  const answer = (await sendRead('Query', {
    ...input,
    ExpressionAttributeValues: input.ExpressionAttributeValues && typed(input.ExpressionAttributeValues),
    ExclusiveStartKey: input.ExclusiveStartKey && typed(input.ExclusiveStartKey),
  })) as { Items?: Typed[]; ScannedCount?: number; LastEvaluatedKey?: Typed; ConsumedCapacity?: ConsumedCapacity };
  return {
    Items: answer.Items?.map(native),
    ScannedCount: answer.ScannedCount,
    LastEvaluatedKey: nativeOrNone(answer.LastEvaluatedKey),
    ConsumedCapacity: answer.ConsumedCapacity,
  };
}

interface Connection {
  url: URL;
  signer: SignatureV4;
  agent: HttpAgent;
  request: typeof httpRequest;
}

let connection: Promise<Connection> | undefined;

/** Where and how to send, from the SDK client's configuration (credentials, region, endpoint, hash), once per process. */
async function connect(): Promise<Connection> {
  const sdk = dynamo().config;
  const region = await sdk.region();
  // The endpoint the client was given (DynamoDB Local), else the region's by the SDK's rules.
  const given = sdk.endpoint === undefined ? undefined : await sdk.endpoint();
  const url = given ? new URL(`${given.protocol}//${given.hostname}${given.port ? `:${given.port}` : ''}`) : sdk.endpointProvider({ Region: region }).url;
  const signer = new SignatureV4({ credentials: sdk.credentials, region, service: 'dynamodb', sha256: sdk.sha256 });
  const secure = url.protocol === 'https:';
  return {
    url,
    signer,
    agent: secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true }),
    request: secure ? httpsRequest : httpRequest,
  };
}

/** The SDK's standard retry quota: a retry takes tokens (more after a timeout), a success gives some back; none left, no retry. */
const QUOTA_TOKENS = 500;
const quota = { tokens: QUOTA_TOKENS };
const RETRY_COST = 5;
const TIMEOUT_RETRY_COST = 10;
/** The SDK's standard backoff: full jitter under a ceiling doubling from 100 ms (500 ms when throttled) up to 20 s. */
const BASE_DELAY_MS = 100;
const THROTTLED_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;

/**
 * Sends one read and returns DynamoDB's answer (its JSON, attribute values
 * in DynamoDB's typed form), retried as the SDK would retry it.
 */
async function sendRead(operation: ReadOperation, input: object): Promise<Record<string, unknown>> {
  const sent = performance.now();
  try {
    await checkStorageFormat(formatClient());
    // A failed setup is tried again by the next read, not remembered.
    connection ??= connect().catch((error: unknown) => {
      connection = undefined;
      throw error;
    });
    const target = await connection;
    const body = toJson(input);
    for (let attempt = 1; ; attempt++) {
      try {
        const answer = await attemptRead(target, operation, body);
        quota.tokens = Math.min(QUOTA_TOKENS, quota.tokens + (attempt > 1 ? RETRY_COST : 1));
        return answer;
      } catch (error) {
        const cost = (error as Error).name === 'TimeoutError' ? TIMEOUT_RETRY_COST : RETRY_COST;
        if (attempt >= config.dynamoDbMaxAttempts || !isDependencyFailure(error) || quota.tokens < cost) throw error;
        quota.tokens -= cost;
        const base = isThrottlingError(error as never) ? THROTTLED_BASE_DELAY_MS : BASE_DELAY_MS;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_DELAY_MS, base * 2 ** (attempt - 1))));
      }
    }
  } catch (error) {
    throw asStorageFailure(error);
  } finally {
    recordRequest(sent, performance.now());
  }
}

async function attemptRead(target: Connection, operation: ReadOperation, body: string): Promise<Record<string, unknown>> {
  const { url } = target;
  const signed = await target.signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: '/',
    query: {},
    headers: {
      host: url.host,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `DynamoDB_20120810.${operation}`,
      'content-length': String(Buffer.byteLength(body)),
    },
    body,
  });
  const { status, text } = await exchange(target, signed.headers, body);
  if (status >= 200 && status < 300) return fromJson(text);
  throw serviceError(status, text);
}

/** A request's JSON: DynamoDB's JSON carries binary values as base64, where the SDK's conversion gives bytes. */
function toJson(input: object): string {
  return JSON.stringify(input, function (this: Record<string, unknown>, key: string, value: unknown) {
    const original = this[key];
    return original instanceof Uint8Array ? Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64') : value;
  });
}

const bytesOf = (base64: string): Uint8Array => new Uint8Array(Buffer.from(base64, 'base64'));

/** An answer, its binary values (`B`, `BS`: base64 in DynamoDB's JSON) as bytes, as the SDK gives them; answers without any parse plainly. */
function fromJson(text: string): Record<string, unknown> {
  if (!text.includes('"B":') && !text.includes('"BS":')) return JSON.parse(text) as Record<string, unknown>;
  return JSON.parse(text, (key, value: unknown) => {
    if (key === 'B' && typeof value === 'string') return bytesOf(value);
    if (key === 'BS' && Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? bytesOf(item) : item));
    return value;
  }) as Record<string, unknown>;
}

/** One HTTP exchange within the attempt's limits: a third of the attempt's time to connect, the whole of it for the answer. */
function exchange(target: Connection, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const limitMs = config.dynamoDbTimeoutMs;
  return new Promise((resolve, reject) => {
    const request = target.request({
      agent: target.agent,
      protocol: target.url.protocol,
      hostname: target.url.hostname,
      port: target.url.port,
      method: 'POST',
      path: '/',
      headers,
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
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.on('error', fail);
    request.end(body);
  });
}

/** DynamoDB's error answer as the SDK names it (the part of `__type` after '#'), with the status its retry classification reads. */
function serviceError(status: number, text: string): Error {
  let answer: { __type?: unknown; message?: unknown; Message?: unknown } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // Not DynamoDB's JSON (a proxy's page): the status says what it is.
  }
  const name = (typeof answer.__type === 'string' && answer.__type.split('#').pop()) || 'UnknownError';
  const message = String(answer.message ?? answer.Message ?? `HTTP ${status}`);
  return Object.assign(new Error(message), { name, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status } });
}
