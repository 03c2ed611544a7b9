/**
 * DynamoDB's requests, signed by hand: every request the service sends to
 * its table (reads, writes, batches, transactions), one function per
 * operation, each taking and giving what the document client's command of
 * that operation takes and gives (items as plain objects, converted by
 * util-dynamodb as the document client converts them).
 *
 * Not through the SDK's DynamoDB client, for two costs: its size (about
 * 140 KB of every function's bundle, which must stay under 400 KB:
 * docs/operators/deploy.md) and its CPU (per request its command pipeline
 * resolves a middleware stack, endpoint rules and a schema serde, about
 * 0.9 ms on this machine where the signed request itself takes 0.4;
 * docs/operators/cost.md). It keeps that client's contract: the storage
 * format check before every item request (the format record's own requests
 * excepted), the request count, "standard" retries of at most
 * PLACEMENT_DYNAMODB_MAX_ATTEMPTS attempts of PLACEMENT_DYNAMODB_TIMEOUT_MS
 * each (../aws/json-requests.ts), DependencyUnavailable for what outlasts
 * them, ItemTooLarge for an item past DynamoDB's size, a ClientRequestToken
 * on every TransactWriteItems, and errors named and shaped as the SDK's
 * (isTransactionCanceled, isConditionalCheckFailed).
 *
 * The SDK's client (client.ts) is left to what runs off Lambda: the local
 * runtime's and the tools' table requests.
 */
import { randomUUID } from 'node:crypto';
import type { AttributeValue, ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  BatchWriteCommandInput,
  BatchWriteCommandOutput,
  DeleteCommandInput,
  DeleteCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  TransactWriteCommandInput,
  TransactWriteCommandOutput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS } from '@smithy/core/config';
import { marshall, unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { dynamoDbEndpoint, endpointVariants } from '../aws/endpoints.js';
import { isRetryable, JsonService, type ServiceLocation } from '../aws/json-requests.js';
import { config } from '../config.js';
import { recordRequest } from './consumed-capacity.js';
import { DependencyUnavailable } from './errors.js';
import { ItemTooLarge } from './items/fields.js';
import { checkStorageFormat, type FormatRecordRequests } from './storage-format.js';
import { timeLeftMs } from './deadline.js';

export const tableName = (): string => config.tableName;

// ---------------------------------------------------------------- failures

/** What a failed request means to the service, once its retries are spent. */
export function asStorageFailure(error: unknown): unknown {
  // A write past DynamoDB's item size that the models' own bound did not foresee (a children set growing by ADD): a 400, not a 500.
  if (error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message))
    return new ItemTooLarge('A record this change writes');
  // What the SDK would retry (its own classification) and gave up on is the dependency's failure (said once: a failed
  // storage format check inside a request is one already).
  if (error instanceof DependencyUnavailable || !isRetryable(error)) return error;
  return new DependencyUnavailable(`DynamoDB failed: ${(error as Error).name}: ${(error as Error).message}`, { cause: error });
}

/** A transaction DynamoDB cancelled, with its reasons (each reason's Code, Message and, on a failed condition, Item in DynamoDB's typed form). */
export type TransactionCanceled = Error & Pick<TransactionCanceledException, 'CancellationReasons'>;
/** A write whose condition failed, with the item (typed) when it asked for it (ReturnValuesOnConditionCheckFailure). */
export type ConditionalCheckFailed = Error & Pick<ConditionalCheckFailedException, 'Item'>;

/** Told by name, not class: this module's errors and those of the SDK's client (client.ts) alike. */
export const isTransactionCanceled = (error: unknown): error is TransactionCanceled => error instanceof Error && error.name === 'TransactionCanceledException';
export const isConditionalCheckFailed = (error: unknown): error is ConditionalCheckFailed =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

// ---------------------------------------------------------------- conversions

type Typed = Record<string, AttributeValue>;
type Native = Record<string, NativeAttributeValue>;
type Fields = Record<string, unknown>;

/** The document client's marshalling: undefined values left out (its removeUndefinedValues, which the service sets). */
const typed = (values: Native): Typed => marshall(values, { removeUndefinedValues: true });
const native = (values: Typed): Native => unmarshall(values);

/** `object` with each of `names` that it has converted. */
function converted<T>(object: T, names: readonly string[], convert: (values: never) => unknown): T {
  if (object === undefined || object === null) return object;
  const copy: Fields = { ...(object as Fields) };
  for (const name of names) if (copy[name] !== undefined) copy[name] = convert(copy[name] as never);
  return copy as T;
}

const toTyped = <T>(object: T, ...names: string[]): T => converted(object, names, typed);
const toNative = <T>(object: T, ...names: string[]): T => converted(object, names, native);

/** Each table's entries converted. */
const perTable = <From, To>(tables: Record<string, From[]> | undefined, convert: (entry: From) => To): Record<string, To[]> | undefined =>
  tables && Object.fromEntries(Object.entries(tables).map(([table, entries]) => [table, entries.map(convert)]));

