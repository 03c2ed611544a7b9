/** Creates the table from the shared definition (the CDK stack uses the same one) and seeds the catalogs. */
import { CreateTableCommand, DescribeTableCommand, ResourceInUseException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { dynamo, tableName } from '../shared/storage/client.js';
import { PARTITION_KEY, SECONDARY_INDEXES, SORT_KEY } from '../shared/storage/table-definition.js';
import { seedStandardCatalogs } from '../shared/storage/catalog.js';

async function ensureTable(): Promise<void> {
  try {
    await dynamo().send(new DescribeTableCommand({ TableName: tableName() }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const attributes = new Set<string>([PARTITION_KEY, SORT_KEY, ...SECONDARY_INDEXES.flatMap((index) => [index.partitionKey, index.sortKey])]);
  const creation = dynamo().send(
    new CreateTableCommand({
      TableName: tableName(),
      BillingMode: 'PAY_PER_REQUEST',
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
  await creation.catch((error: unknown) => {
    if (!(error instanceof ResourceInUseException)) throw error;
  });
}

export async function prepareTable(): Promise<void> {
  await ensureTable();
  await seedStandardCatalogs();
}
