/**
 * Sending a TransactWriteItems, and what DynamoDB's answers to it mean, for
 * the two places that send them: a change in one transaction
 * (transaction.ts) and the steps of a multi-step change (journal.ts).
 */
import { randomUUID } from 'node:crypto';
import { isTransactionCanceled, transactWriteItems } from '../dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from '../consumed-capacity.js';
import { ConcurrentUpdate, DependencyUnavailable } from '../errors.js';
import { pauseBeforeRetry, retryPolicy, throttlingPolicy } from '../retry.js';
import type { WriteAction } from './write.js';

/** DynamoDB's most actions in one TransactWriteItems. */
export const MAX_TRANSACTION_ITEMS = 100;

/** Cancellation reasons that say DynamoDB throttled the transaction: sent again unchanged, not re-planned. */
export const THROTTLED_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/** DynamoDB refuses a transaction whose items together pass 4 MB; its writes then go in smaller parts. */
export const isTooLargeForOneTransaction = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ValidationException' && /transaction request cannot (include|be larger)|4 ?MB|size/i.test(error.message);

/** A cancellation reason saying one item would pass DynamoDB's item size. */
export const isItemTooLargeReason = (reason: { Code?: string; Message?: string }): boolean =>
  reason.Code === 'ValidationError' && /size/i.test(reason.Message ?? '');

/** The cancellation reasons that decided nothing: the same transaction may go through when sent again. */
const isUndecided = (code = 'None'): boolean => code === 'None' || code === 'TransactionConflict' || THROTTLED_REASONS.has(code);

/**
 * Sends one TransactWriteItems until DynamoDB decides it. Returns once it is
 * written; throws the TransactionCanceledException that names a failed
 * condition or an item too large (the caller says what that means), and any
 * other error as it came.
 *
 * Every resend carries the first one's ClientRequestToken, so that when the
 * answer to a committed transaction is lost (a reset connection, a timeout;
 * dynamodb.ts sends it again itself), DynamoDB answers the resend with that
 * success for ten minutes, instead of applying the writes twice or failing
 * them on conditions the first application changed. A cancellation that
 * decided nothing is therefore sent again unchanged, after the retry
 * policy's pause, never re-planned: throttling, a conflict with a
 * transaction in flight, and TransactionInProgressException (the first
 * attempt still running). The conflict may be with this transaction's own
 * first attempt; a re-plan would read what that attempt wrote and take it
 * for another writer's (a claim that landed answered with a consumer
 * generation conflict). Throttling waits as the SDK waits it out, a
 * conflict briefly (retry.ts); once their retries ran out, throttling is a
 * DependencyUnavailable (503) and a conflict a ConcurrentUpdate. A
 * cancellation that gives no reasons says nothing that a resend would
 * change: a DependencyUnavailable at once.
 */
export async function sendTransaction(actions: WriteAction[]): Promise<void> {
  const input = { TransactItems: actions, ClientRequestToken: randomUUID(), ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY };
  const conflicts = { policy: retryPolicy(), retries: 0 };
  const throttling = { policy: throttlingPolicy(), retries: 0 };
  for (;;) {
    let throttled = false;
    try {
      recordConsumedCapacity((await transactWriteItems(input)).ConsumedCapacity, 'write');
      return;
    } catch (error) {
      if (isTransactionCanceled(error)) {
        const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code);
        if (codes.length === 0) throw new DependencyUnavailable(`DynamoDB cancelled the transaction without its reasons: ${error.message}`);
        if (!codes.every(isUndecided)) throw error;
        throttled = codes.some((code) => THROTTLED_REASONS.has(code ?? ''));
      } else if (!(error instanceof Error && error.name === 'TransactionInProgressException')) throw error;
    }
    const wait = throttled ? throttling : conflicts;
    if (wait.retries >= wait.policy.retries) {
      if (throttled) throw new DependencyUnavailable('DynamoDB throttled the transaction after every retry.');
      throw new ConcurrentUpdate();
    }
    await pauseBeforeRetry(wait.policy, wait.retries++);
  }
}
