/**
 * The one way the service changes what it stores: read, plan, commit as one
 * TransactWriteItems, retry (readPlanCommit). Condition failures are mapped
 * to domain errors: each write may say which error its failed condition
 * means; a transaction cancelled for any other reason (a conflicting
 * concurrent transaction) is a ConcurrentUpdate, which is retried.
 */
import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { DependencyUnavailable, dynamo } from './client.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from './consumed-capacity.js';
import { pauseBeforeRetry, retryPolicy } from './retry.js';

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

const THROTTLED_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/**
 * One transaction. Its ClientRequestToken is new for every call, and every
 * resend of the call carries the same one: when the answer to a committed
 * transaction is lost (a reset connection, a timeout), DynamoDB answers the
 * resend with that success instead of applying the writes twice or failing
 * them on the conditions the first application changed. A re-planned
 * transaction is a new call with a new token, since DynamoDB refuses a token
 * reused with other writes (IdempotentParameterMismatch). Tokens are
 * remembered for ten minutes, far longer than the resends take.
 *
 * The SDK resends on throttling, 5xx and lost connections by itself. A
 * transaction DynamoDB cancels for throttling (a 400 whose cancellation
 * reasons say so, which the SDK does not retry) is resent here, unchanged and
 * with the same token, under the retry policy: re-planning it instead could
 * mistake an earlier attempt whose answer was lost for someone else's write.
 */
export async function commit(writes: Write[]): Promise<void> {
  if (writes.length === 0) return;
  if (writes.length > MAX_TRANSACTION_ITEMS) throw new TooManyWrites(writes.length);
  const input = { TransactItems: writes.map((write) => write.item), ClientRequestToken: randomUUID(), ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY };
  const policy = retryPolicy();
  for (let retry = 0; ; retry++) {
    try {
      const output = await dynamo().send(new TransactWriteCommand(input));
      recordConsumedCapacity(output.ConsumedCapacity, 'write');
      return;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
      const mapped = failed >= 0 ? writes[failed]?.onConditionFailed?.() : undefined;
      if (mapped) throw mapped;
      if (!reasons.some((reason) => THROTTLED_REASONS.has(reason.Code ?? ''))) throw new ConcurrentUpdate();
      if (retry >= policy.retries) throw new DependencyUnavailable('DynamoDB throttled the transaction after every retry.');
      await pauseBeforeRetry(policy, retry);
    }
  }
}

/** What one attempt of a change decided: its writes, and what the caller gets back when they are committed. */
export interface Plan<T> {
  writes: Write[];
  result?: T;
}

/**
 * Runs a change: `attempt` reads what the change depends on (strongly
 * consistent) and plans its writes, which are committed as one transaction.
 * When a concurrent writer got in between (ConcurrentUpdate), the whole
 * attempt runs again on fresh reads, after the retry policy's wait, up to
 * its retries (`retry` counts them); then the ConcurrentUpdate becomes
 * `onExhausted`'s error (by default itself, a 409).
 */
export async function readPlanCommit<T = undefined>(
  attempt: (retry: number) => Promise<Plan<T>>,
  onExhausted?: (error: ConcurrentUpdate) => Error,
): Promise<T> {
  const policy = retryPolicy();
  for (let retry = 0; ; retry++) {
    try {
      const plan = await attempt(retry);
      await commit(plan.writes);
      return plan.result as T;
    } catch (error) {
      if (!(error instanceof ConcurrentUpdate)) throw error;
      if (retry >= policy.retries) throw onExhausted?.(error) ?? error;
      await pauseBeforeRetry(policy, retry);
    }
  }
}
