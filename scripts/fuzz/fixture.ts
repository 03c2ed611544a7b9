/**
 * What the fuzzer's requests name so that they reach past the lookups: a
 * tree (root and child), a sharing provider in an aggregate with the root,
 * an empty provider, one with room for many claims, a custom class and
 * trait, and a consumer holding resources on the tree. The ids are fixed, so that a seed generates the same
 * requests in every run; `ensureFixture` puts back what accepted requests
 * took away (a deleted allocation, cleared traits).
 */
import type { PlacementClient } from '../../admin/placement-client.js';
import { fixedUuid, type LiveGenerations } from './values.js';

export const FIXTURE = {
  root: fixedUuid(1),
  child: fixedUuid(2),
  sharing: fixedUuid(3),
  empty: fixedUuid(4),
  consumer: fixedUuid(5),
  aggregate: fixedUuid(6),
  bulk: fixedUuid(7),
  project: 'fuzz-project',
  user: 'fuzz-user',
  customClass: 'CUSTOM_FUZZ',
  customTrait: 'CUSTOM_FUZZ_TRAIT',
} as const;

export const FIXTURE_PROVIDERS: readonly string[] = [FIXTURE.root, FIXTURE.child, FIXTURE.sharing, FIXTURE.empty, FIXTURE.bulk];

interface ProviderShape {
  uuid: string;
  name: string;
  parent: string | null;
  inventories: Record<string, { total: number }>;
  traits: string[];
  aggregates: string[];
}

const SHAPES: ProviderShape[] = [
  {
    uuid: FIXTURE.root,
    name: 'fuzz-root',
    parent: null,
    inventories: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, [FIXTURE.customClass]: { total: 4 } },
    traits: ['HW_CPU_X86_AVX2', FIXTURE.customTrait],
    aggregates: [FIXTURE.aggregate],
  },
  { uuid: FIXTURE.child, name: 'fuzz-child', parent: FIXTURE.root, inventories: { DISK_GB: { total: 100 } }, traits: [], aggregates: [] },
  {
    uuid: FIXTURE.sharing,
    name: 'fuzz-sharing',
    parent: null,
    inventories: { DISK_GB: { total: 1000 }, IPV4_ADDRESS: { total: 16 } },
    traits: ['MISC_SHARES_VIA_AGGREGATE'],
    aggregates: [FIXTURE.aggregate],
  },
  { uuid: FIXTURE.empty, name: 'fuzz-empty', parent: null, inventories: {}, traits: [], aggregates: [] },
  // Room for claims of many consumers at once, which commit in several steps (journal.ts).
  {
    uuid: FIXTURE.bulk,
    name: 'fuzz-bulk',
    parent: null,
    inventories: { VCPU: { total: 1_000_000 }, MEMORY_MB: { total: 100_000_000 } },
    traits: [],
    aggregates: [],
  },
];

export const FIXTURE_PROVIDER_NAMES = SHAPES.map((shape) => shape.name);

/** The classes each fixture provider has inventory of. */
export const FIXTURE_CLASSES_OF: ReadonlyMap<string, string[]> = new Map(SHAPES.map((shape) => [shape.uuid, Object.keys(shape.inventories)]));

const CLAIM = {
  allocations: { [FIXTURE.root]: { resources: { VCPU: 1, MEMORY_MB: 64 } }, [FIXTURE.child]: { resources: { DISK_GB: 10 } } },
  project_id: FIXTURE.project,
  user_id: FIXTURE.user,
  consumer_type: 'INSTANCE',
};

/**
 * Creates the fixture, or puts it back as it was. `strict`: every step must
 * succeed (the first time); afterwards a step the fuzzed state refuses is
 * left, and the requests reach a little less deep until the next time.
 */
export async function ensureFixture(api: PlacementClient, strict: boolean): Promise<void> {
  const step = async (response: Promise<Awaited<ReturnType<PlacementClient['get']>>>, what: string) => {
    const answer = await response;
    if (strict && answer.status >= 300) throw new Error(`fixture: ${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    return answer;
  };
  await step(api.request('PUT', `/resource_classes/${FIXTURE.customClass}`), 'custom class');
  await step(api.request('PUT', `/traits/${FIXTURE.customTrait}`), 'custom trait');
  for (const shape of SHAPES) {
    const found = await api.get(`/resource_providers/${shape.uuid}`);
    if (found.status === 404) {
      await step(api.post('/resource_providers', { uuid: shape.uuid, name: shape.name, parent_provider_uuid: shape.parent }), `create ${shape.name}`);
    } else if (found.body?.name !== shape.name || found.body?.parent_provider_uuid !== shape.parent) {
      await step(api.put(`/resource_providers/${shape.uuid}`, { name: shape.name, parent_provider_uuid: shape.parent }), `update ${shape.name}`);
    }
  }
  for (const shape of SHAPES) {
    const path = `/resource_providers/${shape.uuid}`;
    const generation = async () => (await api.get(path)).body?.generation as number | undefined;
    await step(
      api.put(`${path}/inventories`, { resource_provider_generation: await generation(), inventories: shape.inventories }),
      `${shape.name} inventories`,
    );
    await step(api.put(`${path}/traits`, { resource_provider_generation: await generation(), traits: shape.traits }), `${shape.name} traits`);
    await step(api.put(`${path}/aggregates`, { resource_provider_generation: await generation(), aggregates: shape.aggregates }), `${shape.name} aggregates`);
  }
  const held = await api.get(`/allocations/${FIXTURE.consumer}`);
  const consumerGeneration = held.body?.consumer_generation ?? null;
  await step(api.put(`/allocations/${FIXTURE.consumer}`, { ...CLAIM, consumer_generation: consumerGeneration }), 'claim');
}

/** The generations the fixture's providers and consumer have now. */
export async function readGenerations(api: PlacementClient): Promise<LiveGenerations> {
  const providers = new Map<string, number>();
  for (const uuid of FIXTURE_PROVIDERS) {
    const answer = await api.get(`/resource_providers/${uuid}`);
    if (answer.status === 200) providers.set(uuid, answer.body.generation as number);
  }
  const held = await api.get(`/allocations/${FIXTURE.consumer}`);
  const consumer: number | null = held.body?.consumer_generation ?? null;
  return {
    provider: (uuid) => providers.get(uuid.toLowerCase()),
    consumer: (uuid) => (uuid.toLowerCase() === FIXTURE.consumer ? consumer : undefined),
  };
}
