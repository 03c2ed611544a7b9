import { describe, expect, it } from 'vitest';
import { backoffDelay, type RetryPolicy } from '../../../shared/storage/retry.js';

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
});
