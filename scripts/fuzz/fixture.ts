/**
 * What the fuzzer's requests name so that they reach past the lookups: a
 * tree (root and child), a sharing provider in an aggregate with the root,
 * an empty provider, one with room for many claims, a custom class and
 * trait, and a consumer holding resources on the tree; for the rollback
 * bodies, a tree of 100 providers under one root (moving it is a change of
 * several steps) and a second custom class. The ids are fixed, so that a
 * seed generates the same requests in every run; `ensureFixture` puts back
 * what accepted requests took away (a deleted allocation, cleared traits).
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
  tree: fixedUuid(8),
  project: 'fuzz-project',
  user: 'fuzz-user',
  customClass: 'CUSTOM_FUZZ',
  customTrait: 'CUSTOM_FUZZ_TRAIT',
  otherClass: 'CUSTOM_FUZZ_OTHER',
  /** A custom class and trait of that name that nothing uses: clean requests delete and create them again. */
  spare: 'CUSTOM_FUZZ_SPARE',
  /** A custom name clean requests create, use and delete (the trait is put back with the fixture). */
  newName: 'CUSTOM_FUZZ_NEW',
} as const;

/** Uuids clean requests create providers under and delete them by (a few, so that both find what the other left). */
export const NEW_PROVIDERS: readonly string[] = Array.from({ length: 4 }, (_, n) => fixedUuid(0x1000 + n));

/** The providers under the rollback bodies' tree: enough that moving its root rewrites more than one transaction holds. */
const TREE_CHILDREN = Array.from({ length: 100 }, (_, n) => ({ uuid: fixedUuid(0x100 + n), name: `fuzz-tree-${n}` }));
export const FIXTURE_TREE_CHILD_NAMES: readonly string[] = TREE_CHILDREN.map((child) => child.name);
const TREE_NAME = 'fuzz-tree';

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

/** The inventories each fixture provider has (totals only). */
export const FIXTURE_INVENTORIES: ReadonlyMap<string, Record<string, { total: number }>> = new Map(SHAPES.map((shape) => [shape.uuid, shape.inventories]));

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
 * `tree`: the rollback bodies' tree too (only the move of its root needs it).
 */
