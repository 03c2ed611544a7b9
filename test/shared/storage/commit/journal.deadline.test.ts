/**
 * A multi-step change and its invocation's deadline (shared/storage/deadline.ts):
 * out of time before its commit point it gives up, so that its 503 means that
 * nothing was written; once committed it answers in time, whatever is left
 * of its applied writes, and the change stands. DynamoDB is held
 * by the fault proxy; the change is committed here, in the test's process,
 * under a deadline of the test's choosing.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { tableName } from '../../../../shared/storage/client.js';
import { withDeadline } from '../../../../shared/storage/deadline.js';
import { batchGet } from '../../../../shared/storage/reads.js';
import { commit } from '../../../../shared/storage/commit/transaction.js';
import type { Write } from '../../../../shared/storage/commit/write.js';
import { isApply } from '../../../support/journal-requests.js';
import { useServiceBehindFaultProxy } from '../../../support/fault-proxy-service.js';

// Attempts of 10 s: a request the proxy holds ends with its attempt's timeout and is sent again (and held again); a
// loaded machine's DynamoDB Local answers well within it.
const { proxy } = useServiceBehindFaultProxy({ seed: 31 }, { PLACEMENT_DYNAMODB_TIMEOUT_MS: '10000' });

/** What the writer keeps of its time (journal.ts's TIME_KEPT_MS). */
const TIME_KEPT_MS = 2_000;

/** `count` new items of a partition of their own: a change in steps past 100. */
function newItems(count: number) {
  const pk = `DEADLINE#${randomUUID()}`;
  const keys = Array.from({ length: count }, (_, n) => ({ pk, sk: String(n).padStart(5, '0') }));
  const writes: Write[] = keys.map((key) => ({
    item: { Put: { TableName: tableName(), Item: { ...key, written: true }, ConditionExpression: 'attribute_not_exists(pk)' } },
  }));
  return { keys, writes };
}

/** Holds every request that matches until stopped (the attempts time out and are held again). */
function holdEvery(matches: (operation: string, request: Record<string, any>) => boolean): () => void {
  let holding = true;
  void (async () => {
    while (holding) await proxy().holdNext(matches);
  })();
  return () => {
    holding = false;
  };
}

describe('a multi-step change near its deadline', () => {
  it('gives up before its commit point when its time is short, and nothing of it is there', async () => {
    const { keys, writes } = newItems(1_000);
    // Less than the writer keeps: it starts no part, aborts what it began and says so.
    const outcome = await withDeadline(Date.now() + TIME_KEPT_MS - 1, () => commit(writes)).then(
      () => 'committed',
      (error: Error) => error.message,
    );
    expect(outcome).toMatch(/could not be written in the time this function has, and nothing of it was/);
    expect(await batchGet(keys)).toEqual([]);
  }, 120_000);

  it('answers once committed without waiting on its applied writes, and the change stands', async () => {
    const { keys, writes } = newItems(150);
    const stopHolding = holdEvery((operation, request) => Number(isApply(operation, request)) > 0);
    try {
      const started = Date.now();
      // Eight seconds for the writes' two parts; each applied write is held for 10 s an attempt, four attempts.
      await withDeadline(started + TIME_KEPT_MS + 8_000, () => commit(writes));
      const elapsed = Date.now() - started;
      expect(elapsed, 'answered by its deadline, not after the applied writes’ 40 s of attempts').toBeLessThan(20_000);
    } finally {
      stopHolding();
    }
    // The reader meets the committed change's fences and applies them (one attempt may still be held 10 s, then sent again).
    expect((await batchGet(keys)).length).toBe(writes.length);
  }, 120_000);
});
