/**
 * The local stand-in for a Lambda event source on the table's change stream:
 * reads DynamoDB Local's stream every `everySeconds()` and hands the records
 * the consumer's filter lets through to it, at most `batchSize` at a time, a
 * shard at a time and in order. A batch the consumer fails is handled as
 * the mapping's settings say (`failures`): handed again at the next pass
 * until it succeeds (retries -1, Lambda's default), or split in two and
 * tried again at once until the failing record is alone and has had its
 * attempts, and then sent to the on-failure queue in the shape Lambda sends
 * (its invocation record: which shard, which sequence numbers), the records
 * after it flowing on.
 *
 * Where it got to is kept after each batch the consumer finished (a
 * checkpoint per shard), or after 1,000 records none of which passed the
 * filter: `npm start` keeps its checkpoints in the table, so that a service
 * killed mid-batch reads that batch again when it starts (the history
 * function's writes are idempotent), and each checkpoint is then itself a
 * change in the stream, which must not make another; the bundle runtime
 * keeps them in memory, as Lambda keeps its own out of the table.
 */
import { randomUUID } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { handler as recordHistory } from '../functions/allocation-history.js';
import { config } from '../shared/config.js';
import { HISTORY_FEED, type SetAsideBatch } from '../shared/history-feed.js';
import { logger } from '../shared/http/logger.js';
import { dynamo, tableName } from '../shared/storage/client.js';
import { readStreamCheckpoint, saveStreamCheckpoint } from '../shared/storage/history/stream.js';
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
  /** What is done with a batch the consumer fails (the mapping's BisectBatchOnFunctionError, MaximumRetryAttempts, DestinationConfig). */
  failures: FailureHandling;
  /** Asked as each pass is scheduled, so that a setting changed meanwhile takes effect at the next (history-report sleeps the reader). */
  everySeconds: () => number;
  checkpoints: { read(shardId: string): Promise<StreamCheckpoint | undefined>; save(shardId: string, checkpoint: StreamCheckpoint): Promise<void> };
}

export interface FailureHandling {
  bisectBatchOnError: boolean;
  /** Attempts after the first before a batch is given up; -1: none given up. */
  retryAttempts: number;
  /** Where a batch given up is told (without one it is passed over, as Lambda does); the function's ARN for the record. */
  onFailure?: { queueUrl: string; functionArn: string };
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
  const destination = options.failures.onFailure;
  const queues =
    destination &&
    new SQSClient({
      endpoint: new URL(destination.queueUrl).origin,
      region: process.env.AWS_REGION ?? 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  let streamArn: string | undefined;
  /** What was read past the saved checkpoint, per shard. */
  const unsaved = new Map<string, { sequenceNumber: string; records: number }>();

  const arrival = (record: DynamoDBRecord): string =>
    new Date((record.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000).toISOString().replace(/[.]\d+Z$/, 'Z');

  async function setAside(shardId: string, records: DynamoDBRecord[], attempts: number, error: Error): Promise<void> {
    logger.warn('the change stream consumer failed a batch past its attempts; setting it aside', { shardId, records: records.length, error });
    if (destination === undefined) return;
    const batch: SetAsideBatch = {
      requestContext: { requestId: randomUUID(), functionArn: destination.functionArn, condition: 'RetryAttemptsExhausted', approximateInvokeCount: attempts },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: records[0]!.dynamodb!.SequenceNumber!,
        endSequenceNumber: records.at(-1)!.dynamodb!.SequenceNumber!,
        approximateArrivalOfFirstRecord: arrival(records[0]!),
        approximateArrivalOfLastRecord: arrival(records.at(-1)!),
        batchSize: records.length,
        streamArn: streamArn!,
      },
    };
    await queues!.send(new SendMessageCommand({ QueueUrl: destination.queueUrl, MessageBody: JSON.stringify(batch) }));
  }

  /** One batch to the consumer, failures handled as the mapping says; a failure it does not give up on throws (the pass ends, the batch comes again). */
  async function handOver(shardId: string, records: DynamoDBRecord[], attempt = 0): Promise<void> {
    try {
      await options.deliver({ Records: records });
    } catch (error) {
      const { retryAttempts, bisectBatchOnError } = options.failures;
      if (retryAttempts < 0) throw error;
      if (attempt >= retryAttempts) return setAside(shardId, records, attempt + 1, error as Error);
      const middle = Math.ceil(records.length / 2);
      const halves = bisectBatchOnError && records.length > 1 ? [records.slice(0, middle), records.slice(middle)] : [records];
      for (const half of halves) await handOver(shardId, half, attempt + 1);
    }
  }

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
        await handOver(shardId, passed.slice(start, start + options.batchSize));
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
      options.everySeconds() * 1000,
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
      queues?.destroy();
    },
  };
}

const isConsumerRecord = (record: DynamoDBRecord): boolean => record.dynamodb?.Keys?.sk?.S === CONSUMER_SK;

/** The history function's ARN in the set-aside records npm start writes (Lambda names the function that failed the batch). */
const LOCAL_HISTORY_FUNCTION_ARN = 'arn:aws:lambda:local:000000000000:function:placement-allocation-history';

/**
 * `npm start`'s allocation history: the consumer items' records (the stack's filter lets only those through) read into
 * the history function every config.localHistorySeconds, fed as the stack's mapping feeds it (shared/history-feed.ts),
 * checkpoints in the table. `record` is the history function (history-report passes it measured); what it cannot take
 * goes to the queue at `setAsideQueueUrl` (local/sqs-queues.ts).
 */
export function readHistoryStream(
  endpoint: string,
  { record = recordHistory, setAsideQueueUrl }: { record?: (event: DynamoDBStreamEvent) => Promise<unknown>; setAsideQueueUrl?: string } = {},
): ChangeStreamReader {
  return readChangeStream({
    endpoint,
    table: tableName(),
    deliver: record,
    matches: isConsumerRecord,
    batchSize: HISTORY_FEED.batchSize,
    failures: {
      bisectBatchOnError: HISTORY_FEED.bisectBatchOnError,
      retryAttempts: HISTORY_FEED.retryAttempts,
      onFailure: setAsideQueueUrl === undefined ? undefined : { queueUrl: setAsideQueueUrl, functionArn: LOCAL_HISTORY_FUNCTION_ARN },
    },
    everySeconds: () => config.localHistorySeconds,
    checkpoints: { read: readStreamCheckpoint, save: saveStreamCheckpoint },
  });
}
