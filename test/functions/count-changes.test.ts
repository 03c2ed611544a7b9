/**
 * Hundreds of custom traits set on a provider or taken off it in one
 * change: their use counts go outside the commit (shared/storage/commit/count-changes.ts),
 * raised ahead of it and owed after it (to the sweeper, or to the deletion
 * or rename of a name), each counted once. A request that dies before its
 * commit is made here by running a plan's steps without the rest.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { handler as sweeper } from '../../functions/change-sweeper.js';
import { config } from '../../shared/config.js';
import { totalUses, traits } from '../../shared/storage/catalog.js';
import { lowerCountsOwed, sweepCountChanges } from '../../shared/storage/commit/count-changes.js';
import { COUNT_CHANGES_PK } from '../../shared/storage/items/count-change.js';
import { getProvider, providerChangePlan } from '../../shared/storage/providers.js';
import { queryAll } from '../../shared/storage/reads.js';
import { readPlanCommit } from '../../shared/storage/commit/transaction.js';
import { withDeadline } from '../../shared/storage/deadline.js';
import { putItem, tableName } from '../../shared/storage/dynamodb.js';
import { encodeStorageFormat } from '../../shared/storage/items/storage-format.js';
import { useLocalService } from '../support/local-service.js';

// The service's own sweeps (every 30 s) would race the test's: only the test sweeps. The format is read on every request,
// so that a test may set the table's format.
const service = useLocalService(() => ({ PLACEMENT_LOCAL_SWEEP_SECONDS: '0', PLACEMENT_STORAGE_FORMAT_SECONDS: '0' }));
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
  it('counts each once, refuses its deletion while it is used, and lowers what it owes before deleting a name it stopped using', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    expect((await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names }), 200)).traits).toHaveLength(TRAITS);
    expect(await uses(names)).toEqual(same(1));
    expect(await openCountChanges()).toBe(0);
    await ok(api.delete(`/traits/${names[0]}`), 409);

    // Taking 140 away answers at its commit: their counts are owed, until a deletion of one of them lowers them all.
    await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits: names.slice(0, 10) }), 200);
    expect(await uses(names)).toEqual(same(1));
    expect(await openCountChanges()).toBe(1);
    await ok(api.delete(`/traits/${names[10]}`), 204);
    expect(await uses(names.slice(11))).toEqual(same(0).slice(11));
    expect(await uses(names.slice(0, 10))).toEqual(same(1).slice(0, 10));
    expect(await openCountChanges()).toBe(0);

    await ok(api.delete(`/resource_providers/${uuid}`), 204);
    await ok(api.delete(`/traits/${names[0]}`), 204);
    expect(await uses(names.slice(1, 10))).toEqual(same(0).slice(0, 9));
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

  it('leaves the counts a deletion lowers to the next sweep', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names }), 200);
    await ok(api.delete(`/resource_providers/${uuid}`), 204);
    expect(await uses(names)).toEqual(same(1));
    expect(await openCountChanges()).toBe(1);

    expect((await sweeper()).countChanges).toBe(1);
    expect(await uses(names)).toEqual(same(0));
    expect(await openCountChanges()).toBe(0);
    expect((await sweeper()).countChanges).toBe(0);
  }, 120_000);

  it('lowers each count once however many finish the same change at once', async () => {
    const names = await customTraits(TRAITS);
    const uuid = await provider();
    await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names }), 200);
    await ok(api.delete(`/resource_providers/${uuid}`), 204);
    await Promise.all([sweepCountChanges(), lowerCountsOwed('traits', names[0]!), lowerCountsOwed('traits', names[TRAITS - 1]!), sweepCountChanges()]);
    expect(await uses(names)).toEqual(same(0));
    expect(await openCountChanges()).toBe(0);
  }, 120_000);

  // On a table at format 2: from format 3 on, a change of hundreds of classes of a provider's inventory also moves as many
  // capacity entries, which a reader must find at its commit, so it commits in steps with its counts (multi-step-changes.md).
  it('lowers what it owes a custom class before deleting or renaming it (format 2)', async () => {
    await putItem({ TableName: tableName(), Item: encodeStorageFormat({ format: 2 }) });
    try {
      await owedClassCounts();
    } finally {
      await putItem({ TableName: tableName(), Item: encodeStorageFormat({ format: 3 }) });
    }
  }, 180_000);
});

/** A custom class's counts owed by a provider's deletion, lowered by the class's deletion, then by its rename. */
async function owedClassCounts() {
  const classes = Array.from({ length: TRAITS }, () => `CUSTOM_${randomUUID().replaceAll('-', '_').toUpperCase()}`);
  for (let n = 0; n < classes.length; n += 20)
    await Promise.all(classes.slice(n, n + 20).map((name) => ok(api.put(`/resource_classes/${name}`, undefined), 201)));
  const uuid = await provider();
  const inventories = Object.fromEntries(classes.map((name) => [name, { total: 1 }]));
  await ok(api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories }), 200);
  await ok(api.delete(`/resource_classes/${classes[0]}`), 409);
  await ok(api.delete(`/resource_providers/${uuid}`), 204);
  expect(await openCountChanges()).toBe(1);

  await ok(api.delete(`/resource_classes/${classes[0]}`), 204);
  expect(await openCountChanges()).toBe(0);
  // Owed again by a second provider's deletion, then renamed (1.2 to 1.6) before any sweep.
  const second = await provider();
  await ok(
    api.put(`/resource_providers/${second}/inventories`, { resource_provider_generation: 0, inventories: { ...inventories, [classes[0]!]: undefined } }),
    200,
  );
  await ok(api.delete(`/resource_providers/${second}`), 204);
  expect(await openCountChanges()).toBe(1);
  const renamed = `CUSTOM_RENAMED_${randomUUID().slice(0, 8).toUpperCase()}`;
  await ok(api.put(`/resource_classes/${classes[1]}`, { name: renamed }, { version: '1.6' }), 200);
  await ok(api.delete(`/resource_classes/${renamed}`), 204);
  expect(await openCountChanges()).toBe(0);
}
