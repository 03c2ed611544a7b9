import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useLocalService } from '../support/local-service.js';

const service = useLocalService();
const api = service.client({ token: 'admin', version: '1.38' });

async function ok(method: string, path: string, body?: unknown) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  return response.body;
}

const consumerBody = (allocations: Record<string, Record<string, number>>, generation: number | null) => ({
  allocations: Object.fromEntries(Object.entries(allocations).map(([uuid, resources]) => [uuid, { resources }])),
  project_id: 'reshape-project',
  user_id: 'reshape-user',
  consumer_generation: generation,
  consumer_type: 'INSTANCE',
});

/** A root with VCPU and VGPU inventory, two consumers on its VGPU, and an empty child. */
async function vgpuOnRoot(vgpuClass = 'VGPU') {
  const root = randomUUID();
  const child = randomUUID();
  const [c1, c2] = [randomUUID(), randomUUID()];
  await ok('POST', '/resource_providers', { uuid: root, name: `root-${root}` });
  await ok('POST', '/resource_providers', { uuid: child, name: `child-${child}`, parent_provider_uuid: root });
  await ok('PUT', `/resource_providers/${root}/inventories`, {
    resource_provider_generation: 0,
    inventories: { VCPU: { total: 8 }, [vgpuClass]: { total: 4 } },
  });
  await ok('PUT', `/allocations/${c1}`, consumerBody({ [root]: { VCPU: 2, [vgpuClass]: 1 } }, null));
  await ok('PUT', `/allocations/${c2}`, consumerBody({ [root]: { [vgpuClass]: 2 } }, null));
  return { root, child, c1, c2 };
}

/** Everything a reshape of this tree may change, to compare before and after. */
async function snapshot(providers: string[], consumers: string[]) {
  return {
    providers: await Promise.all(
      providers.map(async (uuid) => [await ok('GET', `/resource_providers/${uuid}/inventories`), await ok('GET', `/resource_providers/${uuid}/usages`)]),
    ),
    consumers: await Promise.all(consumers.map((uuid) => ok('GET', `/allocations/${uuid}`))),
  };
}

function moveBody(
  tree: { root: string; child: string; c1: string; c2: string },
  generations: { root: number; child: number; c2?: number },
  vgpuClass = 'VGPU',
) {
  return {
    inventories: {
      [tree.root]: { resource_provider_generation: generations.root, inventories: { VCPU: { total: 8 } } },
      [tree.child]: { resource_provider_generation: generations.child, inventories: { [vgpuClass]: { total: 4 } } },
    },
    allocations: {
      [tree.c1]: consumerBody({ [tree.root]: { VCPU: 2 }, [tree.child]: { [vgpuClass]: 1 } }, 1),
      [tree.c2]: consumerBody({ [tree.child]: { [vgpuClass]: 2 } }, generations.c2 ?? 1),
    },
  };
}

