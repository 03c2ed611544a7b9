/**
 * What DynamoDB's answers to a TransactWriteItems mean, for the two places
 * that send them: a change in one transaction (transaction.ts) and the
 * steps of a multi-step change (journal.ts).
 */

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
