/**
 * Storage format 3's entries (shared/storage/entries/) through every write
 * that changes them: after each, the verify over the whole table finds no
 * disagreement, and the capacity entries say what the providers say. A
 * disagreement planted by hand is named.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../../../admin/placement-client.js';
import { putItem, deleteItem, tableName, updateItem } from '../../../../shared/storage/dynamodb.js';
import { catalogEntryKey, TRAITS_PK } from '../../../../shared/storage/items/catalog-entry.js';
import { queryAll } from '../../../../shared/storage/reads.js';
import { capacityPartitions, capacitySortFrom, decodeCapacityEntry, encodeCapacityEntry } from '../../../../shared/storage/items/capacity-entry.js';
import { traitHolderKey, traitPartition } from '../../../../shared/storage/items/search-entry.js';
import { useLocalService } from '../../../support/local-service.js';
import { verifyAllEntries } from '../../../support/entries.js';

// Only the test sweeps: the entries a committed change leaves to remove are counted as pending until it does.
const service = useLocalService(() => ({ PLACEMENT_LOCAL_SWEEP_SECONDS: '0' }));
let api: PlacementClient;
beforeAll(() => {
  api = new PlacementClient(service.url, { version: '1.39' });
});

async function ok(response: Promise<{ status: number; body: any }>, ...statuses: number[]) {
  const answer = await response;
  expect(statuses, JSON.stringify(answer.body)).toContain(answer.status);
  return answer.body;
}

/** No disagreement between the entries and the providers, and only `pending` entries left for a committed change's cleanup. */
async function entriesAgree(step: string, pending = 0) {
  const verdict = await verifyAllEntries();
  expect(verdict.disagreements, step).toEqual([]);
  expect(verdict.pending, step).toBe(pending);
  return verdict;
}

/** The capacity entries of a class, as [provider, most] pairs, read by key from "at least `atLeast`" on. */
async function withRoomFor(resourceClass: string, atLeast = 0): Promise<[string, number][]> {
  const pages = await Promise.all(
    capacityPartitions(resourceClass).map((pk) =>
      queryAll({ KeyConditionExpression: 'pk = :pk AND sk >= :from', ExpressionAttributeValues: { ':pk': pk, ':from': capacitySortFrom(atLeast) } }),
    ),
  );
  return pages
    .flat()
    .map((item) => decodeCapacityEntry(item, resourceClass))
    .map(({ uuid, room }): [string, number] => [uuid, room])
    .sort();
}

async function provider(name: string, parent?: string): Promise<string> {
  const uuid = randomUUID();
  await ok(api.post('/resource_providers', { uuid, name, ...(parent && { parent_provider_uuid: parent }) }), 200);
  return uuid;
}

const generation = async (uuid: string): Promise<number> => (await ok(api.get(`/resource_providers/${uuid}`), 200)).generation;

const claim = (consumer: string, allocations: Record<string, Record<string, number>>, consumerGeneration: number | null = null) =>
  api.put(`/allocations/${consumer}`, {
    allocations: Object.fromEntries(Object.entries(allocations).map(([uuid, resources]) => [uuid, { resources }])),
    project_id: 'p',
    user_id: 'u',
    consumer_generation: consumerGeneration,
    consumer_type: 'INSTANCE',
  });

