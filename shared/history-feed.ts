/**
 * How the table's change stream feeds the history function
 * (functions/allocation-history.ts): the stack's event source mapping
 * (infra/constructs/allocation-history.ts) and npm start's stand-in for it
 * (local/change-stream.ts) read these.
 *
 * A batch the function fails is split in two and each half tried again,
 * until the record it cannot take is alone; that record is tried
 * `retryAttempts` times in all and then set aside (the on-failure queue,
 * docs/operators/history.md), and the records after it flow on. The function
 * writes a batch's events under keys of their records, so a batch tried again
 * writes nothing twice. Ten attempts isolate one record of a hundred (seven
 * halvings) and still try it alone three times, counting each halving as an
 * attempt, as Lambda may.
 */
export const HISTORY_FEED = {
  batchSize: 100,
  bisectBatchOnError: true,
  retryAttempts: 10,
} as const;

/**
 * What Lambda sends to the on-failure destination for a stream batch it
 * gives up (its invocation record): where the batch is in the stream, not
 * its records. local/change-stream.ts sends the same; placement-admin
 * history-set-aside reads it.
 */
export interface SetAsideBatch {
  requestContext: { requestId: string; functionArn: string; condition: 'RetryAttemptsExhausted'; approximateInvokeCount: number };
  responseContext: { statusCode: number; executedVersion: string; functionError: string };
  version: '1.0';
  timestamp: string;
  DDBStreamBatchInfo: {
    shardId: string;
    startSequenceNumber: string;
    endSequenceNumber: string;
    approximateArrivalOfFirstRecord: string;
    approximateArrivalOfLastRecord: string;
    batchSize: number;
    streamArn: string;
  };
}
