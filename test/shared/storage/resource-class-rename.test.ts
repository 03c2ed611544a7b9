/**
 * Renaming a custom class in use (shared/storage/resource-class-rename.ts)
 * while claims, allocation deletes and inventory writes naming it race the
 * rename: each lands before it (and is renamed with the rest) or after it
 * (under the new name, or refused with a 4xx), so that once the rename has
 * answered no item of the table names the old class, each provider's usage is
 * what its consumers hold, and the new name counts exactly its inventories.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renameClassInUse } from '../../../scripts/lib/big-changes.js';
import { PlacementClient } from '../../../admin/placement-client.js';
import { useLocalService } from '../../support/local-service.js';
import { stateItemsNaming } from '../../support/reshape-state.js';

const PROVIDERS = 60;

const service = useLocalService();

describe('renaming a class in use while writers name it', () => {
  it('leaves no item naming the old class, usages that add up and exact use counts', async () => {
    const placement = new PlacementClient(service.url, { timeoutMs: 300_000 });
    const plan = renameClassInUse.plan(PROVIDERS);
    await renameClassInUse.prepare(placement, plan);

    const pick = <T>(items: readonly T[]) => items[Math.floor(Math.random() * items.length)]!;
    const statuses: Record<string, Set<number>> = { claim: new Set(), delete: new Set(), inventory: new Set() };
    const racers = Array.from({ length: 6 }, async (_, racer) => {
      for (let round = 0; round < 4; round++) {
        const provider = pick(plan.providers);
        const name = Math.random() < 0.5 ? plan.from : plan.to;
        if (racer % 3 === 0) {
          const claim = await placement.put(
            `/allocations/${randomUUID()}`,
            { allocations: { [provider]: { resources: { [name]: 1, VCPU: 1 } } }, project_id: 'race', user_id: 'race', consumer_generation: null },
            { version: '1.28' },
          );
          statuses.claim!.add(claim.status);
        } else if (racer % 3 === 1) {
          statuses.delete!.add((await placement.delete(`/allocations/${pick(plan.consumers)}`, { version: '1.28' })).status);
        } else {
          const { resource_provider_generation } = (await placement.get(`/resource_providers/${provider}/inventories`, { version: '1.6' })).body;
          const inventories = { VCPU: { total: 8 }, [name]: { total: 10 + round } };
          const written = await placement.put(`/resource_providers/${provider}/inventories`, { resource_provider_generation, inventories }, { version: '1.6' });
          statuses.inventory!.add(written.status);
        }
      }
    });
    // A rename that lost to the racers every time answers 409 (placement.concurrent_update), as a claim that lost does; sent again.
    let rename = await renameClassInUse.change(placement, plan);
    for (let attempt = 0; rename.status === 409 && attempt < 5; attempt++) {
      expect(rename.body.errors[0].detail).toContain('Another thread concurrently updated the data');
      rename = await renameClassInUse.change(placement, plan);
    }
    await Promise.all(racers);
    expect(rename.status, rename.text).toBe(200);
    // Refusals are 4xx: the old name unknown after the rename, the new one before it, generations or inventories in use.
    for (const [kind, seen] of Object.entries(statuses)) for (const status of seen) expect(status, `${kind}: ${[...seen]}`).toBeLessThan(500);

    expect(await stateItemsNaming(plan.from)).toBe(0);

    let stocked = 0;
    for (const uuid of plan.providers) {
      const { inventories } = (await placement.get(`/resource_providers/${uuid}/inventories`, { version: '1.6' })).body;
      if (inventories[plan.to] !== undefined) stocked++;
      const { usages } = (await placement.get(`/resource_providers/${uuid}/usages`, { version: '1.6' })).body;
      const held: Record<string, number> = {};
      for (const { resources } of Object.values((await placement.get(`/resource_providers/${uuid}/allocations`, { version: '1.6' })).body.allocations) as {
        resources: Record<string, number>;
      }[]) {
        for (const [resourceClass, amount] of Object.entries(resources)) held[resourceClass] = (held[resourceClass] ?? 0) + amount;
      }
      expect(Object.fromEntries(Object.entries(usages).filter(([, amount]) => amount !== 0))).toEqual(held);
    }
    const { resourceClasses, totalUses } = await import('../../../shared/storage/catalog.js');
    const count = await resourceClasses.useCount(plan.to);
    expect(count && totalUses(count)).toBe(stocked);
  }, 600_000);
});
