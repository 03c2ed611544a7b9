/**
 * Loads items straight into the table with BatchWriteItem, 25 a request,
 * several requests at once, resending unprocessed items under the service's
 * retry policy: how benchmarks load clouds too large to create through the
 * API in reasonable time. The items
 * must be exactly those the API would write (built with the storage
 * module's own write builders).
 */
import { BatchWriteCommand, type BatchWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../shared/storage/client.js';
import type { Item } from '../../shared/storage/reads.js';
import { untilAllProcessed } from '../../shared/storage/retry.js';

const CONCURRENCY = 8;

export async function batchWrite(items: Item[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const start = next;
      next += 25;
      const puts = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
      await untilAllProcessed<NonNullable<BatchWriteCommandInput['RequestItems']>>(
        { [tableName()]: puts },
        async (request) => (await dynamo().send(new BatchWriteCommand({ RequestItems: request }))).UnprocessedItems,
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}
