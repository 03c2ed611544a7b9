/**
 * Crash safety of a multi-step change (shared/storage/journal.ts): the
 * service is killed with SIGKILL at each step of a 200-instance reshape (the
 * DynamoDB request of that step held back by a proxy, so that the kill lands
 * exactly there), then started again on the same DynamoDB Local. The reshape
 * must read wholly there or wholly absent at once, the tree must take claims
 * again within seconds, and once the sweeper ran nothing of the change may
 * be left in the table, and no entry (storage format 3: capacity entries
 * the reshape moves with every provider it changes) disagree with its
 * provider.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { reshapeVgpuToChild } from '../../../../scripts/lib/big-changes.js';
import { PlacementClient } from '../../../../admin/placement-client.js';
import { sweepChanges } from '../../../../shared/storage/commit/journal.js';
import { isApply, isCommit, isFence, isFinish, isStaging, nth } from '../../../support/journal-requests.js';
import { claimsTakenAgain, leftovers, reshapeState } from '../../../support/reshape-state.js';
import { startServiceProcess, type ServiceProcess } from '../../../support/service-process.js';
import { useProxiedDynamoDbLocal } from '../../../support/proxied-dynamodb-local.js';
import { verifyAllEntries } from '../../../support/entries.js';

const INSTANCES = 200;

const KILL_POINTS = [
  { step: 'staging (third batch of staged writes)', matches: nth(3, isStaging), outcome: 'absent' },
  { step: 'fencing (200th fence)', matches: nth(200, isFence), outcome: 'absent' },
  { step: 'committing (the commit itself held back)', matches: nth(1, isCommit), outcome: 'absent' },
  { step: 'just committed (first write applied held back)', matches: nth(1, isApply), outcome: 'there' },
  { step: 'applying (300th write applied)', matches: nth(300, isApply), outcome: 'there' },
  { step: 'finishing (marking it finished held back)', matches: nth(1, isFinish), outcome: 'there' },
] as const;

describe('a 200-instance reshape killed at each step', () => {
  const table = useProxiedDynamoDbLocal();
  let service: ServiceProcess | undefined;
  const timings: string[] = [];

  afterAll(async () => {
    await service?.stop();
    console.log(['| killed while | found after restart | claims taken again after |', '|---|---|---|', ...timings].join('\n'));
  });

  for (const point of KILL_POINTS) {
    it(`${point.step}: wholly ${point.outcome} after a restart, claims taken again within seconds, nothing left once swept`, async () => {
      service = await startServiceProcess({ dynamoDbEndpoint: table.proxy.url });
      let placement = new PlacementClient(service.url, { timeoutMs: 300_000 });
      const plan = reshapeVgpuToChild.plan(INSTANCES);
      await reshapeVgpuToChild.prepare(placement, plan);
      expect(await reshapeState(placement, plan)).toBe('absent');

      const held = table.proxy.holdNext(point.matches);
      const reshape = reshapeVgpuToChild.change(placement, plan).catch((error: Error) => error);
      await held;
      await service.kill();
      expect(await reshape).toBeInstanceOf(Error);

      const killed = Date.now();
      service = await startServiceProcess({ dynamoDbEndpoint: table.proxy.url });
      placement = new PlacementClient(service.url, { timeoutMs: 300_000 });
      expect(await reshapeState(placement, plan)).toBe(point.outcome);

      // A new instance on the host and a write of an instance the change holds: taken again once the lease passed.
      const seconds = await claimsTakenAgain(placement, plan);
      const sinceKill = (Date.now() - killed) / 1000;
      expect(seconds).toBeLessThan(30);
      expect(await reshapeState(placement, plan)).toBe(point.outcome);

      // The sweeper finishes what no request touched.
      const deadline = Date.now() + 60_000;
      while ((await leftovers()).openChanges > 0 && Date.now() < deadline) {
        await sweepChanges();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
      expect(await reshapeState(placement, plan)).toBe(point.outcome);
      expect(await verifyAllEntries()).toMatchObject({ disagreements: [], pending: 0 });
      timings.push(
        `| ${point.step} | wholly ${point.outcome} | ${seconds.toFixed(1)} s (${sinceKill.toFixed(0)} s after the kill, restart and state check included) |`,
      );
      await service.stop();
      service = undefined;
    }, 600_000);
  }
});
