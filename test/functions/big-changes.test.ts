/**
 * Changes bigger than one DynamoDB transaction (scripts/lib/big-changes.ts)
 * at the sizes nova and operators send, against this service and the real
 * Placement: both must answer alike and leave the same state behind.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  clearManyAggregates,
  deleteProviderWithManyTraits,
  manyAggregates,
  manyTraits,
  moveSubtree,
  postManyAllocations,
  reshapeVcpuToPcpu,
  reshapeVgpuToChild,
  type BigChange,
} from '../../scripts/lib/big-changes.js';
import { PlacementClient } from '../../scripts/lib/placement-client.js';
import { useLocalService } from '../support/local-service.js';
import { startReference } from '../support/reference.js';

const { reference, reason } = await startReference();
afterAll(async () => {
  await reference?.stop();
});

const CASES: [BigChange<any>, number][] = [
  [reshapeVgpuToChild, 200],
  [reshapeVcpuToPcpu, 200],
  [postManyAllocations, 200],
  [moveSubtree, 200],
  [manyAggregates, 300],
  [clearManyAggregates, 300],
  [manyTraits, 300],
  [deleteProviderWithManyTraits, 300],
];

describe.skipIf(reference === undefined)(`changes bigger than one transaction, against the real Placement${reason ? ` (skipped: ${reason})` : ''}`, () => {
  const ours = useLocalService();

  for (const [scenario, size] of CASES) {
    it(`${scenario.name} (${size}): the same answer and the same state as upstream`, async () => {
      const plan = scenario.plan(size);
      const outcomes = [];
      for (const url of [ours.url, reference!.url]) {
        const placement = new PlacementClient(url, { timeoutMs: 300_000 });
        await scenario.prepare(placement, plan);
        const response = await scenario.change(placement, plan);
        outcomes.push({ status: response.status, state: await scenario.snapshot(placement, plan) });
      }
      const [target, upstream] = outcomes;
      expect(target!.status, JSON.stringify(target)).toBeLessThan(300);
      expect(target!.status).toBe(upstream!.status);
      expect(target!.state).toEqual(upstream!.state);
    }, 900_000);
  }
});
