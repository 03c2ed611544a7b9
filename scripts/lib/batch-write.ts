/**
 * Loads items straight into the table with BatchWriteItem, 25 a request,
 * several requests at once, retrying unprocessed items: how benchmarks load
 * clouds too large to create through the API in reasonable time. The items
 * must be exactly those the API would write (built with the storage
 * module's own write builders).
 */
import { BatchWriteCommand, type BatchWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../shared/storage/client.js';
import type { Item } from '../../shared/storage/reads.js';

const CONCURRENCY = 8;

export async function batchWrite(items: Item[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const start = next;
      next += 25;
      const puts = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
      let request: BatchWriteCommandInput['RequestItems'] = { [tableName()]: puts };
      for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
        request = (await dynamo().send(new BatchWriteCommand({ RequestItems: request }))).UnprocessedItems;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}
