/**
 * The one retry policy of the service's own retries. Each DynamoDB request
 * is retried as the AWS SDK retries (dynamodb.ts); on top of that the service
 * tries again when DynamoDB did its part but the work is not done: a
 * transaction cancelled by a concurrent writer (transaction.ts,
 * readPlanCommit) and keys or items a batch request left unprocessed
 * (untilAllProcessed). Both wait before each retry the same way: a
 * conflict briefly, DynamoDB's throttling as the SDK waits out a throttling
 * error; neither past the invocation's deadline.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_DELAY_MS, THROTTLED_BASE_DELAY_MS } from '../aws/json-requests.js';
import { config } from '../config.js';
import { timeLeftMs } from './deadline.js';
import { DependencyUnavailable } from './errors.js';

export interface RetryPolicy {
  /** Retries after the first try. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const retryPolicy = (): RetryPolicy => ({
  retries: config.retries,
  baseDelayMs: config.retryBaseDelayMs,
  maxDelayMs: config.retryMaxDelayMs,
});

/**
 * DynamoDB's throttling said inside an answer (a transaction cancelled for
 * ThrottlingError, a batch's unprocessed items) is waited out as the SDK
 * waits out a throttling error, as many times as it tries a request: the
 * conflict policy's short waits would send about ten a second into it.
 */
export const throttlingPolicy = (): RetryPolicy => ({
  retries: config.dynamoDbMaxAttempts - 1,
  baseDelayMs: THROTTLED_BASE_DELAY_MS,
  maxDelayMs: MAX_DELAY_MS,
});

/**
 * The wait before retry number `retry` (0 for the first): "full jitter",
 * uniform between 0 and a ceiling that doubles each time up to the maximum,
 * so that writers who collided spread out instead of colliding again.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  return random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
}

/** Waits before retry number `retry`; a wait that would end past the invocation's deadline is a DependencyUnavailable (503) now, while it can be said. */
export async function pauseBeforeRetry(policy: RetryPolicy, retry: number): Promise<void> {
  const delay = backoffDelay(policy, retry);
  if (delay >= timeLeftMs()) throw new DependencyUnavailable('DynamoDB did not take the request before the invocation ran out of time.');
  await sleep(delay);
}

/**
 * Sends a batch request, then what DynamoDB left unprocessed (it does so
 * when throttled), after the throttling wait each time; `send` returns the
 * leftover, empty or undefined when all was done. Work still left after the
 * policy's retries is a DependencyUnavailable (503).
 */
export async function untilAllProcessed<Request extends object>(request: Request, send: (request: Request) => Promise<Request | undefined>): Promise<void> {
  const policy = throttlingPolicy();
  let leftover: Request | undefined = request;
  for (let retry = 0; ; retry++) {
    leftover = await send(leftover);
    if (leftover === undefined || Object.keys(leftover).length === 0) return;
    if (retry >= policy.retries) throw new DependencyUnavailable('DynamoDB left part of a batch request unprocessed after every retry.');
    await pauseBeforeRetry(policy, retry);
  }
}
