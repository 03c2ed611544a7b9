/**
 * Creates the table from the shared definition (the CDK stack uses the same one) and seeds the catalogs. The table has
 * the stack's change stream when the local history reads it (config.localHistorySeconds), and none otherwise.
 */
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException, ResourceNotFoundException, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { config } from '../shared/config.js';
import { dynamo, tableName } from '../shared/storage/client.js';
import { CHANGE_STREAM_VIEW, PARTITION_KEY, SECONDARY_INDEXES, SORT_KEY } from '../shared/storage/table-definition.js';
import { seedStandardCatalogs } from '../shared/storage/catalog.js';
import { recordFormatOfNewTable } from '../shared/storage/upgrade.js';

const STREAM = { StreamEnabled: true, StreamViewType: CHANGE_STREAM_VIEW };

/** Another instance joining the same table may have enabled it first: only a table still without a stream is an error. */
async function enableStream(): Promise<void> {
  try {
    await dynamo().send(new UpdateTableCommand({ TableName: tableName(), StreamSpecification: STREAM }));
  } catch (error) {
    const { Table } = await dynamo().send(new DescribeTableCommand({ TableName: tableName() }));
    if (Table?.StreamSpecification?.StreamEnabled !== true) throw error;
  }
}

/** Creates the table unless it exists; true when this call created it. A table joined without a change stream gets one if the history reads it. */
async function ensureTable(): Promise<boolean> {
  try {
    const { Table } = await dynamo().send(new DescribeTableCommand({ TableName: tableName() }));
    if (config.localHistorySeconds > 0 && Table?.StreamSpecification?.StreamEnabled !== true) await enableStream();
    return false;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const attributes = new Set<string>([PARTITION_KEY, SORT_KEY, ...SECONDARY_INDEXES.flatMap((index) => [index.partitionKey, index.sortKey])]);
  const creation = dynamo().send(
    new CreateTableCommand({
      TableName: tableName(),
      BillingMode: 'PAY_PER_REQUEST',
      ...(config.localHistorySeconds > 0 ? { StreamSpecification: STREAM } : {}),
      AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
        { AttributeName: SORT_KEY, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: SECONDARY_INDEXES.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  // Another instance on the same endpoint, or the SDK's retry of a creation that timed out, got there first.
  try {
    await creation;
    return true;
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    return false;
  }
}

export async function prepareTable(): Promise<void> {
  // A table joined (another release's, during an upgrade) keeps its storage format; one created here starts at the newest.
  if (await ensureTable()) await recordFormatOfNewTable();
  await seedStandardCatalogs();
}
