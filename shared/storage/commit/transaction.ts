/**
 * The one way the service changes what it stores: read, plan, commit
 * (readPlanCommit). A plan that fits one TransactWriteItems is committed as
 * one; a bigger one in several steps through the journal (journal.ts,
 * docs/design/multi-step-changes.md), equally atomic. Condition failures are
 * mapped to domain errors: each write may say which error its failed
 * condition means; a change cancelled for any other reason (a conflicting
 * concurrent transaction, or an item another change holds) is a
 * ConcurrentUpdate, which is retried.
 */
import { commitInSteps, guarded, rawFenceOf, settleFence, targetOf } from './journal.js';
import { pauseBeforeRetry, retryPolicy } from '../retry.js';
import { isItemTooLargeReason, isTooLargeForOneTransaction, MAX_TRANSACTION_ITEMS, sendTransaction } from './transact.js';
import { ConcurrentUpdate } from '../errors.js';
import { isTransactionCanceled } from '../dynamodb.js';
import type { Write } from './write.js';
import { ItemTooLarge } from '../items/fields.js';

/**
 * One transaction, sent until DynamoDB decides it (sendTransaction: the same
 * token for every resend). A failed condition is what the write says it
 * means, or a ConcurrentUpdate; one that failed on another change's fence
 * settles that change as far as is due (journal.ts) and is a
 * ConcurrentUpdate, re-planned.
 */
export async function commitInOneTransaction(writes: Write[]): Promise<void> {
  try {
    await sendTransaction(writes.map((write) => guarded(write.item)));
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    const reasons = error.CancellationReasons ?? [];
    const failed = reasons.findIndex((reason) => reason.Code === 'ConditionalCheckFailed');
    if (failed >= 0) {
      const holder = rawFenceOf(reasons[failed]!.Item as Record<string, { S?: string }> | undefined);
      if (holder !== undefined) {
        await settleFence(holder, targetOf(writes[failed]!.item));
        throw new ConcurrentUpdate();
      }
      throw writes[failed]!.onConditionFailed?.() ?? new ConcurrentUpdate();
    }
    if (reasons.some(isItemTooLargeReason)) throw new ItemTooLarge('A record this change writes');
    throw new ConcurrentUpdate();
  }
}

/** Commits the writes atomically: in one transaction where they fit one, else in steps. */
export async function commit(writes: Write[]): Promise<void> {
  if (writes.length === 0) return;
  // A plan with more actions than one transaction holds is committed in steps.
  if (writes.length > MAX_TRANSACTION_ITEMS) return commitInSteps(writes);
  try {
    await commitInOneTransaction(writes);
  } catch (error) {
    if (!isTooLargeForOneTransaction(error)) throw error;
    await commitInSteps(writes);
  }
}

/** What one attempt of a change decided: its writes, and what the caller gets back when they are committed. */
export interface Plan<T> {
  writes: Write[];
  result?: T;
  /** Writes no reader takes before the commit, made ahead of it; a failure fails the change, and the sweeper removes what they left. */
  beforeCommit?: () => Promise<void>;
  /**
   * Takes back what beforeCommit did when the commit did not come: a failure
   * before it, a conflict, or an error of the commit itself (which may have
   * landed all the same: it checks). It cannot fail the change (it leaves
   * what it did not finish for the sweeper).
   */
  ifNotCommitted?: () => Promise<void>;
  /** Work the commit leaves to do once it stands; it cannot fail the change (it keeps what it did not finish for the sweeper). */
  afterCommit?: () => Promise<void>;
}

/**
 * Runs a change: `attempt` reads what the change depends on (strongly
 * consistent) and plans its writes, which are committed atomically (commit).
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
      try {
        await plan.beforeCommit?.();
        await commit(plan.writes);
      } catch (error) {
        await plan.ifNotCommitted?.();
        throw error;
      }
      await plan.afterCommit?.();
      return plan.result as T;
    } catch (error) {
      if (!(error instanceof ConcurrentUpdate)) throw error;
      if (retry >= policy.retries) throw onExhausted?.(error) ?? error;
      await pauseBeforeRetry(policy, retry);
    }
  }
}
