/**
 * The local runtime's stand-in for the stack's stream event source: reads
 * DynamoDB Local's change stream every config.localHistorySeconds and hands
 * the consumer items' records to the history function (the stack's filter
 * lets only those through), a shard at a time and in order.
 *
 * Where it got to is kept in the table (a checkpoint per shard) after each
 * batch the function finished, so a service killed mid-batch reads that
 * batch again when it starts, as Lambda retries one: the function's writes
 * are idempotent. A checkpoint is written after a batch with consumer
 * records, or after 1,000 records without one: each checkpoint is itself a
 * change in the stream, which must not make another.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { handler as recordHistory } from '../functions/allocation-history.js';
import { config } from '../shared/config.js';
import { logger } from '../shared/http/logger.js';
import { dynamo, tableName } from '../shared/storage/client.js';
import { readStreamCheckpoint, saveStreamCheckpoint } from '../shared/storage/history.js';
import { CONSUMER_SK } from '../shared/storage/items/consumer.js';

/** Records read past the last checkpoint before one is written anyway. */
const UNSAVED_RECORDS = 1000;

export interface HistoryStreamReader {
  /** Reads everything the stream has now, then returns (tests wait for the history with it). */
  catchUp(): Promise<void>;
  /** Stops reading once the pass under way is done. */
  stop(): Promise<void>;
}

const isConsumerRecord = (record: StreamRecord): boolean => record.dynamodb?.Keys?.sk?.S === CONSUMER_SK;

type Image = NonNullable<NonNullable<StreamRecord['dynamodb']>['NewImage']>;

/**
 * An image with every attribute typed. DynamoDB Local's stream writes an
 * empty map as `{}`, no type at all (seen on its wire: a consumer whose
 * allocations are all gone), which nothing can decode; DynamoDB's format,
 * and Lambda's event, say `{"M":{}}`.
 */
const typed = (image: Image | undefined): Image | undefined =>
  image && Object.fromEntries(Object.entries(image).map(([name, value]) => [name, Object.keys(value).length === 0 ? { M: {} } : value]));

/** The records as Lambda's event carries them: the same images, the time in seconds. */
const asLambdaEvent = (records: StreamRecord[]): DynamoDBStreamEvent =>
  ({
    Records: records.map((record) => ({
      ...record,
      dynamodb: {
        ...record.dynamodb,
        NewImage: typed(record.dynamodb?.NewImage),
        OldImage: typed(record.dynamodb?.OldImage),
        ApproximateCreationDateTime: (record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? 0) / 1000,
      },
    })),
  }) as DynamoDBStreamEvent;

/** `record` is the history function (history-report passes it measured). */
export function readHistoryStream(endpoint: string, record: (event: DynamoDBStreamEvent) => Promise<unknown> = recordHistory): HistoryStreamReader {
  // As the service's own client reaches DynamoDB Local (shared/storage/client.ts): any credentials do.
  const streams = new DynamoDBStreamsClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let streamArn: string | undefined;
  /** What was read past the saved checkpoint, per shard. */
  const unsaved = new Map<string, { sequenceNumber: string; records: number }>();

  async function readShard(shard: Shard): Promise<void> {
    const shardId = shard.ShardId!;
    const saved = await readStreamCheckpoint(shardId);
    if (saved?.finished) return;
    const after = unsaved.get(shardId)?.sequenceNumber ?? saved?.sequenceNumber;
    let { ShardIterator: iterator } = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(after === undefined ? { ShardIteratorType: 'TRIM_HORIZON' } : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }),
      }),
    );
    while (iterator !== undefined) {
      const { Records: records = [], NextShardIterator: next } = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      const consumers = records.filter(isConsumerRecord);
      if (consumers.length > 0) await record(asLambdaEvent(consumers));
      const last = records.at(-1)?.dynamodb?.SequenceNumber ?? unsaved.get(shardId)?.sequenceNumber ?? saved?.sequenceNumber;
      const read = (unsaved.get(shardId)?.records ?? 0) + records.length;
      if (next === undefined || consumers.length > 0 || read >= UNSAVED_RECORDS) {
        await saveStreamCheckpoint(shardId, { sequenceNumber: last, finished: next === undefined });
        unsaved.delete(shardId);
      } else if (last !== undefined) {
        unsaved.set(shardId, { sequenceNumber: last, records: read });
      }
      if (records.length === 0) return;
      iterator = next;
    }
  }

  async function pass(): Promise<void> {
    streamArn ??= (await dynamo().send(new DescribeTableCommand({ TableName: tableName() }))).Table?.LatestStreamArn;
    if (streamArn === undefined) return;
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription: description } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
      shards.push(...(description?.Shards ?? []));
      start = description?.LastEvaluatedShardId;
    } while (start !== undefined);
    // A parent shard's records are older than its children's: read in the order DynamoDB lists them, parents first.
    for (const shard of shards) await readShard(shard);
  }

  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // One pass at a time; a failed pass (the database restarting, say) is tried again at the next tick.
  const next = (): Promise<void> => {
    const run = running.then(pass);
    running = run.catch(() => undefined);
    return run;
  };
  const tick = () => {
    const failed = (error: Error) => logger.warn('reading the change stream into the allocation history failed; trying again', { error });
    timer = setTimeout(
      () =>
        void next()
          .catch(failed)
          .then(() => !stopped && tick()),
      config.localHistorySeconds * 1000,
    ).unref();
  };
  tick();
  return {
    catchUp: next,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
      streams.destroy();
    },
  };
}
