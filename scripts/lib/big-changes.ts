/**
 * Changes bigger than one DynamoDB transaction, as nova and operators send
 * them, to run against any Placement (this service or upstream) and compare:
 * the reshapes nova's libvirt driver sends at start-up, many consumers in one
 * POST /allocations, a move of a provider with many descendants, hundreds of
 * aggregates or custom traits at once, and taking them away again.
 *
 * A scenario is planned once (its uuids and bodies), then each service is
 * prepared with it, changed, and read back (`snapshot`), so the snapshots of
 * two services can be compared as they are. Used by
 * test/integration/big-changes.test.ts and `npm run bench:big-changes`.
 */
import { randomUUID } from 'node:crypto';
import type { ApiResponse, PlacementClient } from '../../admin/placement-client.js';
import { mapConcurrently } from '../../admin/pool.js';

/** Requests a scenario's preparation or snapshot sends at once. */
const PREPARE_CONCURRENCY = 8;

export interface BigChange<Plan> {
  name: string;
  plan(size: number): Plan;
  /** Everything before the change itself. */
  prepare(placement: PlacementClient, plan: Plan): Promise<void>;
  /** The one request under test. */
  change(placement: PlacementClient, plan: Plan): Promise<ApiResponse>;
  /**
   * What the change left, read back through the API with lists sorted (and,
   * for the trait scenarios, whether the first trait can now be deleted).
   */
  snapshot(placement: PlacementClient, plan: Plan): Promise<unknown>;
}

async function ok(placement: PlacementClient, method: string, path: string, json?: unknown, version = '1.39'): Promise<any> {
  const response = await placement.request(method, path, { json, version });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
  return response.body;
}

/** Provider uuid to resource class to amount. */
type ByProvider = Record<string, Record<string, number>>;

const each = <T, R>(items: readonly T[], work: (item: T, index: number) => Promise<R>) => mapConcurrently(items, PREPARE_CONCURRENCY, work);

/** A value with every list of strings sorted, so that two services' orders compare equal. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(sorted);
    return items.every((item) => typeof item === 'string') ? [...(items as string[])].sort() : items;
  }
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, sorted(inner)]));
  return value;
}

/** What a provider shows of itself: its record, inventories, usages, traits, aggregates and allocations. */
async function providerState(placement: PlacementClient, uuid: string) {
  const read = (path: string) => ok(placement, 'GET', `/resource_providers/${uuid}${path}`);
  const record = await read('');
  delete record.links;
  return sorted({
    record,
    inventories: await read('/inventories'),
    usages: await read('/usages'),
    traits: await read('/traits'),
    aggregates: await read('/aggregates'),
    allocations: await read('/allocations'),
  });
}

async function consumersState(placement: PlacementClient, consumers: readonly string[]) {
  return each(consumers, (uuid) => ok(placement, 'GET', `/allocations/${uuid}`));
}

const project = 'big-change-project';
const user = 'big-change-user';

const createProvider = (placement: PlacementClient, uuid: string, parent?: string) =>
  ok(placement, 'POST', '/resource_providers', { uuid, name: `big-${uuid}`, ...(parent ? { parent_provider_uuid: parent } : {}) });

