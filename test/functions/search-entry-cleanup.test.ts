/**
 * Deleting a provider in hundreds of aggregates, or taking hundreds away
 * (shared/storage/providers.ts providerChangePlan): the search entries that
 * no longer agree are removed after the commit, by the request or by the
 * sweeper, and until they are, no reader takes them. A deletion whose request died
 * between its commit and its cleanup is made here by committing the
 * deletion's writes without what follows them; the sweeper then finishes it.
 * Adding hundreds writes their entries ahead of the commit, held against
 * every cleanup until it; a request that dies before its commit is made by
 * writing the entries ahead and committing nothing.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { handler as sweeper } from '../../functions/change-sweeper.js';
import { config } from '../../shared/config.js';
import { ENTRY_CLEANUPS_PK } from '../../shared/storage/items/entry-cleanup.js';
import { aggregatePartition, SHARING_PK, sharingPartition } from '../../shared/storage/items/search-entry.js';
import { getProvider, providerChangePlan } from '../../shared/storage/providers.js';
import { queryAll } from '../../shared/storage/reads.js';
import { commit } from '../../shared/storage/commit/transaction.js';
import { withDeadline } from '../../shared/storage/deadline.js';
import { useLocalService } from '../support/local-service.js';

// The service's own sweeps (every 30 s) would race the test's: only the test sweeps.
const service = useLocalService(() => ({ PLACEMENT_LOCAL_SWEEP_SECONDS: '0' }));
let api: PlacementClient;
beforeAll(() => {
  api = new PlacementClient(service.url, { version: '1.39' });
});

const AGGREGATES = 300;

async function ok(response: Promise<{ status: number; body: any }>, status: number) {
  const answer = await response;
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return answer.body;
}

/**
 * A provider sharing DISK_GB through the aggregates (2 search entries each, one more for sharing): a deletion past one transaction.
 * They are added 30 a request, each in one transaction: entries written ahead of a bigger change would be held against the
 * cleanups these tests make for a minute.
 */
async function sharingPool(aggregates: string[]): Promise<string> {
  const uuid = randomUUID();
  await ok(api.post('/resource_providers', { uuid, name: `pool-${uuid}` }), 200);
  await ok(api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: { DISK_GB: { total: 1000 } } }), 200);
  await ok(api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits: ['MISC_SHARES_VIA_AGGREGATE'] }), 200);
  const steps = Math.max(1, Math.ceil(aggregates.length / 30));
  for (let step = 1; step <= steps; step++) {
    await ok(api.put(`/resource_providers/${uuid}/aggregates`, { resource_provider_generation: 1 + step, aggregates: aggregates.slice(0, 30 * step) }), 200);
  }
  return uuid;
}

/** A compute node in the first aggregate, which finds the pool's disk through it. */
async function computeNode(aggregate: string): Promise<string> {
  const uuid = randomUUID();
  await ok(api.post('/resource_providers', { uuid, name: `node-${uuid}` }), 200);
  await ok(api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } }), 200);
  await ok(api.put(`/resource_providers/${uuid}/aggregates`, { resource_provider_generation: 1, aggregates: [aggregate] }), 200);
  return uuid;
}

/** The stored search entries and entry cleanup items that name the provider. */
async function leftOf(uuid: string, aggregates: string[]) {
  const partitions = [...aggregates.map(aggregatePartition), ...aggregates.map(sharingPartition), SHARING_PK];
  const named = async (pk: string) =>
    (await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } })).filter((item) => item.uuid === uuid);
  const entries = (await Promise.all(partitions.map(named))).flat();
  return { entries: entries.length, cleanups: (await named(ENTRY_CLEANUPS_PK)).length };
}

/**
 * Every aggregate taken away from the provider by a request that died after its commit: its writes committed without
 * the cleanup the request does after them, which is left to the sweeper once its lease passes. Returns the provider before.
 */
async function takeAllAwayByADeadRequest(uuid: string) {
  const before = (await getProvider(uuid))!;
  const { writes, afterCommit } = providerChangePlan(before, { ...before, aggregates: [], generation: before.generation + 1 });
  expect(afterCommit).toBeDefined();
  await commit(writes);
  return before;
}

