/**
 * The module-level DynamoDB document client, configured from the environment
 * on first use, and what its failures mean to the service.
 *
 * The SDK retries each request itself ("standard" mode: throttling, 5xx,
 * timeouts, reset connections; full-jitter backoff, a retry quota per
 * client) up to PLACEMENT_DYNAMODB_MAX_ATTEMPTS attempts of at most
 * PLACEMENT_DYNAMODB_TIMEOUT_MS each. A retryable failure that outlasts
 * them becomes a DependencyUnavailable, which the error middleware answers
 * with 503 and Retry-After, never 500. See docs/design/writes.md, "DynamoDB failures".
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isRetryable } from '../aws/json-requests.js';
import { config } from '../config.js';
import { recordRequest } from './consumed-capacity.js';
import { DependencyUnavailable } from './errors.js';
import { ItemTooLarge } from './items/fields.js';
import { checkStorageFormat } from './storage-format.js';

/** What a failed request means to the service, once its retries are spent. */
export function asStorageFailure(error: unknown): unknown {
  // A write past DynamoDB's item size that the models' own bound did not foresee (a children set growing by ADD): a 400, not a 500.
  if (error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message))
    return new ItemTooLarge('A record this change writes');
  // What the SDK would retry (its own classification) and gave up on is the dependency's failure.
  if (!isRetryable(error)) return error;
  return new DependencyUnavailable(`DynamoDB failed: ${(error as Error).name}: ${(error as Error).message}`, { cause: error });
}

/** The requests that read or write items: each waits for the storage format check. Table requests (creation) do not. */
const ITEM_COMMANDS = new Set([
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactGetItemsCommand',
  'TransactWriteItemsCommand',
  'QueryCommand',
  'ScanCommand',
]);

function createClient(checkFormat: boolean): DynamoDBDocumentClient {
  const endpoint = config.dynamoDbEndpoint;
  const base = new DynamoDBClient({
    ...(endpoint ? { endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    retryMode: 'standard',
    maxAttempts: config.dynamoDbMaxAttempts,
    // Without these a request to an endpoint that stopped answering would wait until the function times out.
    // A third of an attempt to connect: 1 s against DynamoDB, 10 s against a DynamoDB Local that a busy machine is slow to accept on.
    requestHandler: {
      connectionTimeout: Math.ceil(config.dynamoDbTimeoutMs / 3),
      requestTimeout: config.dynamoDbTimeoutMs,
      throwOnRequestTimeout: true,
    },
  });
  // The SDK's logger step walks every response to redact it even though nothing is logged: a fifth of the CPU of a large query.
  base.middlewareStack.remove('loggerMiddleware');
  // Outermost, so it sees what is left once the SDK's retries are spent.
  base.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw asStorageFailure(error);
      }
    },
    { step: 'initialize', name: 'dependencyFailures', priority: 'high' },
  );
  // Counted per request, outermost too, so that the count is of calls made, not of the SDK's attempts.
  base.middlewareStack.add(
    (next) => async (args) => {
      const sent = performance.now();
      try {
        return await next(args);
      } finally {
        recordRequest(sent, performance.now());
      }
    },
    { step: 'initialize', name: 'countRequests', priority: 'high' },
  );
  if (checkFormat) {
    // Nothing of a table at a storage format this release does not know is read or written (storage-format.ts).
    base.middlewareStack.add(
      (next, context) => async (args) => {
        if (ITEM_COMMANDS.has(context.commandName ?? '')) await checkStorageFormat(formatClient());
        return next(args);
      },
      { step: 'initialize', name: 'storageFormat', priority: 'low' },
    );
  }
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

let client: DynamoDBDocumentClient | undefined;
let unchecked: DynamoDBDocumentClient | undefined;

/** The client of every read and write of the service's items. */
export function dynamo(): DynamoDBDocumentClient {
  client ??= createClient(true);
  return client;
}

/** The client of the storage format record itself, which the other's check reads (storage-format.ts, upgrade.ts). */
export function formatClient(): DynamoDBDocumentClient {
  unchecked ??= createClient(false);
  return unchecked;
}

export const tableName = (): string => config.tableName;