describe("format 3's entries, kept by every write", () => {
  let host: string;
  let numa: string;
  const instance = randomUUID();
  const fpgaUser = randomUUID();

  it('are written with a provider\'s inventories and traits, and "at least n" reads exactly the providers with room', async () => {
    host = await provider('host-1');
    numa = await provider('host-1-numa0', host);
    await ok(
      api.put(`/resource_providers/${host}/inventories`, {
        resource_provider_generation: 0,
        inventories: { VCPU: { total: 16, allocation_ratio: 4, max_unit: 16 }, MEMORY_MB: { total: 65536, step_size: 256, min_unit: 256 } },
      }),
      200,
    );
    await ok(api.put(`/resource_providers/${numa}/inventories`, { resource_provider_generation: 0, inventories: { PCPU: { total: 8 } } }), 200);
    await ok(
      api.put(`/resource_providers/${host}/traits`, { resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX2', 'COMPUTE_VOLUME_MULTI_ATTACH'] }),
      200,
    );
    const verdict = await entriesAgree('created');
    expect(verdict.providers).toBe(2);
    expect(await withRoomFor('VCPU')).toEqual([[host, 16]]);
    expect(await withRoomFor('MEMORY_MB', 65537)).toEqual([]);
    expect(await withRoomFor('PCPU', 8)).toEqual([[numa, 8]]);
    expect(await withRoomFor('PCPU', 9)).toEqual([]);
    const holders = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': traitPartition('HW_CPU_X86_AVX2') } });
    expect(holders.map((item) => item.uuid)).toEqual([host]);
  });

  it('move with claims on a tree, with allocations moved and removed', async () => {
    await ok(claim(instance, { [host]: { VCPU: 2, MEMORY_MB: 4096 }, [numa]: { PCPU: 6 } }), 204);
    await entriesAgree('claimed');
    // 64 VCPU free, 16 at most at once: no move; memory and PCPU moved.
    expect(await withRoomFor('VCPU')).toEqual([[host, 16]]);
    expect(await withRoomFor('MEMORY_MB')).toEqual([[host, 61440]]);
    expect(await withRoomFor('PCPU', 3)).toEqual([]);
    // The consumer's allocations moved (some classes grow, others go) and others claimed beside them at once.
    const others = Array.from({ length: 4 }, () => randomUUID());
    await Promise.all([
      ok(claim(instance, { [host]: { VCPU: 16, MEMORY_MB: 8192 } }, 1), 204, 409),
      ...others.map((consumer) => ok(claim(consumer, { [numa]: { PCPU: 1 } }), 204, 409)),
    ]);
    await entriesAgree('moved and claimed concurrently');
    await ok(api.delete(`/allocations/${instance}`), 204);
    await Promise.all(others.map((consumer) => ok(api.delete(`/allocations/${consumer}`), 204, 404)));
    await entriesAgree('removed');
    expect(await withRoomFor('PCPU', 8)).toEqual([[numa, 8]]);
  });

  it('move with POST /allocations of several consumers and with a reshape', async () => {
    const consumers = Array.from({ length: 30 }, () => randomUUID());
    const body = Object.fromEntries(
      consumers.map((consumer) => [
        consumer,
        {
          allocations: { [host]: { resources: { VCPU: 1, MEMORY_MB: 256 } } },
          project_id: 'p',
          user_id: 'u',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        },
      ]),
    );
    await ok(api.post('/allocations', body), 204);
    await entriesAgree('30 consumers in one POST /allocations');
    // A reshape: PCPU moves from the NUMA child to the host, with a consumer's allocation.
    const pinned = randomUUID();
    await ok(claim(pinned, { [numa]: { PCPU: 2 } }), 204);
    const [hostGeneration, numaGeneration] = [await generation(host), await generation(numa)];
    const pinnedGeneration = (await ok(api.get(`/allocations/${pinned}`), 200)).consumer_generation;
    const hostInventories = (await ok(api.get(`/resource_providers/${host}/inventories`), 200)).inventories;
    await ok(
      api.post('/reshaper', {
        inventories: {
          [host]: { resource_provider_generation: hostGeneration, inventories: { ...hostInventories, PCPU: { total: 8 } } },
          [numa]: { resource_provider_generation: numaGeneration, inventories: {} },
        },
        allocations: {
          [pinned]: {
            allocations: { [host]: { resources: { PCPU: 2 } } },
            project_id: 'p',
            user_id: 'u',
            consumer_generation: pinnedGeneration,
            consumer_type: 'INSTANCE',
          },
        },
      }),
      204,
    );
    await entriesAgree('reshaped');
    expect(await withRoomFor('PCPU')).toEqual([[host, 6]]);
    for (const consumer of [...consumers, pinned]) await ok(api.delete(`/allocations/${consumer}`), 204);
    await entriesAgree('every consumer gone');
  });

  it('move with inventories changed one class at a time, and with a class renamed', async () => {
    await ok(
      api.put(`/resource_providers/${host}/inventories/MEMORY_MB`, { resource_provider_generation: await generation(host), total: 1024, max_unit: 512 }),
      200,
    );
    expect(await withRoomFor('MEMORY_MB')).toEqual([[host, 512]]);
    await ok(api.delete(`/resource_providers/${host}/inventories/PCPU`), 204);
    await ok(api.post('/resource_classes', { name: 'CUSTOM_FPGA' }), 201);
    await ok(
      api.put(`/resource_providers/${numa}/inventories`, { resource_provider_generation: await generation(numa), inventories: { CUSTOM_FPGA: { total: 2 } } }),
      200,
    );
    await ok(claim(fpgaUser, { [numa]: { CUSTOM_FPGA: 1 } }), 204);
    await ok(api.put('/resource_classes/CUSTOM_FPGA', { name: 'CUSTOM_FPGA_V2' }, { version: '1.6' }), 200);
    await entriesAgree('renamed');
    expect(await withRoomFor('CUSTOM_FPGA')).toEqual([]);
    expect(await withRoomFor('CUSTOM_FPGA_V2')).toEqual([[numa, 1]]);
  });

  it('move with a claim of more classes than one update expression holds (the provider written whole)', async () => {
    const names = Array.from({ length: 32 }, (_, n) => `CUSTOM_WIDE_${n}`);
    for (const name of names) await ok(api.put(`/resource_classes/${name}`, undefined, { version: '1.7' }), 201, 204);
    const wide = await provider('wide');
    await ok(
      api.put(`/resource_providers/${wide}/inventories`, {
        resource_provider_generation: 0,
        inventories: Object.fromEntries(names.map((name) => [name, { total: 4 }])),
      }),
      200,
    );
    await ok(claim(randomUUID(), { [wide]: Object.fromEntries(names.map((name) => [name, 3])) }), 204);
    await entriesAgree('a claim of 32 classes');
    expect(await withRoomFor('CUSTOM_WIDE_31')).toEqual([[wide, 1]]);
  });

  it('follow traits in the hundreds (written ahead of the commit, removed after it) and a provider deleted', async () => {
    const names = Array.from({ length: 150 }, (_, n) => `CUSTOM_MANY_${n}`);
    for (const name of names) await ok(api.put(`/traits/${name}`, undefined), 201, 204);
    const many = await provider('many-traits');
    await ok(api.put(`/resource_providers/${many}/traits`, { resource_provider_generation: 0, traits: names }), 200);
    await entriesAgree('150 traits set');
    await ok(api.put(`/resource_providers/${many}/traits`, { resource_provider_generation: 1, traits: names.slice(0, 10) }), 200);
    // Written ahead a moment ago, they are held against every cleanup for a minute: the sweeper removes them after it.
    await entriesAgree('140 traits taken away', 140);
    await ok(api.delete(`/resource_providers/${many}`), 204);
    await ok(api.delete(`/allocations/${fpgaUser}`), 204);
    await ok(api.delete(`/resource_providers/${numa}`), 204);
    // A move of the host under another root changes no entry.
    const root = await provider('new-root');
    await ok(api.put(`/resource_providers/${host}`, { name: 'host-1', parent_provider_uuid: root }, { version: '1.37' }), 200);
    await entriesAgree('deleted and moved', 140);
    expect(await withRoomFor('PCPU')).toEqual([]);
  });

  it('name what disagrees with the providers: a capacity entry that says too much, a trait holder missing, an entry of a provider gone, a trait held whose catalog entry names no holder', async () => {
    const gone = randomUUID();
    await updateItem({ TableName: tableName(), Key: catalogEntryKey(TRAITS_PK, 'COMPUTE_VOLUME_MULTI_ATTACH'), UpdateExpression: 'REMOVE holder' });
    const wrong = encodeCapacityEntry({ resourceClass: 'VCPU', uuid: host, room: 9, minUnit: 1, stepSize: 1 });
    await putItem({ TableName: tableName(), Item: wrong });
    await putItem({ TableName: tableName(), Item: encodeCapacityEntry({ resourceClass: 'DISK_GB', uuid: gone, room: 100, minUnit: 1, stepSize: 1 }) });
    await deleteItem({ TableName: tableName(), Key: traitHolderKey('HW_CPU_X86_AVX2', host) });
    const { disagreements } = await verifyAllEntries();
    expect(disagreements).toEqual(
      expect.arrayContaining([
        { provider: host, entry: `${traitPartition('HW_CPU_X86_AVX2')} RP#${host}`, subject: 'trait HW_CPU_X86_AVX2', problem: 'missing' },
        { provider: host, entry: `${wrong.pk} ${wrong.sk}`, subject: 'capacity VCPU', problem: 'says room for 9, its provider 16' },
        expect.objectContaining({ provider: gone, subject: 'capacity DISK_GB', problem: 'its provider is gone' }),
        {
          provider: host,
          entry: `${traitPartition('COMPUTE_VOLUME_MULTI_ATTACH')} RP#${host}`,
          subject: 'trait COMPUTE_VOLUME_MULTI_ATTACH',
          problem: 'its provider holds the trait, whose catalog entry names no holder',
        },
      ]),
    );
    expect(disagreements).toHaveLength(4);
  });
});
