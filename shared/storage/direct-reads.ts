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
 * backoff and retry quota ("standard" mode; the signed request and its
 * retries are ../aws/json-requests.ts's), the attempt's time limits, and
 * DependencyUnavailable for what outlasts them. Items go in and come out as
 * the document client gives them (util-dynamodb's conversion, which the
 * document client uses too).
 */
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
import { JsonService, locationOf } from '../aws/json-requests.js';
import { config } from '../config.js';
import { asStorageFailure, dynamo, formatClient } from './client.js';
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

/** DynamoDB where and as whom the SDK client sends, within that client's attempts and time limits. */
const dynamoDb = new JsonService({
  signingName: 'dynamodb',
  targetPrefix: 'DynamoDB_20120810',
  jsonVersion: '1.0',
  // The endpoint the client was given (DynamoDB Local), else the region's by the SDK's rules.
  locate: () => locationOf(dynamo().config, (region) => dynamo().config.endpointProvider({ Region: region }).url),
  maxAttempts: () => config.dynamoDbMaxAttempts,
  attemptTimeoutMs: () => config.dynamoDbTimeoutMs,
});

/**
 * Sends one read and returns DynamoDB's answer (its JSON, attribute values
 * in DynamoDB's typed form), retried as the SDK would retry it.
 */
async function sendRead(operation: ReadOperation, input: object): Promise<Record<string, unknown>> {
  const sent = performance.now();
  try {
    await checkStorageFormat(formatClient());
    return fromJson(await dynamoDb.send(operation, toJson(input)));
  } catch (error) {
    throw asStorageFailure(error);
  } finally {
    recordRequest(sent, performance.now());
  }
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
