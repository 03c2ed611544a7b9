/**
 * Hundreds of custom traits set on a provider or taken off it in one
 * change: their use counts go outside the commit (shared/storage/count-changes.ts),
 * raised ahead of it and lowered after it, each counted once. A request
 * that dies is made here by running a plan's steps without the rest: its
 * writes ahead and no commit, or its commit and nothing after.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { handler as sweeper } from '../../functions/change-sweeper.js';
import { config } from '../../shared/config.js';
import { totalUses, traits } from '../../shared/storage/catalog.js';
import { COUNT_CHANGES_PK } from '../../shared/storage/items/count-change.js';
import { getProvider, providerChangePlan } from '../../shared/storage/providers.js';
import { queryAll } from '../../shared/storage/reads.js';
import { commit, readPlanCommit } from '../../shared/storage/transaction.js';
import { withDeadline } from '../../shared/storage/deadline.js';
import { useLocalService } from '../support/local-service.js';

// The service's own sweeps (every 30 s) would race the test's: only the test sweeps.
const service = useLocalService(() => ({ PLACEMENT_LOCAL_SWEEP_SECONDS: '0' }));
let api: PlacementClient;
beforeAll(() => {
  api = new PlacementClient(service.url, { version: '1.39' });
});

const TRAITS = 150;

async function ok(response: Promise<{ status: number; body: any }>, status: number) {
  const answer = await response;
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return answer.body;
}

/** New custom traits, created 20 at a time. */
async function customTraits(count: number): Promise<string[]> {
  const names = Array.from({ length: count }, () => `CUSTOM_${randomUUID().replaceAll('-', '_').toUpperCase()}`);
  for (let n = 0; n < names.length; n += 20) await Promise.all(names.slice(n, n + 20).map((name) => ok(api.put(`/traits/${name}`, undefined), 201)));
  return names;
}

async function provider(): Promise<string> {
  const uuid = randomUUID();
  await ok(api.post('/resource_providers', { uuid, name: `node-${uuid}` }), 200);
  return uuid;
}

/** Each name's use count, summed over its shards; 20 names at a time. */
async function uses(names: string[]): Promise<number[]> {
  const counts: number[] = [];
  for (let n = 0; n < names.length; n += 20) {
    counts.push(...(await Promise.all(names.slice(n, n + 20).map(async (name) => totalUses((await traits.useCount(name))!)))));
  }
  return counts;
}

const openCountChanges = async () => (await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': COUNT_CHANGES_PK } })).length;

const same = (count: number) => Array.from({ length: TRAITS }, () => count);

describe('hundreds of custom traits in one change', () => {
  it('counts each once, refuses its deletion while it is used, and counts it off when taken away', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    expect((await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names }), 200)).traits).toHaveLength(TRAITS);
    expect(await uses(names)).toEqual(same(1));
    expect(await openCountChanges()).toBe(0);
    await ok(api.delete(`/traits/${names[0]}`), 409);

    await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits: names.slice(0, 10) }), 200);
    expect(await uses(names)).toEqual([...Array.from({ length: 10 }, () => 1), ...same(0).slice(10)]);
    await ok(api.delete(`/traits/${names[10]}`), 204);
    await ok(api.delete(`/resource_providers/${uuid}`), 204);
    expect(await uses(names.slice(0, 10))).toEqual(Array.from({ length: 10 }, () => 0));
    expect(await openCountChanges()).toBe(0);
  }, 120_000);

  it('takes back what it counted ahead when a name turns out unknown', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    await ok(api.delete(`/traits/${names[TRAITS - 1]}`), 204);
    const before = (await getProvider(uuid))!;
    const change = readPlanCommit(async () => providerChangePlan(before, { ...before, traits: names, generation: 1 }));
    await expect(change).rejects.toThrow(`unknown trait ${names[TRAITS - 1]}`);
    expect(await uses(names.slice(0, -1))).toEqual(same(0).slice(1));
    expect(await openCountChanges()).toBe(0);
    expect((await getProvider(uuid))!.generation).toBe(0);
  }, 120_000);

  it('takes back what it counted ahead of a commit that met a concurrent writer, and counts the retry once', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    const stale = (await getProvider(uuid))!;
    await ok(api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } }), 200);
    let attempts = 0;
    await readPlanCommit(async (retry) => {
      attempts++;
      const before = retry === 0 ? stale : (await getProvider(uuid))!;
      return providerChangePlan(before, { ...before, traits: names, generation: before.generation + 1 });
    });
    expect(attempts).toBe(2);
    expect(await uses(names)).toEqual(same(1));
    expect(await openCountChanges()).toBe(0);
  }, 120_000);

  it('leaves what a request that died before its commit counted ahead to the sweeper, once its hold has ended', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    const before = (await getProvider(uuid))!;
    // Planned and written ahead under a request of 10 s that then dies: no commit, nothing taken back.
    const heldUntil = Date.now() + 10_000 + config.changeLeaseMs;
    await withDeadline(Date.now() + 10_000, () => providerChangePlan(before, { ...before, traits: names, generation: 1 }).beforeCommit!());
    expect(await uses(names)).toEqual(same(1));
    await ok(api.delete(`/traits/${names[0]}`), 409);
    expect((await sweeper()).countChanges).toBe(0);

    await sleep(heldUntil - Date.now() + 500);
    expect((await sweeper()).countChanges).toBe(1);
    expect(await uses(names)).toEqual(same(0));
    expect(await openCountChanges()).toBe(0);
    await ok(api.delete(`/traits/${names[0]}`), 204);
    expect((await getProvider(uuid))!.traits).toEqual([]);
  }, 120_000);

  it('leaves the counts a request that died after its commit did not lower to the sweeper, once its lease has passed', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names }), 200);
    const before = (await getProvider(uuid))!;
    await commit(providerChangePlan(before, undefined).writes);
    const due = Date.now() + config.changeLeaseMs;
    expect((await sweeper()).countChanges).toBe(0);
    expect(await getProvider(uuid)).toBeUndefined();
    expect(await uses(names)).toEqual(same(1));

    await sleep(due - Date.now() + 500);
    expect((await sweeper()).countChanges).toBe(1);
    expect(await uses(names)).toEqual(same(0));
    expect(await openCountChanges()).toBe(0);
    await ok(api.delete(`/traits/${names[0]}`), 204);
  }, 120_000);

  it('lowers each count once however many finish the same change at once', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names }), 200);
    const before = (await getProvider(uuid))!;
    const plan = providerChangePlan(before, undefined);
    await commit(plan.writes);
    await Promise.all([plan.afterCommit!(), plan.afterCommit!(), plan.afterCommit!()]);
    expect(await uses(names)).toEqual(same(0));
    expect(await openCountChanges()).toBe(0);
  }, 120_000);
});