export async function ensureFixture(api: PlacementClient, strict: boolean, { tree = true }: { tree?: boolean } = {}): Promise<void> {
  const step = async (response: Promise<Awaited<ReturnType<PlacementClient['get']>>>, what: string) => {
    const answer = await response;
    if (strict && answer.status >= 300) throw new Error(`fixture: ${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    return answer;
  };
  await step(api.request('PUT', `/resource_classes/${FIXTURE.customClass}`), 'custom class');
  await step(api.request('PUT', `/resource_classes/${FIXTURE.otherClass}`), 'other custom class');
  await step(api.request('PUT', `/resource_classes/${FIXTURE.spare}`), 'spare custom class');
  await step(api.request('PUT', `/traits/${FIXTURE.spare}`), 'spare custom trait');
  await step(api.request('PUT', `/traits/${FIXTURE.newName}`), 'new custom trait');
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
  if (tree) await ensureTree(api, step);
}

/** The rollback bodies' tree: its root a root of that name, every child under it (created where missing). */
async function ensureTree(api: PlacementClient, step: (response: ReturnType<PlacementClient['get']>, what: string) => Promise<unknown>): Promise<void> {
  const root = await api.get(`/resource_providers/${FIXTURE.tree}`);
  if (root.status === 404) await step(api.post('/resource_providers', { uuid: FIXTURE.tree, name: TREE_NAME }), 'tree root');
  else if (root.body?.name !== TREE_NAME || root.body?.parent_provider_uuid !== null) {
    await step(api.put(`/resource_providers/${FIXTURE.tree}`, { name: TREE_NAME, parent_provider_uuid: null }), 'tree root back');
  }
  const listed = await api.get(`/resource_providers?in_tree=${FIXTURE.tree}`);
  const there = new Set<string>((listed.body?.resource_providers ?? []).map((provider: { uuid: string }) => provider.uuid));
  // Ten at a time (each links itself into the root, which retries a conflict).
  const missing = TREE_CHILDREN.filter((child) => !there.has(child.uuid));
  for (let start = 0; start < missing.length; start += 25) {
    await Promise.all(
      missing
        .slice(start, start + 25)
        .map((child) => step(api.post('/resource_providers', { ...child, parent_provider_uuid: FIXTURE.tree }), `tree child ${child.name}`)),
    );
  }
}

/** A GET, sent again (a few times) while it fails: a failed read is not an answer about the state. */
async function read(api: PlacementClient, path: string): Promise<Awaited<ReturnType<PlacementClient['get']>>> {
  for (let attempt = 1; ; attempt++) {
    const answer = await api.get(path);
    if ((answer.status > 0 && answer.status < 500) || attempt === 3) return answer;
  }
}

/** The generations the fixture's providers and consumer have now. */
export async function readGenerations(api: PlacementClient): Promise<LiveGenerations> {
  const providers = new Map<string, number>();
  const [held, ...answers] = await Promise.all(
    [`/allocations/${FIXTURE.consumer}`, ...FIXTURE_PROVIDERS.map((uuid) => `/resource_providers/${uuid}`)].map((path) => read(api, path)),
  );
  FIXTURE_PROVIDERS.forEach((uuid, index) => {
    if (answers[index]!.status === 200) providers.set(uuid, answers[index]!.body.generation as number);
  });
  const consumer: number | null = held.body?.consumer_generation ?? null;
  return {
    provider: (uuid) => providers.get(uuid.toLowerCase()),
    consumer: (uuid) => (uuid.toLowerCase() === FIXTURE.consumer ? consumer : undefined),
  };
}

/** What the API shows of the stored state a request may touch, by the path read. */
export type StoredState = Map<string, string>;

/** A JSON value written with its object keys in order and its lists of names sorted, so that two readings compare as text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    const items = value.map(canonical);
    return `[${value.every((item) => typeof item !== 'object' || item === null) ? items.sort().join(',') : items.join(',')}]`;
  }
  if (typeof value === 'object' && value !== null) {
    // An error's request id is the request's, not the state's.
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([key]) => key !== 'request_id')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The stored state the fuzzer's requests may touch, read through the API:
 * every provider (name, generation, parent, root: the tree's move shows
 * there), each fixture provider's inventories, traits, aggregates, usages
 * and allocations, the fixture consumer's allocations, the project's usages,
 * and the classes and traits there are.
 */
export async function readState(api: PlacementClient): Promise<StoredState> {
  const paths = [
    '/resource_providers',
    '/resource_classes',
    '/traits',
    `/usages?project_id=${FIXTURE.project}`,
    `/allocations/${FIXTURE.consumer}`,
    ...FIXTURE_PROVIDERS.flatMap((uuid) =>
      ['inventories', 'traits', 'aggregates', 'usages', 'allocations'].map((part) => `/resource_providers/${uuid}/${part}`),
    ),
  ];
  const answers = await Promise.all(paths.map((path) => read(api, path)));
  return new Map(
    paths.map((path, index) => {
      const { status, body } = answers[index]!;
      // The providers' listing is long: of each, what a change would move.
      const shown =
        path === '/resource_providers'
          ? (body?.resource_providers ?? [])
              .map(({ uuid, name, generation, parent_provider_uuid, root_provider_uuid }: Record<string, string>) => ({
                uuid,
                name,
                generation,
                parent_provider_uuid,
                root_provider_uuid,
              }))
              .sort((a: { uuid: string }, b: { uuid: string }) => (a.uuid < b.uuid ? -1 : 1))
          : body;
      return [path, `${status} ${canonical(shown)}`];
    }),
  );
}

/** What differs between two readings of the stored state: each path read, with both readings (cut short). */
export function stateChanges(before: StoredState, after: StoredState): string[] {
  const changes: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path) ?? '(not read)';
    if (now === was) continue;
    // From the first character that differs, so that a long reading shows where.
    let at = 0;
    while (at < was.length && was[at] === now[at]) at++;
    const from = Math.max(0, at - 80);
    changes.push(`${path}: ${from > 0 ? '…' : ''}${was.slice(from, at + 200)} became ${from > 0 ? '…' : ''}${now.slice(from, at + 200)}`);
  }
  return changes;
}
