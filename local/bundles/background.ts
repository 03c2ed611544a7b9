/**
 * What AWS runs beside the front door, run on the bundles: each EventBridge
 * schedule invokes its function at its rate, and each event source mapping
 * on the table's change stream feeds its function the records its filters
 * let through, in batches of its size, a failed batch handed again until the
 * function takes it or the mapping's settings give it up to its on-failure
 * queue (local/change-stream.ts; the checkpoints in memory, as Lambda keeps
 * its own out of the table; the queues in local/sqs-queues.ts).
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBRecord } from 'aws-lambda';
import { readChangeStream, type ChangeStreamReader } from '../change-stream.js';
import { startLocalQueues } from '../sqs-queues.js';
import type { StreamCheckpoint } from '../../shared/storage/items/stream-checkpoint.js';
import type { StackSpec } from './cloud-assembly.js';
import type { Invocation } from './lambda-function.js';

export interface BackgroundWork {
  /** Reads the change stream to its end now, every consumer fed (tests wait for them with it). */
  catchUp(): Promise<void>;
  /** The URL of a stack's queue by logical id (SQS's protocol, local/sqs-queues.ts). */
  queueUrl(logicalId: string): string;
  stop(): Promise<void>;
}

export interface BackgroundOptions {
  endpoint: string;
  table: string;
  accountId: string;
  /** Each scheduled function this often instead of at its rule's rate (a minute at least): tests and CI want minutes in seconds. */
  scheduleEverySeconds?: number;
  /** Where a failed scheduled invocation is told (EventBridge's target here retries none). */
  report(functionId: string, text: string): void;
}

/** Lambda's polling of a stream with a batching window of a second: each second. */
const STREAM_POLL_SECONDS = 1;

/**
 * Lambda's event filtering, for what the stack's filters use: a pattern is an object whose keys name the record's
 * fields, nested, down to an array of the values a field may have. Anything else (prefix, numeric or exists matchers)
 * is refused as the runtime starts, so that a filter it cannot judge never passes or drops a record silently.
 */
function matchesPattern(pattern: unknown, value: unknown, where: string): boolean {
  if (Array.isArray(pattern)) {
    if (pattern.some((allowed) => typeof allowed === 'object' && allowed !== null)) throw new Error(`${where}: only value lists are supported`);
    return pattern.includes(value);
  }
  if (typeof pattern !== 'object' || pattern === null) throw new Error(`${where}: ${JSON.stringify(pattern)} is not a filter pattern`);
  const record = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  return Object.entries(pattern).every(([key, inner]) => matchesPattern(inner, record[key], `${where}.${key}`));
}

export async function startBackgroundWork(
  stack: StackSpec,
  invoke: (functionId: string, event: unknown) => Promise<Invocation>,
  options: BackgroundOptions,
): Promise<BackgroundWork> {
  const queues = await startLocalQueues();
  const timers = stack.schedules.map((schedule) => {
    const event = () => ({
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: options.accountId,
      time: new Date().toISOString(),
      region: stack.region,
      resources: [`arn:aws:events:${stack.region}:${options.accountId}:rule/${schedule.logicalId}`],
      detail: {},
    });
    const run = async () => {
      const invocation = await invoke(schedule.functionId, event());
      if (!invocation.ok) options.report(schedule.functionId, `scheduled invocation failed: ${invocation.errorType}: ${invocation.errorMessage}\n`);
    };
    return setInterval(() => void run(), (options.scheduleEverySeconds ?? schedule.everySeconds) * 1000).unref();
  });

  const readers: ChangeStreamReader[] = stack.streamConsumers.map((consumer) => {
    // Checked now against a record of nothing, so that a filter the runtime cannot judge stops it at once.
    for (const filter of consumer.filters) matchesPattern(filter, {}, consumer.logicalId);
    const checkpoints = new Map<string, StreamCheckpoint>();
    return readChangeStream({
      endpoint: options.endpoint,
      table: options.table,
      deliver: async (event) => {
        const invocation = await invoke(consumer.functionId, event);
        if (!invocation.ok)
          throw new Error(`${consumer.functionId} failed a batch of ${event.Records.length}: ${invocation.errorType}: ${invocation.errorMessage}`);
      },
      // A mapping without filters passes every record, as Lambda's does.
      matches: (record: DynamoDBRecord) =>
        consumer.filters.length === 0 || consumer.filters.some((filter) => matchesPattern(filter, record, consumer.logicalId)),
      batchSize: consumer.batchSize,
      failures: {
        bisectBatchOnError: consumer.bisectBatchOnError,
        retryAttempts: consumer.retryAttempts,
        onFailure:
          consumer.onFailureQueueId === undefined
            ? undefined
            : {
                queueUrl: queues.queueUrl(consumer.onFailureQueueId),
                functionArn: `arn:aws:lambda:${stack.region}:${options.accountId}:function:${consumer.functionId}`,
              },
      },
      everySeconds: () => STREAM_POLL_SECONDS,
      checkpoints: { read: async (shardId) => checkpoints.get(shardId), save: async (shardId, checkpoint) => void checkpoints.set(shardId, checkpoint) },
    });
  });

  return {
    catchUp: async () => {
      for (const reader of readers) await reader.catchUp();
    },
    queueUrl: (logicalId) => queues.queueUrl(logicalId),
    stop: async () => {
      for (const timer of timers) clearInterval(timer);
      await Promise.all(readers.map((reader) => reader.stop()));
      await queues.stop();
    },
  };
}
