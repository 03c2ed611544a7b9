/**
 * Renaming a custom resource class that inventories and allocations use
 * (PUT /resource_classes/{name} with a body, 1.2–1.6), against this service
 * and, when it can be started, the real Placement: upstream renames the class
 * in place, so every inventory, usage and allocation shows the new name, the
 * old one is gone, and no provider or consumer generation moves.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { useLocalService } from '../support/local-service.js';
import { startReference } from '../support/reference.js';

const { reference } = await startReference();
afterAll(async () => {
  await reference?.stop();
});
const service = useLocalService();

interface Setup {
  from: string;
  to: string;
  taken: string;
  providers: [string, string];
  consumer: string;
  project: string;
}

function setup(version: string): Setup {
  const tag = `${version.replace('.', '_')}_${randomUUID().slice(0, 8).toUpperCase()}`;
  return {
    from: `CUSTOM_OLD_${tag}`,
    to: `CUSTOM_NEW_${tag}`,
    taken: `CUSTOM_TAKEN_${tag}`,
    providers: [randomUUID(), randomUUID()],
    consumer: randomUUID(),
    project: randomUUID(),
  };
}

async function ok(placement: PlacementClient, method: string, path: string, json: unknown, version: string) {
  const response = await placement.request(method, path, { json, version });
  expect(response.status, `${method} ${path}: ${response.text}`).toBeLessThan(300);
  return response.body;
}

/** Two providers stocking the class, one consumer holding it on both. */
async function prepare(placement: PlacementClient, s: Setup): Promise<void> {
  for (const name of [s.from, s.taken]) await ok(placement, 'POST', '/resource_classes', { name }, '1.2');
  for (const [n, uuid] of s.providers.entries()) {
    await ok(placement, 'POST', '/resource_providers', { uuid, name: `rename-${uuid}` }, '1.20');
    const inventories = n === 0 ? { VCPU: { total: 4 }, [s.from]: { total: 10 } } : { [s.from]: { total: 10, reserved: 1 } };
    await ok(placement, 'PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories }, '1.2');
  }
  const allocations = { [s.providers[0]]: { resources: { [s.from]: 3, VCPU: 1 } }, [s.providers[1]]: { resources: { [s.from]: 2 } } };
  await ok(placement, 'PUT', `/allocations/${s.consumer}`, { allocations, project_id: s.project, user_id: 'u', consumer_generation: null }, '1.28');
}

/** Everything that names a class, as the API shows it. */
async function state(placement: PlacementClient, s: Setup) {
  const get = async (path: string, version = '1.28') => {
    const response = await placement.get(path, { version });
    return { status: response.status, body: response.body };
  };
  return {
    classes: [await get(`/resource_classes/${s.from}`), await get(`/resource_classes/${s.to}`)].map((answer) => answer.status),
    providers: await Promise.all(
      s.providers.map(async (uuid) => ({
        inventories: await get(`/resource_providers/${uuid}/inventories`),
        usages: await get(`/resource_providers/${uuid}/usages`),
        allocations: await get(`/resource_providers/${uuid}/allocations`),
        generation: (await get(`/resource_providers/${uuid}`)).body.generation,
      })),
    ),
    consumer: await get(`/allocations/${s.consumer}`),
    usages: await get(`/usages?project_id=${s.project}`),
    holders: (await get(`/resource_providers?resources=${s.to}:1`)).body.resource_providers?.length,
  };
}

/** What a service answers to the renames of one microversion, and what they left. */
async function renames(url: string, version: string, s: Setup) {
  const placement = new PlacementClient(url, { timeoutMs: 120_000 });
  await prepare(placement, s);
  const before = await state(placement, s);
  const answer = (response: { status: number; body: any }) => ({ status: response.status, body: response.body?.errors?.[0]?.detail ?? response.body });
  const onto = answer(await placement.put(`/resource_classes/${s.from}`, { name: s.taken }, { version }));
  const renamed = answer(await placement.put(`/resource_classes/${s.from}`, { name: s.to }, { version }));
  return { before, onto, renamed, after: await state(placement, s) };
}

/** Request ids differ from service to service. */
const withoutRequestIds = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/req-[0-9a-f-]{36}/g, 'req-id'));

describe('renaming a custom class in use (PUT /resource_classes/{name}, 1.2–1.6)', () => {
  for (const version of ['1.2', '1.3', '1.4', '1.5', '1.6']) {
    it(`${version}: renames it in every inventory, usage and allocation, generations unchanged${reference ? ', as upstream' : ''}`, async () => {
      const s = setup(version);
      const ours = await renames(service.url, version, s);

      expect(ours.onto.status).toBe(409);
      expect(ours.onto.body).toContain(`Resource class already exists: ${s.taken}`);
      expect(ours.renamed).toEqual({ status: 200, body: { name: s.to, links: [{ rel: 'self', href: `/resource_classes/${s.to}` }] } });
      const { after, before } = ours;
      expect(after.classes).toEqual([404, 200]);
      expect(after.providers[0]!.inventories.body.inventories).toEqual({
        VCPU: expect.objectContaining({ total: 4 }),
        [s.to]: expect.objectContaining({ total: 10 }),
      });
      expect(after.providers[1]!.inventories.body.inventories).toEqual({ [s.to]: expect.objectContaining({ total: 10, reserved: 1 }) });
      expect(after.providers.map((provider) => provider.usages.body.usages)).toEqual([{ VCPU: 1, [s.to]: 3 }, { [s.to]: 2 }]);
      expect(after.providers[0]!.allocations.body.allocations[s.consumer].resources).toEqual({ VCPU: 1, [s.to]: 3 });
      expect(after.consumer.body.allocations[s.providers[1]].resources).toEqual({ [s.to]: 2 });
      expect(after.usages.body.usages).toEqual({ VCPU: 1, [s.to]: 5 });
      expect(after.holders).toBe(2);
      expect(after.providers.map((provider) => provider.generation)).toEqual(before.providers.map((provider) => provider.generation));
      expect(after.consumer.body.consumer_generation).toBe(before.consumer.body.consumer_generation);

      if (reference) expect(withoutRequestIds(ours)).toEqual(withoutRequestIds(await renames(reference.url, version, s)));
    }, 300_000);
  }

  it('a claim, an inventory write and a delete of the old name after the rename are refused as upstream refuses them', async () => {
    const s = setup('1.6');
    const placement = new PlacementClient(service.url, { timeoutMs: 120_000 });
    await prepare(placement, s);
    expect((await placement.put(`/resource_classes/${s.from}`, { name: s.to }, { version: '1.6' })).status).toBe(200);
    const claim = await placement.put(
      `/allocations/${randomUUID()}`,
      { allocations: { [s.providers[0]]: { resources: { [s.from]: 1 } } }, project_id: s.project, user_id: 'u', consumer_generation: null },
      { version: '1.28' },
    );
    expect(claim.status).toBe(400);
    expect(claim.body.errors[0].detail).toContain(`No such resource class ${s.from}`);
    const inventory = await placement.put(
      `/resource_providers/${s.providers[1]}/inventories/${s.from}`,
      { resource_provider_generation: 2, total: 5 },
      { version: '1.6' },
    );
    expect(inventory.status).toBe(404);
    expect(inventory.body.errors[0].detail).toContain(`No such resource class ${s.from}`);
    // The new name is in use as the old one was: it cannot be deleted.
    expect((await placement.delete(`/resource_classes/${s.to}`, { version: '1.6' })).status).toBe(409);
  });
});