/** What readers answer about the aggregates: the member_of listing, the sharing listing, and the candidates the pool's disk could be in. */
async function readers(aggregates: string[]) {
  const members = await ok(api.get(`/resource_providers?member_of=in:${aggregates.slice(0, 5).join(',')}`), 200);
  const sharing = await ok(api.get(`/resource_providers?member_of=${aggregates[0]}&required=MISC_SHARES_VIA_AGGREGATE`), 200);
  const candidates = await ok(api.get(`/allocation_candidates?resources=VCPU:1,DISK_GB:10&member_of=${aggregates[0]}`), 200);
  return {
    members: members.resource_providers.map((provider: { uuid: string }) => provider.uuid).sort(),
    sharing: sharing.resource_providers.map((provider: { uuid: string }) => provider.uuid),
    disks: candidates.allocation_requests.filter((request: any) => Object.values(request.allocations).some((entry: any) => 'DISK_GB' in entry.resources))
      .length,
  };
}

describe('deleting a provider in hundreds of aggregates', () => {
  it('answers 204 and leaves none of its search entries, nor its cleanup', async () => {
    const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
    const pool = await sharingPool(aggregates);
    const node = await computeNode(aggregates[0]!);
    expect(await leftOf(pool, aggregates)).toEqual({ entries: 2 * AGGREGATES + 1, cleanups: 0 });
    expect(await readers(aggregates)).toEqual({ members: [node, pool].sort(), sharing: [pool], disks: 1 });

    await ok(api.delete(`/resource_providers/${pool}`), 204);

    expect(await leftOf(pool, aggregates)).toEqual({ entries: 0, cleanups: 0 });
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });
  }, 300_000);

  it('leaves more entries than one round of transactions removes to the sweeper, which may take them at once', async () => {
    const aggregates = Array.from({ length: 2 * AGGREGATES }, () => randomUUID());
    const pool = await sharingPool(aggregates);
    const node = await computeNode(aggregates[0]!);
    expect(providerChangePlan((await getProvider(pool))!, undefined).afterCommit).toBeUndefined();

    await ok(api.delete(`/resource_providers/${pool}`), 204);
    expect(await leftOf(pool, aggregates)).toEqual({ entries: 4 * AGGREGATES + 1, cleanups: 1 });
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });

    expect((await sweeper()).entryCleanups).toBe(1);
    expect(await leftOf(pool, aggregates)).toEqual({ entries: 0, cleanups: 0 });
  }, 300_000);

  it('when its request dies after the commit: readers take no leftover entry, a provider created again under the uuid is a new one, and the sweeper removes the rest', async () => {
    const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
    const [left, recreated] = [await sharingPool(aggregates), await sharingPool(aggregates)];
    const node = await computeNode(aggregates[0]!);

    // Each deletion's commit, without the cleanup its request does after it.
    for (const uuid of [left, recreated]) {
      const { writes, afterCommit } = providerChangePlan((await getProvider(uuid))!, undefined);
      expect(afterCommit).toBeDefined();
      await commit(writes);
    }
    expect(await leftOf(left, aggregates)).toEqual({ entries: 2 * AGGREGATES + 1, cleanups: 1 });
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });

    // The same uuid, in none of the aggregates and sharing nothing.
    await ok(api.post('/resource_providers', { uuid: recreated, name: `again-${recreated}` }), 200);
    await ok(api.put(`/resource_providers/${recreated}/inventories`, { resource_provider_generation: 0, inventories: { DISK_GB: { total: 1000 } } }), 200);
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });

    // Not before its request's lease has passed: that request may still be at it.
    expect((await sweeper()).entryCleanups).toBe(0);
    await sleep(config.changeLeaseMs);
    expect((await sweeper()).entryCleanups).toBe(2);
    expect(await leftOf(left, aggregates)).toEqual({ entries: 0, cleanups: 0 });
    // The recreated provider's cleanup stops at its first check: the entries stay, and still count for nothing.
    expect((await leftOf(recreated, aggregates)).cleanups).toBe(0);
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });
  }, 300_000);
});

