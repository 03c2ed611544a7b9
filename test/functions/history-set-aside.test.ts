/**
 * A change stream record the history function cannot take (a consumer item
 * it cannot decode, as a bug or a later release's format could commit),
 * committed between two claims: the stream's consumer, fed as the stack's
 * mapping feeds it (shared/history-feed.ts), splits the failing batch until
 * that record is alone, sets it aside on the queue with its shard and
 * sequence number, and the records after it reach the history within a
 * minute. `placement-admin history-set-aside` lists it.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { expect, it } from 'vitest';
import type { HistoryEvent } from '../../admin/commands/history.js';
import { dynamo, tableName } from '../../shared/storage/client.js';
import { encodeConsumer } from '../../shared/storage/items/consumer.js';
import { runAdmin } from '../support/admin.js';
import { useLocalService } from '../support/local-service.js';
import { useDynamoDbLocalOfItsOwn } from '../support/tables.js';

useDynamoDbLocalOfItsOwn();
const service = useLocalService(() => ({ PLACEMENT_LOCAL_HISTORY_SECONDS: '1' }));
const api = service.client({ token: 'admin', version: '1.39' });
const LOCAL_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'local' };

async function ok(method: string, path: string, body?: unknown) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  return response.body;
}

const claim = (provider: string) => ({
  allocations: { [provider]: { resources: { VCPU: 1 } } },
  project_id: 'set-aside-project',
  user_id: 'set-aside-user',
  consumer_generation: null,
  consumer_type: 'INSTANCE',
});

async function eventsOf(consumer: string, deadline: number): Promise<HistoryEvent[]> {
  for (;;) {
    const { events } = (await ok('GET', `/history/allocations/${consumer}`)) as { events: HistoryEvent[] };
    if (events.length > 0 || Date.now() > deadline) return events;
    await sleep(250);
  }
}

/** The record at a sequence number of a shard of the table's stream, and those after it, `limit` in all, as the AWS CLI prints them (JSON, times in text). */
async function recordsAt(shardId: string, sequenceNumber: string, limit: number): Promise<{ Records: { dynamodb: { Keys: { pk: { S: string } } } }[] }> {
  const endpoint = process.env.PLACEMENT_DYNAMODB_ENDPOINT!;
  const { Table: table } = await dynamo().send(new DescribeTableCommand({ TableName: tableName() }));
  const streams = new DynamoDBStreamsClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const { ShardIterator: iterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: table!.LatestStreamArn,
        ShardId: shardId,
        ShardIteratorType: 'AT_SEQUENCE_NUMBER',
        SequenceNumber: sequenceNumber,
      }),
    );
    const { Records: records = [] } = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: limit }));
    return JSON.parse(JSON.stringify({ Records: records }));
  } finally {
    streams.destroy();
  }
}

it('sets aside the one record it cannot take; the records after it reach the history within a minute', async () => {
  const provider = randomUUID();
  await ok('POST', '/resource_providers', { uuid: provider, name: `set-aside-${provider}` });
  await ok('PUT', `/resource_providers/${provider}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 64 } } });
  const [before, poison, after] = [randomUUID(), randomUUID(), randomUUID()];

  // The three changes within a second: the stream is read every second, so they come in one batch, which fails.
  await ok('PUT', `/allocations/${before}`, claim(provider));
  const now = new Date().toISOString();
  const item = encodeConsumer({
    uuid: poison,
    projectId: 'p',
    userId: 'u',
    generation: 1,
    consumerType: undefined,
    allocations: { [provider]: { VCPU: 1 } },
    createdAt: now,
    updatedAt: now,
  });
  await dynamo().send(new PutCommand({ TableName: tableName(), Item: { ...item, projectId: 42 } }));
  await ok('PUT', `/allocations/${after}`, claim(provider));
  const committed = Date.now();

  const afterEvents = await eventsOf(after, committed + 60_000);
  expect(afterEvents.map((event) => event.after)).toEqual([{ [provider]: { VCPU: 1 } }]);
  expect(Date.now() - committed).toBeLessThan(60_000);
  expect(await eventsOf(before, Date.now())).toHaveLength(1);

  const listing = await runAdmin(['history-set-aside', '--queue-url', service.setAsideQueueUrl!, '--json'], { env: LOCAL_CREDENTIALS });
  expect(listing.status, listing.stderr).toBe(0);
  const { approximate_count: count, batches } = JSON.parse(listing.stdout) as {
    approximate_count: number;
    batches: { requestContext: { condition: string; approximateInvokeCount: number }; DDBStreamBatchInfo: Record<string, string | number> }[];
  };
  expect(count).toBe(1);
  const [{ requestContext, DDBStreamBatchInfo: info }] = batches as [(typeof batches)[number]];
  expect(info.batchSize).toBe(1);
  expect(info.startSequenceNumber).toBe(info.endSequenceNumber);
  expect(requestContext.condition).toBe('RetryAttemptsExhausted');
  // Its attempts: the halvings that isolated it, then its own tries, eleven in all.
  expect(requestContext.approximateInvokeCount).toBe(11);
  // The record set aside is the poison's, as a replay reads it from the stream.
  const replay = await recordsAt(String(info.shardId), String(info.startSequenceNumber), 10);
  expect(replay.Records[0]!.dynamodb.Keys.pk.S).toBe(item.pk);
  // The runbook's replay: the records from there on as the CLI prints them, to the function. Still the poison: it fails
  // on it; without the poison, the records after it are taken again and nothing is doubled.
  const { handler: recordHistory } = await import('../../functions/allocation-history.js');
  await expect(recordHistory(replay as never)).rejects.toThrow(/projectId is not a string/);
  await expect(recordHistory({ Records: replay.Records.slice(1) } as never)).resolves.toEqual({ events: 1 });
  expect(await eventsOf(after, Date.now())).toHaveLength(1);

  const text = await runAdmin(['history-set-aside', '--queue-url', service.setAsideQueueUrl!], { env: LOCAL_CREDENTIALS });
  expect(text.stdout).toMatch(/1 record\(s\) of .+, in the stream until about /);
});
