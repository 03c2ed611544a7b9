/**
 * The SDK's DynamoDB document client, for what runs off Lambda only: the
 * local runtime's table requests (local/create-table.ts, the bundle
 * runtime, the change stream's reader) and the tools and tests that create,
 * fill or scan tables. The service's own requests are signed by hand
 * (dynamodb.ts), and nothing a Lambda function runs imports this module
 * (.dependency-cruiser.cjs checks it), so no bundle carries the SDK's client.
 *
 * Configured as the service's requests are: the same endpoint and
 * credentials, "standard" retries of at most PLACEMENT_DYNAMODB_MAX_ATTEMPTS
 * attempts of PLACEMENT_DYNAMODB_TIMEOUT_MS each, DependencyUnavailable for
 * what outlasts them, and the storage format check before every item request.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { recordRequest } from './consumed-capacity.js';
import { asStorageFailure, formatRecordRequests } from './dynamodb.js';
import { checkStorageFormat } from './storage-format.js';

export { tableName } from './dynamodb.js';

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

function createClient(): DynamoDBDocumentClient {
  const endpoint = config.dynamoDbEndpoint;
  const base = new DynamoDBClient({
    ...(endpoint ? { endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    retryMode: 'standard',
    maxAttempts: config.dynamoDbMaxAttempts,
    // Without these a request to an endpoint that stopped answering would wait forever.
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
  // Nothing of a table at a storage format this release does not know is read or written (storage-format.ts).
  base.middlewareStack.add(
    (next, context) => async (args) => {
      if (ITEM_COMMANDS.has(context.commandName ?? '')) await checkStorageFormat(formatRecordRequests);
      return next(args);
    },
    { step: 'initialize', name: 'storageFormat', priority: 'low' },
  );
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

let client: DynamoDBDocumentClient | undefined;

/** The document client of the local runtime's and the tools' requests. */
export function dynamo(): DynamoDBDocumentClient {
  client ??= createClient();
  return client;
}
