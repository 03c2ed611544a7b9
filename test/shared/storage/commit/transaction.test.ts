import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getProvider, providerChangeWrites } from '../../../../shared/storage/providers.js';
import { commit } from '../../../../shared/storage/commit/transaction.js';
import { ConcurrentUpdate } from '../../../../shared/storage/errors.js';
import { useLocalService } from '../../../support/local-service.js';

const CLIENTS = 32;
const CLAIMS_PER_CLIENT = 10;
const CAPACITY = 100;

const service = useLocalService();
const api = service.client({ token: 'admin', version: '1.28' });

describe('concurrent claims on one provider', () => {
  it('never overcommits and lands every acknowledged claim', async () => {
    const providerUuid = randomUUID();
    const created = await api('POST', '/resource_providers', { name: `claims-${providerUuid}`, uuid: providerUuid });
    expect(created.status).toBe(200);
    const inventory = await api('PUT', `/resource_providers/${providerUuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: CAPACITY } },
    });
    expect(inventory.status, JSON.stringify(inventory.body)).toBe(200);

    const statuses: number[] = [];
    const conflictCodes: string[] = [];
    const succeeded: string[] = [];
    const worker = async () => {
      for (let n = 0; n < CLAIMS_PER_CLIENT; n++) {
        const consumer = randomUUID();
        const response = await api('PUT', `/allocations/${consumer}`, {
          allocations: { [providerUuid]: { resources: { VCPU: 1 } } },
          project_id: 'concurrency-project',
          user_id: 'concurrency-user',
          consumer_generation: null,
        });
        statuses.push(response.status);
        if (response.status === 204) succeeded.push(consumer);
        if (response.status === 409) conflictCodes.push(response.body.errors[0].code);
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, worker));

    const usages = await api('GET', `/resource_providers/${providerUuid}/usages`);
    expect(usages.status).toBe(200);
    const used = usages.body.usages.VCPU as number;
    const allocations = await api('GET', `/resource_providers/${providerUuid}/allocations`);
    const holders = Object.keys(allocations.body.allocations).sort();

    const count = (status: number) => statuses.filter((s) => s === status).length;
    console.log(
      `concurrent claims: ${statuses.length} requests, ${count(204)} x 204, ${count(409)} x 409 ` +
        `(${conflictCodes.filter((code) => code === 'placement.concurrent_update').length} concurrent_update), usage ${used}/${CAPACITY}, ` +
        `provider generation ${usages.body.resource_provider_generation}`,
    );

    expect(statuses).toHaveLength(CLIENTS * CLAIMS_PER_CLIENT);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
    expect(statuses.every((status) => status === 204 || status === 409)).toBe(true);
    expect(count(204)).toBe(used);
    expect(used).toBeLessThanOrEqual(CAPACITY);
    expect(count(204)).toBeGreaterThanOrEqual(90);
    // Exactly the acknowledged consumers hold allocations, one generation bump each (+1 for the inventory).
    expect(holders).toEqual([...succeeded].sort());
    expect(usages.body.resource_provider_generation).toBe(1 + used);
  });
});

describe('a provider changed while its children change', () => {
  it('refuses the stale write instead of losing the child', async () => {
    const parent = randomUUID();
    expect((await api('POST', '/resource_providers', { name: `parent-${parent}`, uuid: parent })).status).toBe(200);
    const read = (await getProvider(parent))!;
    // A child lands between this read and the write below; it only links itself into the parent.
    const created = await api('POST', '/resource_providers', { name: `child-${parent}`, parent_provider_uuid: parent });
    expect(created.status).toBe(200);
    const renamed = { ...read, name: `renamed-${parent}`, generation: read.generation + 1 };
    await expect(commit(providerChangeWrites(read, renamed))).rejects.toBeInstanceOf(ConcurrentUpdate);
    expect((await getProvider(parent))!.children).toEqual([created.body.uuid]);
    // The parent cannot be deleted while it has a child.
    expect((await api('DELETE', `/resource_providers/${parent}`)).status).toBe(409);
  });

  it('refuses the stale write when one child replaced another, though their number is the same', async () => {
    const parent = randomUUID();
    expect((await api('POST', '/resource_providers', { name: `parent-${parent}`, uuid: parent })).status).toBe(200);
    const first = await api('POST', '/resource_providers', { name: `first-${parent}`, parent_provider_uuid: parent });
    const read = (await getProvider(parent))!;
    expect(read.children).toEqual([first.body.uuid]);
    expect((await api('DELETE', `/resource_providers/${first.body.uuid}`)).status).toBe(204);
    const second = await api('POST', '/resource_providers', { name: `second-${parent}`, parent_provider_uuid: parent });
    const renamed = { ...read, name: `renamed-${parent}`, generation: read.generation + 1 };
    await expect(commit(providerChangeWrites(read, renamed))).rejects.toBeInstanceOf(ConcurrentUpdate);
    expect((await getProvider(parent))!.children).toEqual([second.body.uuid]);
  });

  it('writes a parent whose children are unchanged, whatever order they were read in', async () => {
    const parent = randomUUID();
    expect((await api('POST', '/resource_providers', { name: `parent-${parent}`, uuid: parent })).status).toBe(200);
    const children: string[] = [];
    for (const n of [1, 2, 3]) children.push((await api('POST', '/resource_providers', { name: `c${n}-${parent}`, parent_provider_uuid: parent })).body.uuid);
    const read = (await getProvider(parent))!;
    const renamed = { ...read, name: `renamed-${parent}`, generation: read.generation + 1 };
    await commit(providerChangeWrites({ ...read, children: [...read.children].reverse() }, renamed));
    expect(await getProvider(parent)).toMatchObject({ name: `renamed-${parent}`, children: [...children].sort() });
  });
});