describe('POST /reshaper', () => {
  it('moves VGPU inventory and its allocations from the root to a child in one step', async () => {
    const tree = await vgpuOnRoot();
    expect((await api('POST', '/reshaper', moveBody(tree, { root: 3, child: 0 }))).status).toBe(204);

    expect(await ok('GET', `/resource_providers/${tree.root}/inventories`)).toMatchObject({
      resource_provider_generation: 6,
      inventories: { VCPU: { total: 8 } },
    });
    expect(Object.keys((await ok('GET', `/resource_providers/${tree.root}/inventories`)).inventories)).toEqual(['VCPU']);
    expect(await ok('GET', `/resource_providers/${tree.root}/usages`)).toEqual({ resource_provider_generation: 6, usages: { VCPU: 2 } });
    expect(await ok('GET', `/resource_providers/${tree.child}/usages`)).toEqual({ resource_provider_generation: 3, usages: { VGPU: 3 } });
    expect(await ok('GET', `/allocations/${tree.c1}`)).toMatchObject({
      allocations: { [tree.root]: { resources: { VCPU: 2 } }, [tree.child]: { resources: { VGPU: 1 } } },
      consumer_generation: 2,
    });
    expect(await ok('GET', `/allocations/${tree.c2}`)).toMatchObject({ allocations: { [tree.child]: { resources: { VGPU: 2 } } }, consumer_generation: 2 });
    // Capacity on the child is enforced from now on.
    const tooMuch = await api('PUT', `/allocations/${randomUUID()}`, consumerBody({ [tree.child]: { VGPU: 2 } }, null));
    expect(tooMuch.status).toBe(409);
  });

  it('moves a custom class between providers of one transaction (its use count nets out)', async () => {
    const customClass = `CUSTOM_RESHAPE_${randomUUID().replaceAll('-', '_').toUpperCase()}`;
    await ok('PUT', `/resource_classes/${customClass}`);
    const tree = await vgpuOnRoot(customClass);
    expect((await api('POST', '/reshaper', moveBody(tree, { root: 3, child: 0 }, customClass))).status).toBe(204);
    expect(await ok('GET', `/resource_providers/${tree.child}/usages`)).toMatchObject({ usages: { [customClass]: 3 } });
    // Still used by the child's inventory.
    expect((await api('DELETE', `/resource_classes/${customClass}`)).status).toBe(409);
  });

  it('answers 409 concurrent_update for a stale generation and writes nothing', async () => {
    const tree = await vgpuOnRoot();
    const before = await snapshot([tree.root, tree.child], [tree.c1, tree.c2]);

    const staleProvider = await api('POST', '/reshaper', moveBody(tree, { root: 3, child: 1 }));
    expect(staleProvider.status).toBe(409);
    expect(staleProvider.body.errors[0]).toMatchObject({ code: 'placement.concurrent_update' });
    expect(staleProvider.body.errors[0].detail).toContain(`resource provider generation conflict for provider ${tree.child}: actual: 0, given: 1`);

    // Everything else right, the last consumer stale: the providers and the first consumer must not move either.
    const staleConsumer = await api('POST', '/reshaper', moveBody(tree, { root: 3, child: 0, c2: 5 }));
    expect(staleConsumer.status).toBe(409);
    expect(staleConsumer.body.errors[0]).toMatchObject({ code: 'placement.concurrent_update' });
    expect(staleConsumer.body.errors[0].detail).toContain('consumer generation conflict - expected 1 but got 5');

    expect(await snapshot([tree.root, tree.child], [tree.c1, tree.c2])).toEqual(before);
  });

  it('commits a reshape of more writes than one transaction holds, whole', async () => {
    const tree = await vgpuOnRoot();
    await ok('PUT', `/resource_providers/${tree.child}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 100 } } });
    // Each new consumer is two writes (consumer and allocation items): 2 × 50 + 2 providers.
    const newcomers = Array.from({ length: 50 }, () => randomUUID());
    const response = await api('POST', '/reshaper', {
      inventories: {
        [tree.root]: { resource_provider_generation: 3, inventories: { VCPU: { total: 8 }, VGPU: { total: 4 } } },
        [tree.child]: { resource_provider_generation: 1, inventories: { VCPU: { total: 100 } } },
      },
      allocations: Object.fromEntries(newcomers.map((uuid) => [uuid, consumerBody({ [tree.child]: { VCPU: 1 } }, null)])),
    });
    expect(response.status, JSON.stringify(response.body)).toBe(204);
    const child = await ok('GET', `/resource_providers/${tree.child}/allocations`);
    expect(Object.keys(child.allocations).sort()).toEqual([...newcomers].sort());
    expect(await ok('GET', `/resource_providers/${tree.child}/usages`)).toMatchObject({ usages: { VCPU: 50 } });
    expect((await ok('GET', `/allocations/${newcomers[0]}`)).allocations).toEqual({ [tree.child]: { resources: { VCPU: 1 }, generation: 4 } });
  });
});
