/**
 * The local stand-in for a Lambda event source on the table's change stream:
 * reads DynamoDB Local's stream every `everySeconds` and hands the records
 * the consumer's filter lets through to it, at most `batchSize` at a time, a
 * shard at a time and in order. A batch the consumer fails is handed again
 * at the next pass, as Lambda retries one until it succeeds.
 *
 * Where it got to is kept after each batch the consumer finished (a
 * checkpoint per shard), or after 1,000 records none of which passed the
 * filter: `npm start` keeps its checkpoints in the table, so that a service
 * killed mid-batch reads that batch again when it starts (the history
 * function's writes are idempotent), and each checkpoint is then itself a
 * change in the stream, which must not make another; the bundle runtime
 * keeps them in memory, as Lambda keeps its own out of the table.
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
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { handler as recordHistory } from '../functions/allocation-history.js';
import { config } from '../shared/config.js';
import { logger } from '../shared/http/logger.js';
import { dynamo, tableName } from '../shared/storage/client.js';
import { readStreamCheckpoint, saveStreamCheckpoint } from '../shared/storage/history.js';
import type { StreamCheckpoint } from '../shared/storage/items/stream-checkpoint.js';
import { CONSUMER_SK } from '../shared/storage/items/consumer.js';

/** Records read past the last checkpoint before one is written anyway. */
const UNSAVED_RECORDS = 1000;

export interface ChangeStreamReader {
  /** Reads everything the stream has now, then returns (tests wait for the consumer with it). */
  catchUp(): Promise<void>;
  /** Stops reading once the pass under way is done. */
  stop(): Promise<void>;
}

export interface ChangeStreamOptions {
  endpoint: string;
  table: string;
  /** The consumer: one invocation of the function the event source feeds. */
  deliver(event: DynamoDBStreamEvent): Promise<unknown>;
  /** The event source's filter, on each record as Lambda's event carries it. */
  matches(record: DynamoDBRecord): boolean;
  batchSize: number;
  everySeconds: number;
  checkpoints: { read(shardId: string): Promise<StreamCheckpoint | undefined>; save(shardId: string, checkpoint: StreamCheckpoint): Promise<void> };
}

type Image = NonNullable<NonNullable<StreamRecord['dynamodb']>['NewImage']>;

/**
 * An image with every attribute typed. DynamoDB Local's stream writes an
 * empty map as `{}`, no type at all (seen on its wire: a consumer whose
 * allocations are all gone), which nothing can decode; DynamoDB's format,
 * and Lambda's event, say `{"M":{}}`.
 */
const typed = (image: Image | undefined): Image | undefined =>
  image && Object.fromEntries(Object.entries(image).map(([name, value]) => [name, Object.keys(value).length === 0 ? { M: {} } : value]));

/** A record as Lambda's event carries it: the same images, the time in seconds. */
const asLambdaRecord = (record: StreamRecord): DynamoDBRecord =>
  ({
    ...record,
    dynamodb: {
      ...record.dynamodb,
      NewImage: typed(record.dynamodb?.NewImage),
      OldImage: typed(record.dynamodb?.OldImage),
      ApproximateCreationDateTime: (record.dynamodb?.ApproximateCreationDateTime?.getTime() ?? 0) / 1000,
    },
  }) as DynamoDBRecord;

export function readChangeStream(options: ChangeStreamOptions): ChangeStreamReader {
  // As the service's own client reaches DynamoDB Local (shared/storage/client.ts): any credentials do.
  const streams = new DynamoDBStreamsClient({
    endpoint: options.endpoint,
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let streamArn: string | undefined;
  /** What was read past the saved checkpoint, per shard. */
  const unsaved = new Map<string, { sequenceNumber: string; records: number }>();

  async function readShard(shard: Shard): Promise<void> {
    const shardId = shard.ShardId!;
    const saved = await options.checkpoints.read(shardId);
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
      const passed = records.map(asLambdaRecord).filter(options.matches);
      for (let start = 0; start < passed.length; start += options.batchSize) {
        await options.deliver({ Records: passed.slice(start, start + options.batchSize) });
      }
      const last = records.at(-1)?.dynamodb?.SequenceNumber ?? unsaved.get(shardId)?.sequenceNumber ?? saved?.sequenceNumber;
      const read = (unsaved.get(shardId)?.records ?? 0) + records.length;
      if (next === undefined || passed.length > 0 || read >= UNSAVED_RECORDS) {
        await options.checkpoints.save(shardId, { sequenceNumber: last, finished: next === undefined });
        unsaved.delete(shardId);
      } else if (last !== undefined) {
        unsaved.set(shardId, { sequenceNumber: last, records: read });
      }
      if (records.length === 0) return;
      iterator = next;
    }
  }

  async function pass(): Promise<void> {
    streamArn ??= (await dynamo().send(new DescribeTableCommand({ TableName: options.table }))).Table?.LatestStreamArn;
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
  // One pass at a time; a failed pass (the database restarting, the consumer failing) is tried again at the next tick.
  const next = (): Promise<void> => {
    const run = running.then(pass);
    running = run.catch(() => undefined);
    return run;
  };
  const tick = () => {
    const failed = (error: Error) => logger.warn('reading the change stream failed; trying again', { error });
    timer = setTimeout(
      () =>
        void next()
          .catch(failed)
          .then(() => !stopped && tick()),
      options.everySeconds * 1000,
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

const isConsumerRecord = (record: DynamoDBRecord): boolean => record.dynamodb?.Keys?.sk?.S === CONSUMER_SK;

/**
 * `npm start`'s allocation history: the consumer items' records (the stack's filter lets only those through) read into
 * the history function every config.localHistorySeconds, checkpoints in the table. `record` is the history function
 * (history-report passes it measured).
 */
export function readHistoryStream(endpoint: string, record: (event: DynamoDBStreamEvent) => Promise<unknown> = recordHistory): ChangeStreamReader {
  return readChangeStream({
    endpoint,
    table: tableName(),
    deliver: record,
    matches: isConsumerRecord,
    batchSize: UNSAVED_RECORDS,
    everySeconds: config.localHistorySeconds,
    checkpoints: { read: readStreamCheckpoint, save: saveStreamCheckpoint },
  });
}
