/** The module-level DynamoDB document client, configured from the environment on first use. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';

let client: DynamoDBDocumentClient | undefined;

export function dynamo(): DynamoDBDocumentClient {
  if (client === undefined) {
    const endpoint = config.dynamoDbEndpoint;
    const base = new DynamoDBClient(
      endpoint ? { endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {},
    );
    // The SDK's logger step walks every response to redact it even though nothing is logged: a fifth of the CPU of a large query.
    base.middlewareStack.remove('loggerMiddleware');
    client = DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  }
  return client;
}

export const tableName = (): string => config.tableName;
