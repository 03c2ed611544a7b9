/**
 * Tables of one test file on its worker's DynamoDB Local
 * (test/support/dynamodb-local-per-worker.ts). The file's table is named by
 * `PLACEMENT_TABLE_NAME` before its first test (vitest's setup file,
 * test/support/table-per-file.ts); a service that must start on an empty
 * table of its own takes `freshTableName()`. Every table whose name starts
 * with the file's is deleted after the file.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient, paginateListTables } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local.js';

/** Set once per file, before anything changes PLACEMENT_TABLE_NAME. */
const FILE_TABLE = 'PLACEMENT_TEST_FILE_TABLE';

export function nameTheFileTable(): void {
  process.env[FILE_TABLE] = `test-${randomUUID()}`;
  process.env.PLACEMENT_TABLE_NAME = process.env[FILE_TABLE];
}

/** A table name of this file no service has used yet. */
export function freshTableName(): string {
  const fileTable = process.env[FILE_TABLE];
  if (fileTable === undefined) throw new Error('no table for this file: test/support/table-per-file.ts is not among the setup files');
  return `${fileTable}-${randomUUID().slice(0, 8)}`;
}

export async function deleteTheFileTables(endpoint: string): Promise<void> {
  const prefix = process.env[FILE_TABLE]!;
  // DynamoDB Local accepts any credentials; the region is whatever it was given, so it is named here.
  const dynamo = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  try {
    for await (const page of paginateListTables({ client: dynamo }, {})) {
      for (const name of page.TableNames ?? []) if (name.startsWith(prefix)) await dynamo.send(new DeleteTableCommand({ TableName: name }));
    }
  } finally {
    dynamo.destroy();
  }
}

/**
 * For the few test files whose tables have a change stream (the allocation history's): a DynamoDB Local of the file's
 * own, which every service and read of the file uses, stopped after it. DynamoDB Local keeps every stream record it
 * ever had, deleted tables' too, and slows down as they pile up: on the worker's, they would slow every later file.
 */
export function useDynamoDbLocalOfItsOwn(): void {
  let database: DynamoDbLocal | undefined;
  let workers: string | undefined;
  beforeAll(async () => {
    database = await startDynamoDbLocal();
    workers = process.env.PLACEMENT_DYNAMODB_ENDPOINT;
    process.env.PLACEMENT_DYNAMODB_ENDPOINT = database.endpoint;
  }, 600_000);
  afterAll(async () => {
    process.env.PLACEMENT_DYNAMODB_ENDPOINT = workers;
    await database?.stop();
  });
}