/** An answer's item collection metrics (ReturnItemCollectionMetrics): their keys as items. */
const collectionKeys = <T>(metrics: T): T => toNative(metrics, 'ItemCollectionKey');
const collectionKeysPerTable = <T>(metrics: Record<string, T[]> | undefined) => perTable(metrics, collectionKeys);

// ---------------------------------------------------------------- operations

type Answer<Output> = Omit<Output, '$metadata'>;
/** The legacy parameters (conditions before expressions) are not converted: expressions only. */
type Legacy = 'Expected' | 'AttributeUpdates' | 'ConditionalOperator' | 'KeyConditions' | 'QueryFilter' | 'AttributesToGet';
export type QueryInput = Omit<QueryCommandInput, Legacy>;

/** What a request is sent after: the storage format check, or (the format record's own requests) nothing. */
type Checked = 'checked' | 'unchecked';

async function getWith(input: Omit<GetCommandInput, Legacy>, checked: Checked): Promise<Answer<GetCommandOutput>> {
  const answer = await send('GetItem', toTyped(input, 'Key'), checked);
  return toNative(answer, 'Item') as Answer<GetCommandOutput>;
}

async function putWith(input: Omit<PutCommandInput, Legacy>, checked: Checked): Promise<Answer<PutCommandOutput>> {
  const answer = await send('PutItem', toTyped(input, 'Item', 'ExpressionAttributeValues'), checked);
  return { ...toNative(answer, 'Attributes'), ItemCollectionMetrics: collectionKeys(answer.ItemCollectionMetrics) } as Answer<PutCommandOutput>;
}

/** GetItem, as the document client's GetCommand. */
export const getItem = (input: Omit<GetCommandInput, Legacy>): Promise<Answer<GetCommandOutput>> => getWith(input, 'checked');

/** PutItem, as the document client's PutCommand. */
export const putItem = (input: Omit<PutCommandInput, Legacy>): Promise<Answer<PutCommandOutput>> => putWith(input, 'checked');

/** UpdateItem, as the document client's UpdateCommand. */
export async function updateItem(input: Omit<UpdateCommandInput, Legacy>): Promise<Answer<UpdateCommandOutput>> {
  const answer = await send('UpdateItem', toTyped(input, 'Key', 'ExpressionAttributeValues'), 'checked');
  return { ...toNative(answer, 'Attributes'), ItemCollectionMetrics: collectionKeys(answer.ItemCollectionMetrics) } as Answer<UpdateCommandOutput>;
}

/** DeleteItem, as the document client's DeleteCommand. */
export async function deleteItem(input: Omit<DeleteCommandInput, Legacy>): Promise<Answer<DeleteCommandOutput>> {
  const answer = await send('DeleteItem', toTyped(input, 'Key', 'ExpressionAttributeValues'), 'checked');
  return { ...toNative(answer, 'Attributes'), ItemCollectionMetrics: collectionKeys(answer.ItemCollectionMetrics) } as Answer<DeleteCommandOutput>;
}

/** Query, as the document client's QueryCommand. */
export async function query(input: QueryInput): Promise<Answer<QueryCommandOutput>> {
  const answer = await send('Query', toTyped(input, 'ExpressionAttributeValues', 'ExclusiveStartKey'), 'checked');
  return { ...toNative(answer, 'LastEvaluatedKey'), Items: (answer.Items as Typed[] | undefined)?.map(native) } as Answer<QueryCommandOutput>;
}

type BatchReads<Key> = Record<string, { Keys?: Key[] } & Omit<NonNullable<BatchGetCommandInput['RequestItems']>[string], 'Keys'>>;

/** Each table's keys converted, the rest of its read as it was. */
function batchKeys<From, To>(reads: BatchReads<From> | undefined, convert: (key: From) => To): BatchReads<To> | undefined {
  return reads && Object.fromEntries(Object.entries(reads).map(([table, read]) => [table, { ...read, Keys: read.Keys?.map(convert) }]));
}

/** BatchGetItem, as the document client's BatchGetCommand. */
export async function batchGetItem(input: Omit<BatchGetCommandInput, Legacy>): Promise<Answer<BatchGetCommandOutput>> {
  const answer = await send('BatchGetItem', { ...input, RequestItems: batchKeys(input.RequestItems, typed) }, 'checked');
  return {
    ...answer,
    Responses: perTable(answer.Responses as Record<string, Typed[]> | undefined, native),
    UnprocessedKeys: batchKeys(answer.UnprocessedKeys as BatchReads<Typed> | undefined, native),
  } as Answer<BatchGetCommandOutput>;
}

type BatchWrites = NonNullable<BatchWriteCommandInput['RequestItems']>;
type BatchWrite = BatchWrites[string][number];

/** A batch write's requests per table, their items and keys converted. */
const batchWrites = (writes: BatchWrites | undefined, convert: <T>(object: T, ...names: string[]) => T): BatchWrites | undefined =>
  perTable(writes, (write: BatchWrite) => ({ ...write, PutRequest: convert(write.PutRequest, 'Item'), DeleteRequest: convert(write.DeleteRequest, 'Key') }));

