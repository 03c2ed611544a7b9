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
