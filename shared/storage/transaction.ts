/**
 * TransactWriteItems with condition failures mapped to domain errors: each
 * write may say which error its failed condition means; a transaction
 * cancelled for any other reason (a conflicting concurrent transaction) is a
 * ConcurrentUpdate, which callers retry.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from './client.js';
import { recordConsumedCapacity } from './consumed-capacity.js';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface Write {
  item: TransactItem;
  /** The error a failed condition on this write means; default ConcurrentUpdate. */
  onConditionFailed?: () => Error;
}

/** Another writer changed what this transaction was conditioned on. */
export class ConcurrentUpdate extends Error {
  constructor() {
    super('Another thread concurrently updated the data. Please retry your update');
    this.name = 'ConcurrentUpdate';
  }
}

/** DynamoDB's limit on the writes of one transaction. */
export const MAX_TRANSACTION_ITEMS = 100;

export class TooManyWrites extends Error {
  constructor(readonly count: number) {
    super(`The change needs ${count} writes; at most ${MAX_TRANSACTION_ITEMS} can be made atomically.`);
    this.name = 'TooManyWrites';
  }
}

export async function commit(writes: Write[]): Promise<void> {
  if (writes.length === 0) return;
  if (writes.length > MAX_TRANSACTION_ITEMS) throw new TooManyWrites(writes.length);
  try {
    const output = await dynamo().send(new TransactWriteCommand({ TransactItems: writes.map((write) => write.item), ReturnConsumedCapacity: 'TOTAL' }));
    recordConsumedCapacity(output.ConsumedCapacity, 'write');
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const reasons = error.CancellationReasons ?? [];
    const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
    const mapped = failed >= 0 ? writes[failed]?.onConditionFailed?.() : undefined;
    throw mapped ?? new ConcurrentUpdate();
  }
}

/**
 * Runs `attempt` again while it fails with ConcurrentUpdate, at most
 * `retries` more times; then throws `onExhausted`'s error (by default the
 * ConcurrentUpdate itself).
 */
export async function withRetries<T>(retries: number, attempt: () => Promise<T>, onExhausted?: (error: ConcurrentUpdate) => Error): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ConcurrentUpdate)) throw error;
      if (n >= retries) throw onExhausted?.(error) ?? error;
      // Jittered back-off spreads contending writers out so one of them wins each round.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (n + 1)));
    }
  }
}