const setInventories = async (placement: PlacementClient, uuid: string, inventories: Record<string, { total: number }>) => {
  const { resource_provider_generation } = await ok(placement, 'GET', `/resource_providers/${uuid}/inventories`);
  await ok(placement, 'PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation, inventories });
};

/**
 * Consumers placed as one instance each, in POST /allocations of 30 at a
 * time: small enough for one DynamoDB transaction (an older version takes
 * them too), far fewer requests than a claim each, and no claims of one
 * host racing each other.
 */
async function allocateAll(placement: PlacementClient, consumers: readonly string[], allocations: ByProvider): Promise<void> {
  for (let start = 0; start < consumers.length; start += 30) {
    const entry = {
      allocations: Object.fromEntries(Object.entries(allocations).map(([uuid, resources]) => [uuid, { resources }])),
      project_id: project,
      user_id: user,
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    await ok(placement, 'POST', '/allocations', Object.fromEntries(consumers.slice(start, start + 30).map((consumer) => [consumer, entry])), '1.38');
  }
}

const generationOf = async (placement: PlacementClient, uuid: string): Promise<number> =>
  (await ok(placement, 'GET', `/resource_providers/${uuid}`)).generation as number;

/** The reshape body nova sends: every provider of the tree with its new inventories, every consumer with its new allocations. */
async function reshape(placement: PlacementClient, inventories: Record<string, Record<string, { total: number }>>, allocations: Record<string, ByProvider>) {
  const generations = Object.fromEntries(await Promise.all(Object.keys(inventories).map(async (uuid) => [uuid, await generationOf(placement, uuid)])));
  return placement.post(
    '/reshaper',
    {
      inventories: Object.fromEntries(
        Object.entries(inventories).map(([uuid, records]) => [uuid, { resource_provider_generation: generations[uuid], inventories: records }]),
      ),
      allocations: Object.fromEntries(
        Object.entries(allocations).map(([consumer, byProvider]) => [
          consumer,
          {
            allocations: Object.fromEntries(Object.entries(byProvider).map(([uuid, resources]) => [uuid, { resources }])),
            project_id: project,
            user_id: user,
            consumer_generation: 1,
          },
        ]),
      ),
    },
    { version: '1.30' },
  );
}

interface Host {
  root: string;
  child: string;
  consumers: string[];
}

const host = (size: number): Host => ({ root: randomUUID(), child: randomUUID(), consumers: Array.from({ length: size }, () => randomUUID()) });

/** libvirt with vGPUs: the VGPU inventory and every instance's vGPU move from the compute node to a new pGPU child. */
export const reshapeVgpuToChild: BigChange<Host> = {
  name: 'reshape: VGPU from the root to a child',
  plan: host,
  async prepare(placement, { root, child, consumers }) {
    await createProvider(placement, root);
    // Room for as many instances again (without vGPU), so that the host still takes claims.
    await setInventories(placement, root, {
      VCPU: { total: 2 * consumers.length },
      MEMORY_MB: { total: 1024 * consumers.length },
      VGPU: { total: consumers.length },
    });
    await allocateAll(placement, consumers, { [root]: { VCPU: 1, MEMORY_MB: 512, VGPU: 1 } });
    await createProvider(placement, child, root);
  },
  change: (placement, { root, child, consumers }) =>
    reshape(
      placement,
      { [root]: { VCPU: { total: 2 * consumers.length }, MEMORY_MB: { total: 1024 * consumers.length } }, [child]: { VGPU: { total: consumers.length } } },
      Object.fromEntries(consumers.map((consumer): [string, ByProvider] => [consumer, { [root]: { VCPU: 1, MEMORY_MB: 512 }, [child]: { VGPU: 1 } }])),
    ),
  snapshot: async (placement, { root, child, consumers }) => ({
    providers: [await providerState(placement, root), await providerState(placement, child)],
    consumers: await consumersState(placement, consumers),
  }),
};

/** CPU pinning reported as PCPU: half the instances are pinned and move from VCPU to PCPU, the other half are sent unchanged. */
export const reshapeVcpuToPcpu: BigChange<Host> = {
  name: 'reshape: VCPU to PCPU, half the consumers unchanged',
  plan: host,
  async prepare(placement, { root, consumers }) {
    await createProvider(placement, root);
    await setInventories(placement, root, { VCPU: { total: consumers.length }, MEMORY_MB: { total: 512 * consumers.length } });
    await allocateAll(placement, consumers, { [root]: { VCPU: 1, MEMORY_MB: 512 } });
  },
  change: (placement, { root, consumers }) => {
    const pinned = Math.ceil(consumers.length / 2);
    return reshape(
      placement,
      { [root]: { VCPU: { total: consumers.length - pinned }, PCPU: { total: pinned }, MEMORY_MB: { total: 512 * consumers.length } } },
      Object.fromEntries(consumers.map((consumer, n): [string, ByProvider] => [consumer, { [root]: { [n < pinned ? 'PCPU' : 'VCPU']: 1, MEMORY_MB: 512 } }])),
    );
  },
  snapshot: async (placement, { root, consumers }) => ({
    providers: [await providerState(placement, root)],
    consumers: await consumersState(placement, consumers),
  }),
};

/** Many consumers placed on one provider by one POST /allocations. */
export const postManyAllocations: BigChange<Host> = {
  name: 'POST /allocations: many consumers at once',
  plan: host,
  async prepare(placement, { root, consumers }) {
    await createProvider(placement, root);
    await setInventories(placement, root, { VCPU: { total: consumers.length }, MEMORY_MB: { total: 512 * consumers.length } });
  },
  change: (placement, { root, consumers }) =>
    placement.post(
      '/allocations',
      Object.fromEntries(
        consumers.map((consumer) => [
          consumer,
          {
            allocations: { [root]: { resources: { VCPU: 1, MEMORY_MB: 512 } } },
            project_id: project,
            user_id: user,
            consumer_generation: null,
            consumer_type: 'INSTANCE',
          },
        ]),
      ),
      { version: '1.38' },
    ),
  snapshot: async (placement, { root, consumers }) => ({
    providers: [await providerState(placement, root)],
    consumers: await consumersState(placement, consumers),
  }),
};

interface Subtree {
  from: string;
  to: string;
  moved: string;
  descendants: string[];
}

/** A provider with `size` descendants (ten chains hanging from it) moved from one root to another (1.37). */
export const moveSubtree: BigChange<Subtree> = {
  name: 'PUT /resource_providers/{uuid}: move a provider and its descendants to another tree',
  plan: (size) => ({ from: randomUUID(), to: randomUUID(), moved: randomUUID(), descendants: Array.from({ length: size }, () => randomUUID()) }),
  async prepare(placement, { from, to, moved, descendants }) {
    await createProvider(placement, from);
    await createProvider(placement, to);
    await createProvider(placement, moved, from);
    // The first ten descendants hang from the moved provider, every later one from the one ten places before it.
    const parentOf = (n: number) => (n < 10 ? moved : descendants[n - 10]!);
    for (let start = 0; start < descendants.length; start += 10) {
      await each(descendants.slice(start, start + 10), (uuid, n) => createProvider(placement, uuid, parentOf(start + n)));
    }
  },
  change: (placement, { to, moved }) => placement.put(`/resource_providers/${moved}`, { name: `big-${moved}`, parent_provider_uuid: to }, { version: '1.37' }),
  snapshot: async (placement, { from, to }) => {
    const tree = async (root: string) =>
      sorted(
        (await ok(placement, 'GET', `/resource_providers?in_tree=${root}`)).resource_providers.map((provider: Record<string, unknown>) => {
          delete provider.links;
          return JSON.stringify(provider);
        }),
      );
    return { from: await tree(from), to: await tree(to) };
  },
};

interface Tagged {
  provider: string;
  names: string[];
}

const taggedPlan =
  (prefix: 'aggregate' | 'trait') =>
  (size: number): Tagged => ({
    provider: randomUUID(),
    names: Array.from({ length: size }, (_, n) => (prefix === 'aggregate' ? randomUUID() : `CUSTOM_BIG_${n}_${randomUUID().slice(0, 8).toUpperCase()}`)),
  });

const setAggregates = async (placement: PlacementClient, uuid: string, aggregates: string[]) =>
  placement.put(
    `/resource_providers/${uuid}/aggregates`,
    { aggregates, resource_provider_generation: await generationOf(placement, uuid) },
    { version: '1.19' },
  );

const setTraits = async (placement: PlacementClient, uuid: string, traits: string[]) =>
  placement.put(`/resource_providers/${uuid}/traits`, { traits, resource_provider_generation: await generationOf(placement, uuid) }, { version: '1.6' });

async function sharingProvider(placement: PlacementClient, uuid: string) {
  await createProvider(placement, uuid);
  await setInventories(placement, uuid, { DISK_GB: { total: 1000 } });
  const response = await setTraits(placement, uuid, ['MISC_SHARES_VIA_AGGREGATE']);
  if (response.status !== 200) throw new Error(`PUT traits: ${response.status} ${response.text}`);
}

const aggregatesState = async (placement: PlacementClient, { provider, names }: Tagged) => ({
  provider: await providerState(placement, provider).catch(() => 'absent'),
  members: await Promise.all(
    [names[0], names.at(-1)].map(async (aggregate) => (await ok(placement, 'GET', `/resource_providers?member_of=${aggregate}`)).resource_providers.length),
  ),
  sharing: (await ok(placement, 'GET', `/resource_providers?member_of=in:${names.slice(0, 20).join(',')}&required=MISC_SHARES_VIA_AGGREGATE`))
    .resource_providers.length,
});

/** A sharing provider put into many aggregates by one request. */
export const manyAggregates: BigChange<Tagged> = {
  name: 'PUT aggregates: many at once on a sharing provider',
  plan: taggedPlan('aggregate'),
  prepare: (placement, { provider }) => sharingProvider(placement, provider),
  change: (placement, { provider, names }) => setAggregates(placement, provider, names),
  snapshot: aggregatesState,
};

/** The same sharing provider taken out of all its aggregates again. */
export const clearManyAggregates: BigChange<Tagged> = {
  name: 'PUT aggregates: many taken away at once',
  plan: taggedPlan('aggregate'),
  async prepare(placement, plan) {
    await sharingProvider(placement, plan.provider);
    // Gathered over several requests, as an operator's tooling would.
    for (let end = 100; end < plan.names.length + 100; end += 100) {
      const response = await setAggregates(placement, plan.provider, plan.names.slice(0, end));
      if (response.status !== 200) throw new Error(`PUT aggregates: ${response.status} ${response.text}`);
    }
  },
  change: (placement, { provider }) => setAggregates(placement, provider, []),
  snapshot: aggregatesState,
};

/** The same sharing provider, put into all its aggregates by one request, deleted. */
export const deleteProviderInManyAggregates: BigChange<Tagged> = {
  name: 'DELETE a sharing provider in many aggregates',
  plan: taggedPlan('aggregate'),
  async prepare(placement, plan) {
    await sharingProvider(placement, plan.provider);
    const response = await setAggregates(placement, plan.provider, plan.names);
    if (response.status === 200) return;
    // A service whose function timed out (503) may still have landed the change, as an operator would find.
    for (let waited = 0; response.status === 503 && waited < 120; waited++) {
      const { aggregates } = await ok(placement, 'GET', `/resource_providers/${plan.provider}/aggregates`, undefined, '1.19');
      if (aggregates.length === plan.names.length) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    throw new Error(`PUT aggregates: ${response.status} ${response.text}`);
  },
  change: (placement, { provider }) => placement.delete(`/resource_providers/${provider}`),
  snapshot: aggregatesState,
};

async function createTraits(placement: PlacementClient, names: string[]) {
  await each(names, (name) => ok(placement, 'PUT', `/traits/${name}`, undefined, '1.6'));
}

const traitsState = async (placement: PlacementClient, { provider, names }: Tagged) => ({
  provider: sorted(await ok(placement, 'GET', `/resource_providers/${provider}/traits`, undefined, '1.6').catch(() => 'absent')),
  // A hundred names a query: a few thousand do not fit one URL. A few at a time: upstream's uWSGI resets the
  // connections beyond its listen queue (100), which the 114 queries of 11,400 names at once overflowed.
  associated: sorted(
    (
      await each(
        Array.from({ length: Math.ceil(names.length / 100) }, (_, n) => names.slice(100 * n, 100 * (n + 1))),
        async (part) => {
          const query = `/traits?name=in:${part.join(',')}&associated=true`;
          return (await ok(placement, 'GET', query, undefined, '1.6')).traits as string[];
        },
      )
    ).flat(),
  ),
  deletable: (await placement.request('DELETE', `/traits/${names[0]}`, { version: '1.6' })).status,
});

/** A provider given many custom traits by one request. */
export const manyTraits: BigChange<Tagged> = {
  name: 'PUT traits: many custom traits at once',
  plan: taggedPlan('trait'),
  async prepare(placement, { provider, names }) {
    await createProvider(placement, provider);
    await createTraits(placement, names);
  },
  change: (placement, { provider, names }) => setTraits(placement, provider, names),
  snapshot: traitsState,
};

/** A provider that gathered many custom traits over several requests, deleted. */
export const deleteProviderWithManyTraits: BigChange<Tagged> = {
  name: 'DELETE a provider holding many custom traits',
  plan: taggedPlan('trait'),
  async prepare(placement, { provider, names }) {
    await createProvider(placement, provider);
    await createTraits(placement, names);
    for (let end = 100; end < names.length + 100; end += 100) {
      const response = await setTraits(placement, provider, names.slice(0, end));
      if (response.status !== 200) throw new Error(`PUT traits: ${response.status} ${response.text}`);
    }
  },
  change: (placement, { provider }) => placement.delete(`/resource_providers/${provider}`),
  snapshot: traitsState,
};

interface ClassInUse {
  from: string;
  to: string;
  providers: string[];
  /** Three per provider, each holding the class on one provider (and VCPU there). */
  consumers: string[];
}

const CONSUMERS_PER_PROVIDER = 3;

/** The provider a consumer of the rename scenario is placed on. */
const placedOn = ({ providers }: ClassInUse, n: number) => providers[Math.floor(n / CONSUMERS_PER_PROVIDER)]!;

/**
 * A custom class held by `size` providers and three times as many consumers
 * renamed by an operator (PUT /resource_classes/{name} with a body, 1.2–1.6):
 * every inventory, usage and allocation shows the new name after it.
 */
export const renameClassInUse: BigChange<ClassInUse> = {
  name: 'PUT /resource_classes/{name}: rename a class held by many providers and consumers',
  plan: (size) => {
    const tag = randomUUID().slice(0, 8).toUpperCase();
    const providers = Array.from({ length: size }, () => randomUUID());
    return {
      from: `CUSTOM_HELD_${tag}`,
      to: `CUSTOM_RENAMED_${tag}`,
      providers,
      consumers: Array.from({ length: size * CONSUMERS_PER_PROVIDER }, () => randomUUID()),
    };
  },
  async prepare(placement, plan) {
    await ok(placement, 'PUT', `/resource_classes/${plan.from}`, undefined, '1.7');
    await each(plan.providers, async (uuid) => {
      await createProvider(placement, uuid);
      await setInventories(placement, uuid, { VCPU: { total: 8 }, [plan.from]: { total: 10 } });
    });
    // POST /allocations of 30 consumers at a time, each placed on its own provider.
    for (let start = 0; start < plan.consumers.length; start += 30) {
      const batch = plan.consumers.slice(start, start + 30).map((consumer, n) => [
        consumer,
        {
          allocations: { [placedOn(plan, start + n)]: { resources: { VCPU: 1, [plan.from]: 2 } } },
          project_id: project,
          user_id: user,
          consumer_generation: null,
        },
      ]);
      await ok(placement, 'POST', '/allocations', Object.fromEntries(batch), '1.28');
    }
  },
  change: (placement, { from, to }) => placement.put(`/resource_classes/${from}`, { name: to }, { version: '1.6' }),
  snapshot: async (placement, { from, to, providers, consumers }) => ({
    classes: await Promise.all([from, to].map(async (name) => (await placement.get(`/resource_classes/${name}`, { version: '1.6' })).status)),
    providers: await each(providers, async (uuid) => ({
      inventories: await ok(placement, 'GET', `/resource_providers/${uuid}/inventories`),
      usages: await ok(placement, 'GET', `/resource_providers/${uuid}/usages`),
      allocations: await ok(placement, 'GET', `/resource_providers/${uuid}/allocations`),
    })),
    consumers: await consumersState(placement, consumers),
    usages: await ok(placement, 'GET', `/usages?project_id=${project}`),
    holders: (await ok(placement, 'GET', `/resource_providers?resources=${to}:1`)).resource_providers.length,
  }),
};

/** Every big change at the size nova or an operator sends it: a 200-instance host, 300 aggregates or traits, a class held by 100 providers renamed. */
export const BIG_CHANGES_AT_NOVA_SIZES: [BigChange<any>, number][] = [
  [reshapeVgpuToChild, 200],
  [reshapeVcpuToPcpu, 200],
  [postManyAllocations, 200],
  [moveSubtree, 200],
  [manyAggregates, 300],
  [clearManyAggregates, 300],
  [manyTraits, 300],
  [deleteProviderWithManyTraits, 300],
  [renameClassInUse, 100],
];

/**
 * What `npm run bench:big-changes` times: the aggregates and traits at a few
 * sizes up to most of what one provider's record holds (about 9,600
 * aggregates), taking them away by deleting the provider or by one PUT,
 * and nova's 200-instance changes.
 */
export const BIG_CHANGES_BENCHED: [BigChange<any>, number][] = [
  ...[500, 2000, 6000].map((size): [BigChange<any>, number] => [manyAggregates, size]),
  ...[500, 2000, 6000].map((size): [BigChange<any>, number] => [deleteProviderInManyAggregates, size]),
  [clearManyAggregates, 2000],
  ...[1000, 3000].map((size): [BigChange<any>, number] => [manyTraits, size]),
  ...[1000, 3000].map((size): [BigChange<any>, number] => [deleteProviderWithManyTraits, size]),
  [reshapeVgpuToChild, 200],
  [reshapeVcpuToPcpu, 200],
  [postManyAllocations, 200],
  [moveSubtree, 200],
  // Issue 30's size: a class held by 1,000 providers and 3,000 consumers.
  [renameClassInUse, 1000],
];