/** BatchWriteItem, as the document client's BatchWriteCommand. */
export async function batchWriteItem(input: BatchWriteCommandInput): Promise<Answer<BatchWriteCommandOutput>> {
  const answer = await send('BatchWriteItem', { ...input, RequestItems: batchWrites(input.RequestItems, toTyped) }, 'checked');
  return {
    ...answer,
    UnprocessedItems: batchWrites(answer.UnprocessedItems as BatchWrites | undefined, toNative),
    ItemCollectionMetrics: collectionKeysPerTable(answer.ItemCollectionMetrics as Record<string, Fields[]> | undefined),
  } as Answer<BatchWriteCommandOutput>;
}

type TransactAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * TransactWriteItems, as the document client's TransactWriteCommand. A
 * ClientRequestToken is sent on every one, a new one unless given, as the
 * SDK fills it in: every attempt of the request carries the same, so that
 * DynamoDB answers a retry of a commit whose answer was lost with that
 * commit's success (for ten minutes) instead of applying it again or failing
 * it on conditions it changed.
 */
export async function transactWriteItems(input: TransactWriteCommandInput): Promise<Answer<TransactWriteCommandOutput>> {
  const actions = input.TransactItems?.map((action: TransactAction): TransactAction => ({
    ...action,
    ConditionCheck: toTyped(action.ConditionCheck, 'Key', 'ExpressionAttributeValues'),
    Put: toTyped(action.Put, 'Item', 'ExpressionAttributeValues'),
    Delete: toTyped(action.Delete, 'Key', 'ExpressionAttributeValues'),
    Update: toTyped(action.Update, 'Key', 'ExpressionAttributeValues'),
  }));
  const answer = await send(
    'TransactWriteItems',
    { ...input, TransactItems: actions, ClientRequestToken: input.ClientRequestToken ?? randomUUID() },
    'checked',
  );
  return {
    ...answer,
    ItemCollectionMetrics: collectionKeysPerTable(answer.ItemCollectionMetrics as Record<string, Fields[]> | undefined),
  } as Answer<TransactWriteCommandOutput>;
}

/** The format record's own requests, which the format check reads by and which do not wait for it (storage-format.ts, upgrade.ts). */
export const formatRecordRequests: FormatRecordRequests = {
  get: (input) => getWith(input, 'unchecked'),
  put: (input) => putWith(input, 'unchecked'),
};

// ---------------------------------------------------------------- the requests

/** DynamoDB Local's: it takes any credentials. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * Where and as whom to sign, as the SDK's client would resolve it:
 * PLACEMENT_DYNAMODB_ENDPOINT (DynamoDB Local) in AWS_REGION or "local";
 * else the region, credentials and endpoint settings the SDK finds in the
 * environment (in the bundles, Lambda's variables: infra/lambda-credentials.ts),
 * and the region's endpoint unless AWS_ENDPOINT_URL_DYNAMODB or
 * AWS_ENDPOINT_URL says another.
 */
async function locate(): Promise<ServiceLocation> {
  const endpoint = config.dynamoDbEndpoint;
  if (endpoint) return { url: new URL(endpoint), region: process.env.AWS_REGION ?? 'local', credentials: LOCAL_CREDENTIALS };
  const [region, variants] = await Promise.all([loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS)(), endpointVariants()]);
  const custom = process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.AWS_ENDPOINT_URL;
  return { url: dynamoDbEndpoint(region, { ...variants, custom }), region, credentials: defaultProvider() };
}

const dynamoDb = new JsonService({
  signingName: 'dynamodb',
  targetPrefix: 'DynamoDB_20120810',
  jsonVersion: '1.0',
  locate,
  maxAttempts: () => config.dynamoDbMaxAttempts,
  attemptTimeoutMs: () => config.dynamoDbTimeoutMs,
  parseJson: fromJson,
});

type Operation = 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'BatchWriteItem' | 'TransactWriteItems';

/**
 * Sends one request and returns DynamoDB's answer (attribute values in its
 * typed form), retried as the SDK would retry it; counted once, however many
 * attempts it took, and after the storage format check unless `unchecked`.
 */
async function send(operation: Operation, input: object, checked: Checked): Promise<Fields> {
  const sent = performance.now();
  try {
    if (checked === 'checked') await checkStorageFormat(formatRecordRequests);
    // Attempts and waits end at the invocation's deadline, a 503 said before Lambda would end the invocation.
    const left = timeLeftMs();
    const signal = left === Infinity ? undefined : AbortSignal.timeout(Math.max(1, left));
    return fromJson(await dynamoDb.send(operation, toJson(input), signal)) as Fields;
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
function fromJson(text: string): unknown {
  if (!text.includes('"B":') && !text.includes('"BS":')) return JSON.parse(text);
  return JSON.parse(text, (key, value: unknown) => {
    if (key === 'B' && typeof value === 'string') return bytesOf(value);
    if (key === 'BS' && Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? bytesOf(item) : item));
    return value;
  });
}
