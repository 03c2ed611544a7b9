import { describe, expect, it } from 'vitest';
import { withDeadline } from '../../../shared/storage/deadline.js';
import { DependencyUnavailable } from '../../../shared/storage/errors.js';
import { backoffDelay, pauseBeforeRetry, throttlingPolicy, type RetryPolicy } from '../../../shared/storage/retry.js';

const policy: RetryPolicy = { retries: 10, baseDelayMs: 10, maxDelayMs: 200 };

describe('the retry policy', () => {
  it('waits a random share of a ceiling that doubles with each retry', () => {
    expect([0, 1, 2, 3, 4].map((retry) => backoffDelay(policy, retry, () => 0.999999))).toEqual([0, 1, 2, 3, 4].map((retry) => 10 * 2 ** retry * 0.999999));
    expect(backoffDelay(policy, 3, () => 0.5)).toBe(40);
  });

  it('never waits longer than the maximum, however many retries', () => {
    expect(backoffDelay(policy, 9, () => 0.999999)).toBeCloseTo(200, 3);
    expect(backoffDelay(policy, 60, () => 0.999999)).toBeCloseTo(200, 3);
  });

  it('may not wait at all (full jitter), so contenders spread over the whole window', () => {
    expect(backoffDelay(policy, 5, () => 0)).toBe(0);
  });

  it("waits out DynamoDB's throttling as the SDK does: from 500 ms up to 20 s, as many times as it tries a request", () => {
    expect(throttlingPolicy()).toEqual({ retries: 3, baseDelayMs: 500, maxDelayMs: 20_000 });
  });

  it("does not wait past the invocation's deadline: the 503 is said while there is time", async () => {
    const started = performance.now();
    await expect(withDeadline(Date.now() - 1, () => pauseBeforeRetry(policy, 0))).rejects.toBeInstanceOf(DependencyUnavailable);
    await expect(pauseBeforeRetry(policy, 0)).resolves.toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