describe('taking hundreds of aggregates away from a provider', () => {
  it('answers 200, keeps the entries of the aggregates that stay and removes the others', async () => {
    const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
    const pool = await sharingPool(aggregates);
    const node = await computeNode(aggregates[0]!);
    const kept = aggregates.slice(0, 2);

    const { generation } = (await getProvider(pool))!;
    await ok(api.put(`/resource_providers/${pool}/aggregates`, { resource_provider_generation: generation, aggregates: kept }), 200);

    expect(await leftOf(pool, aggregates)).toEqual({ entries: 2 * kept.length + 1, cleanups: 0 });
    expect(await readers(aggregates)).toEqual({ members: [node, pool].sort(), sharing: [pool], disks: 1 });
    const other = await ok(api.get(`/resource_providers?member_of=${aggregates[2]}`), 200);
    expect(other.resource_providers).toEqual([]);
  }, 300_000);

  it('when its request dies after the commit, and some are added again before the sweep: those stay, the rest go', async () => {
    const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
    const pool = await sharingPool(aggregates);
    const node = await computeNode(aggregates[0]!);
    const before = await takeAllAwayByADeadRequest(pool);
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });

    const again = aggregates.slice(0, 3);
    await ok(api.put(`/resource_providers/${pool}/aggregates`, { resource_provider_generation: before.generation + 1, aggregates: again }), 200);
    await sleep(config.changeLeaseMs);
    expect((await sweeper()).entryCleanups).toBe(1);

    expect(await leftOf(pool, aggregates)).toEqual({ entries: 2 * again.length + 1, cleanups: 0 });
    expect(await readers(aggregates)).toEqual({ members: [node, pool].sort(), sharing: [pool], disks: 1 });
  }, 300_000);
});

describe('adding hundreds of aggregates to a provider', () => {
  it('writes their entries ahead of the commit: answers 200, readers find the provider, no cleanup is left', async () => {
    const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
    const pool = await sharingPool([]);
    const node = await computeNode(aggregates[0]!);
    const before = (await getProvider(pool))!;
    expect(providerChangePlan(before, { ...before, aggregates, generation: before.generation + 1 }).beforeCommit).toBeDefined();

    await ok(api.put(`/resource_providers/${pool}/aggregates`, { resource_provider_generation: before.generation, aggregates }), 200);

    expect(await leftOf(pool, aggregates)).toEqual({ entries: 2 * AGGREGATES + 1, cleanups: 0 });
    expect(await readers(aggregates)).toEqual({ members: [node, pool].sort(), sharing: [pool], disks: 1 });
  }, 300_000);

  it("holds the entries it wrote ahead against an earlier removal's cleanup, which sees a provider listing none of them yet", async () => {
    const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
    const pool = await sharingPool(aggregates);
    const node = await computeNode(aggregates[0]!);
    await takeAllAwayByADeadRequest(pool);

    // All of them added again, the entries written ahead and the commit not yet made.
    const emptied = (await getProvider(pool))!;
    const addition = providerChangePlan(emptied, { ...emptied, aggregates, generation: emptied.generation + 1 });
    await addition.beforeCommit!();
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });
    await sleep(config.changeLeaseMs);
    expect((await sweeper()).entryCleanups).toBe(0);

    await commit(addition.writes);
    expect(await readers(aggregates)).toEqual({ members: [node, pool].sort(), sharing: [pool], disks: 1 });
    // The removal's cleanup now finds every aggregate listed again and keeps their entries.
    expect((await sweeper()).entryCleanups).toBe(1);
    expect(await leftOf(pool, aggregates)).toEqual({ entries: 2 * AGGREGATES + 1, cleanups: 0 });
    expect(await readers(aggregates)).toEqual({ members: [node, pool].sort(), sharing: [pool], disks: 1 });
  }, 300_000);

  it('when its request dies before the commit: readers take none of the entries it wrote ahead, and the sweeper removes them once their hold ends', async () => {
    const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
    const pool = await sharingPool([]);
    const node = await computeNode(aggregates[0]!);
    const before = (await getProvider(pool))!;
    // An invocation with 10 s left holds them for 10 s and a lease.
    await withDeadline(Date.now() + 10_000, () => providerChangePlan(before, { ...before, aggregates, generation: before.generation + 1 }).beforeCommit!());

    expect(await leftOf(pool, aggregates)).toEqual({ entries: 2 * AGGREGATES + 1, cleanups: 1 });
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });
    expect((await sweeper()).entryCleanups).toBe(0);

    await sleep(10_000 + config.changeLeaseMs);
    expect((await sweeper()).entryCleanups).toBe(1);
    // Left: the provider's sharing marker, which it had before.
    expect(await leftOf(pool, aggregates)).toEqual({ entries: 1, cleanups: 0 });
    expect(await readers(aggregates)).toEqual({ members: [node], sharing: [], disks: 0 });
  }, 300_000);
});
