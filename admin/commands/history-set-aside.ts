/**
 * placement-admin history-set-aside: the change stream records the
 * allocation history could not take, from the stack's set-aside queue (the
 * stream mapping's on-failure destination; docs/operators/history.md,
 * "Records set aside"). The queue holds what Lambda sends there: a batch's
 * shard and first and last sequence numbers, not the records, which the
 * stream keeps 24 hours after their change. Read with the operator's AWS
 * credentials, as `upgrade check` reads a stack; the queue's messages are
 * peeked (visibility timeout 0), so a listing takes nothing away.
 */
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SetAsideBatch } from '../../shared/history-feed.js';
import { command } from '../command-line.js';

/** A stream keeps a record this long after its change. */
const STREAM_RETENTION_MS = 24 * 3_600_000;
/** Peeks that bring nothing new before the listing ends (a short poll samples some of SQS's servers only). */
const EMPTY_PEEKS = 3;

/** The region a queue URL names (`https://sqs.<region>.amazonaws.com/...`); elsewhere (a local stand-in) the environment's. */
const regionOf = (queueUrl: string): string => /^sqs[.]([a-z0-9-]+)[.]/.exec(new URL(queueUrl).hostname)?.[1] ?? process.env.AWS_REGION ?? 'us-east-1';

export async function listSetAside(queueUrl: string): Promise<{ batches: SetAsideBatch[]; approximateCount: number }> {
  // The SDK sends each request to the queue URL's own host (its useQueueUrlAsEndpoint), the stand-in's locally.
  const sqs = new SQSClient({ region: regionOf(queueUrl) });
  try {
    const { Attributes: attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
    const approximateCount = Number(attributes?.ApproximateNumberOfMessages ?? 0);
    const seen = new Map<string, SetAsideBatch>();
    for (let empty = 0; empty < EMPTY_PEEKS && seen.size < approximateCount;) {
      const { Messages: messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
      const fresh = messages.filter((message) => !seen.has(message.MessageId!));
      for (const message of fresh) seen.set(message.MessageId!, JSON.parse(message.Body!) as SetAsideBatch);
      empty = fresh.length === 0 ? empty + 1 : 0;
    }
    const batches = [...seen.values()].sort((a, b) =>
      a.DDBStreamBatchInfo.approximateArrivalOfFirstRecord.localeCompare(b.DDBStreamBatchInfo.approximateArrivalOfFirstRecord),
    );
    return { batches, approximateCount };
  } finally {
    sqs.destroy();
  }
}

function batchLines(batch: SetAsideBatch, now: number): string[] {
  const info = batch.DDBStreamBatchInfo;
  const leaves = Date.parse(info.approximateArrivalOfLastRecord) + STREAM_RETENTION_MS;
  const kept = leaves > now ? `in the stream until about ${new Date(leaves).toISOString()}` : 'gone from the stream';
  return [
    `${info.approximateArrivalOfFirstRecord}  ${info.batchSize} record(s) of ${info.shardId}, ${kept}`,
    `    sequence numbers ${info.startSequenceNumber} to ${info.endSequenceNumber}`,
    `    set aside at ${batch.timestamp} after ${batch.requestContext.approximateInvokeCount} attempts (${batch.requestContext.condition}) by ${batch.requestContext.functionArn}`,
  ];
}

export const historySetAside = command({
  name: 'history-set-aside',
  summary: 'the change stream records the allocation history could not take, from its set-aside queue',
  synopsis: '--queue-url URL [--json]',
  description: [
    "Lists what the allocation history's stream mapping gave up on: each batch's shard, sequence numbers, when its",
    "records reached the stream and whether the stream still holds them (24 hours). The queue's URL is the stack's",
    'HistorySetAsideQueueUrl output (npm start prints its own). Uses your AWS credentials (sqs:ReceiveMessage and',
    'sqs:GetQueueAttributes on the queue); takes nothing off the queue. docs/operators/history.md says how to replay.',
  ].join('\n'),
  options: {
    'queue-url': { type: 'string', value: 'URL', help: "the set-aside queue's URL", required: true },
    json: { type: 'boolean', help: 'print {"approximate_count": N, "batches": [...]}, Lambda\'s records as sent, oldest first' },
  },
  run: async (values) => {
    const { batches, approximateCount } = await listSetAside(values['queue-url']!);
    if (values.json) {
      console.log(JSON.stringify({ approximate_count: approximateCount, batches }));
    } else if (batches.length === 0) {
      console.log('nothing set aside');
    } else {
      const now = Date.now();
      console.log(batches.flatMap((batch) => batchLines(batch, now)).join('\n'));
    }
    return 0;
  },
});
