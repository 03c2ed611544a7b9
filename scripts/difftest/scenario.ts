/**
 * The requests of a differential run: operations modelled on how nova's
 * report client and operators use Placement, drawn from one seed. An
 * operation is a generator of steps (requests); after each step it gets
 * both services' answers back and learns from the reference's (new
 * providers, generations, candidates), so the next request is the one a
 * client would send. Every choice depends only on the seed and on the
 * reference's answers, which are the same for the same seed from an empty
 * service.
 */
import type { ApiResponse } from '../../admin/placement-client.js';
import { canonical } from './compare.js';
import type { Random } from './random.js';

export type Profile = 'flat' | 'nested' | 'sharing' | 'mixed';
export const PROFILES: readonly Profile[] = ['flat', 'nested', 'sharing', 'mixed'];

export interface DiffRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH' | 'OPTIONS';
  path: string;
  /** The microversion (`openstack-api-version: placement <version>`); null: no header. */
  version: string | null;
  /** A JSON body, sent with `content-type: application/json`. */
  json?: unknown;
  /** A body sent exactly as given (no content-type unless `headers` say one). */
  rawBody?: string;
  headers?: Record<string, string | null>;
}

export interface Step {
  request: DiffRequest;
  /** The service generates a uuid for this request (a provider created without one). */
  generatesUuid?: boolean;
  /** A candidates request with `limit`: checked against this unlimited answer of each side. */
  limited?: { limit: number; unlimited: Both; rootOf: ReadonlyMap<string, string> };
}

export interface Both {
  reference: ApiResponse;
  target: ApiResponse;
}

export type Operation = Generator<Step, void, Both>;

/** A kind of operation: its name (the report's table) and how it is drawn. */
type OperationKind = (context: Context) => Operation;

type ProviderRole = 'compute' | 'numa' | 'pf' | 'sharing' | 'other';

interface ProviderModel {
  uuid: string;
  name: string;
  parent: string | null;
  role: ProviderRole;
}

interface ConsumerModel {
  project: string;
  user: string;
}

/** What the run knows of the cloud, learnt from the reference's answers. */
export class Model {
  readonly providers = new Map<string, ProviderModel>();
  readonly consumers = new Map<string, ConsumerModel>();
  readonly customClasses = new Set<string>();
  /** Classes any inventory request named: renames pick them often, so that classes inventories and allocations use are renamed too. */
  readonly stockedClasses = new Set<string>();
  readonly customTraits = new Set<string>();
  readonly aggregates: string[];
  readonly projects: string[];
  readonly users: string[];
  private counter = 0;

  constructor(random: Random) {
    this.aggregates = Array.from({ length: 5 }, () => random.uuid());
    this.projects = Array.from({ length: 3 }, () => random.uuid().replace(/-/g, ''));
    this.users = Array.from({ length: 3 }, () => random.uuid().replace(/-/g, ''));
  }

  nextNumber(): number {
    return ++this.counter;
  }

  rootOf(uuid: string): string {
    let current = this.providers.get(uuid);
    for (let hops = 0; current?.parent && hops < 50; hops++) {
      const parent = this.providers.get(current.parent);
      if (!parent) break;
      current = parent;
    }
    return current?.uuid ?? uuid;
  }

  rootMap(): Map<string, string> {
    return new Map([...this.providers.keys()].map((uuid) => [uuid, this.rootOf(uuid)]));
  }

  list(role?: ProviderRole): ProviderModel[] {
    return [...this.providers.values()].filter((provider) => role === undefined || provider.role === role);
  }
}

export interface Context {
  random: Random;
  model: Model;
  profile: Profile;
  /** Whether classes in use are renamed: not while release 1.0.0 serves part of the target (it refuses them with 409). */
  renamesInUse: boolean;
}

// ---------------------------------------------------------------- vocabulary

const STANDARD_TRAITS = [
  'HW_CPU_X86_AVX2',
  'HW_CPU_X86_SSE42',
  'STORAGE_DISK_SSD',
  'STORAGE_DISK_HDD',
  'COMPUTE_STATUS_DISABLED',
  'COMPUTE_VOLUME_MULTI_ATTACH',
  'HW_NIC_SRIOV',
];
const SHARES = 'MISC_SHARES_VIA_AGGREGATE';
const NUMA_ROOT = 'HW_NUMA_ROOT';

/** Every microversion, 1.0 to 1.39. */
export const VERSIONS = Array.from({ length: 40 }, (_, minor) => `1.${minor}`);

const minor = (version: string): number => Number(version.split('.')[1]);

/** A microversion for a request: usually the one nova sends, otherwise any from `lowest` up. */
function versionFor(context: Context, lowest: string, usual: string): string {
  if (context.random.chance(0.5)) return usual;
  return context.random.pick(VERSIONS.slice(minor(lowest)));
}

function classesFor(role: ProviderRole): string[] {
  switch (role) {
    case 'compute':
      return ['VCPU', 'MEMORY_MB', 'DISK_GB'];
    case 'numa':
      return ['VCPU', 'MEMORY_MB'];
    case 'pf':
      return ['SRIOV_NET_VF', 'NET_BW_EGR_KILOBIT_PER_SEC'];
    case 'sharing':
      return ['DISK_GB', 'IPV4_ADDRESS'];
    case 'other':
      return ['PCI_DEVICE'];
  }
}

function inventoryRecord(context: Context, resourceClass: string, version: string): Record<string, unknown> {
  const { random } = context;
  const total =
    {
      VCPU: random.pick([4, 8, 16]),
      MEMORY_MB: random.pick([4096, 8192, 16384]),
      DISK_GB: random.pick([100, 500, 1000]),
      IPV4_ADDRESS: random.pick([4, 16]),
      SRIOV_NET_VF: random.pick([4, 8]),
      NET_BW_EGR_KILOBIT_PER_SEC: 10000,
    }[resourceClass] ?? random.pick([2, 8, 32]);
  const record: Record<string, unknown> = { total };
  if (random.chance(0.4)) record.reserved = random.pick([0, 1, Math.floor(total / 4), ...(minor(version) >= 26 ? [total] : [])]);
  if (random.chance(0.3)) record.allocation_ratio = random.pick([1.0, 1.5, 16.0, 0.5]);
  if (random.chance(0.3)) record.max_unit = random.pick([1, 2, Math.max(1, Math.floor(total / 2)), total]);
  if (random.chance(0.2)) record.min_unit = random.pick([1, 2]);
  if (random.chance(0.2)) record.step_size = random.pick([1, 2]);
  return record;
}

function customClass(context: Context): string {
  const known = [...context.model.customClasses].sort();
  if (known.length > 0 && context.random.chance(0.7)) return context.random.pick(known);
  return `CUSTOM_${context.random.pick(['GPU', 'FPGA', 'MAGIC', 'PMEM_NS', 'BAREMETAL_GOLD'])}`;
}

function customTrait(context: Context): string {
  const known = [...context.model.customTraits].sort();
  if (known.length > 0 && context.random.chance(0.7)) return context.random.pick(known);
  return `CUSTOM_${context.random.pick(['PHYSNET_A', 'PHYSNET_B', 'RAID', 'GOLD', 'LOCAL_NVME'])}`;
}

function anyTrait(context: Context): string {
  return context.random.chance(0.25) ? customTrait(context) : context.random.pick([...STANDARD_TRAITS, SHARES, NUMA_ROOT]);
}

function pickProvider(context: Context, role?: ProviderRole): string | undefined {
  const all = context.model.list(role).map((provider) => provider.uuid);
  if (all.length === 0) return undefined;
  return context.random.pick(all.sort());
}

/** A provider uuid, now and then one that does not exist. */
function someProvider(context: Context, role?: ProviderRole): string {
  if (context.random.chance(0.05)) return context.random.uuid();
  return pickProvider(context, role) ?? pickProvider(context) ?? context.random.uuid();
}

function someConsumer(context: Context): string {
  const known = [...context.model.consumers.keys()].sort();
  if (known.length === 0 || context.random.chance(0.1)) return context.random.uuid();
  return context.random.pick(known);
}

const query = (pairs: [string, string][]): string =>
  pairs.length === 0
    ? ''
    : `?${pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value).replace(/%3A/g, ':').replace(/%2C/g, ',')}`).join('&')}`;

const ok = (answer: ApiResponse) => answer.status >= 200 && answer.status < 300;

function generationOf(answer: ApiResponse): number | undefined {
  const body = answer.body as { resource_provider_generation?: number; generation?: number } | undefined;
  return body?.resource_provider_generation ?? body?.generation;
}

/** Now and then a stale generation, as a client racing another would send. */
function maybeStale(context: Context, generation: number | undefined): number {
  if (generation === undefined) return 0;
  return context.random.chance(0.08) ? generation + context.random.pick([-1, 1, 7]) : generation;
}

// ---------------------------------------------------------------- providers

function* createProvider(context: Context, role: ProviderRole, parent: string | null = null): Operation {
  const { random, model } = context;
  const number = model.nextNumber();
  const name = { compute: `compute-${number}`, numa: `numa-${number}`, pf: `pf-${number}`, sharing: `shared-storage-${number}`, other: `device-${number}` }[
    role
  ];
  const withUuid = random.chance(0.9);
  const uuid = random.uuid();
  const version = parent ? versionFor(context, '1.14', '1.20') : versionFor(context, '1.0', '1.20');
  const body: Record<string, unknown> = { name: random.chance(0.03) && model.providers.size > 0 ? random.pick(model.list()).name : name };
  if (withUuid) body.uuid = uuid;
  if (parent) body.parent_provider_uuid = parent;
  const created = yield { request: { method: 'POST', path: '/resource_providers', version, json: body }, generatesUuid: !withUuid };
  if (!ok(created.reference) || !withUuid) return;
  model.providers.set(uuid, { uuid, name: body.name as string, parent, role });
  // As nova's update_provider_tree: the provider's inventory, traits and aggregates.
  yield* setInventories(context, uuid, role);
  if (role === 'sharing') yield* setTraits(context, uuid, [SHARES, ...(random.chance(0.5) ? [anyTrait(context)] : [])]);
  else if (role === 'numa') yield* setTraits(context, uuid, [NUMA_ROOT]);
  else if (random.chance(0.6)) yield* setTraits(context, uuid, random.some([...STANDARD_TRAITS, customTrait(context)], random.int(1, 3)));
  if (role === 'sharing' || (role === 'compute' && random.chance(0.7)) || random.chance(0.2)) {
    yield* setAggregates(context, uuid, random.some(model.aggregates, random.int(1, 2)));
  }
}

function* buildCloud(context: Context): Operation {
  const { random, model, profile } = context;
  const shape = profile === 'mixed' ? random.pick(['flat', 'nested', 'sharing'] as const) : profile;
  if (shape === 'sharing' && (model.list('sharing').length < 2 || random.chance(0.25))) {
    yield* createProvider(context, 'sharing');
    return;
  }
  if (shape === 'nested' && model.list('compute').length > 0 && random.chance(0.6)) {
    // A child: a NUMA node or a physical function (with its own child now and then).
    const root = pickProvider(context, 'compute') as string;
    const parentOfPf = random.chance(0.3) ? (pickProvider(context, 'numa') ?? root) : root;
    yield* createProvider(context, random.chance(0.5) ? 'numa' : 'pf', random.chance(0.5) ? root : parentOfPf);
    return;
  }
  yield* createProvider(context, shape === 'nested' && random.chance(0.2) ? 'other' : 'compute');
}

function* showProvider(context: Context): Operation {
  const uuid = someProvider(context);
  const path = context.random.chance(0.1) ? `/resource_providers/${uuid.toUpperCase()}` : `/resource_providers/${uuid}`;
  yield { request: { method: 'GET', path, version: versionFor(context, '1.0', '1.14') } };
}

function providerListQuery(context: Context, version: string): [string, string][] {
  const { random, model } = context;
  const at = (lowest: number) => minor(version) >= lowest || random.chance(0.05);
  const pairs: [string, string][] = [];
  if (random.chance(0.1)) pairs.push(['name', random.pick(model.list()).name]);
  if (random.chance(0.1)) pairs.push(['uuid', someProvider(context)]);
  if (at(3) && random.chance(0.35)) pairs.push(...memberOf(context, version, ''));
  if (at(4) && random.chance(0.35)) pairs.push(['resources', resourcesFor(context, random.pick(['compute', 'numa', 'pf', 'sharing'] as const))]);
  if (at(14) && random.chance(0.25)) pairs.push(['in_tree', someProvider(context)]);
  if (at(18) && random.chance(0.35)) pairs.push(...requiredTraits(context, version, 'required'));
  return pairs;
}

function* listProviders(context: Context): Operation {
  const version = versionFor(context, '1.0', '1.14');
  const pairs = context.model.providers.size > 0 ? providerListQuery(context, version) : [];
  yield { request: { method: 'GET', path: `/resource_providers${query(pairs)}`, version } };
}

function* updateProvider(context: Context): Operation {
  const { random, model } = context;
  const uuid = pickProvider(context);
  if (!uuid) return yield* buildCloud(context);
  const provider = model.providers.get(uuid) as ProviderModel;
  const version = random.chance(0.6) ? random.pick(['1.14', '1.37', '1.39']) : random.pick(VERSIONS);
  const body: Record<string, unknown> = { name: random.chance(0.7) ? `${provider.name}-renamed` : provider.name };
  if (minor(version) >= 14 && random.chance(0.6)) {
    // Re-parent (1.37), un-parent (1.37), or keep: nova never moves providers but operators do.
    const others = model.list().filter((other) => other.uuid !== uuid && model.rootOf(other.uuid) !== uuid);
    body.parent_provider_uuid = random.chance(0.2) ? null : others.length > 0 && random.chance(0.7) ? random.pick(others).uuid : provider.parent;
  }
  const answer = yield { request: { method: 'PUT', path: `/resource_providers/${uuid}`, version, json: body } };
  if (ok(answer.reference)) {
    const updated = answer.reference.body as { name: string; parent_provider_uuid?: string | null };
    provider.name = updated.name;
    if (updated.parent_provider_uuid !== undefined) provider.parent = updated.parent_provider_uuid;
  }
}

function* deleteProvider(context: Context): Operation {
  const { random, model } = context;
  // Leaves mostly, so that deletes succeed as often as they are refused.
  const leaves = model.list().filter((provider) => !model.list().some((child) => child.parent === provider.uuid));
  const uuid = leaves.length > 0 && random.chance(0.7) ? random.pick(leaves.map((leaf) => leaf.uuid).sort()) : someProvider(context);
  const answer = yield { request: { method: 'DELETE', path: `/resource_providers/${uuid}`, version: versionFor(context, '1.0', '1.14') } };
  if (answer.reference.status === 204) model.providers.delete(uuid);
}

// ---------------------------------------------------------------- inventories

function* setInventories(context: Context, uuid: string, role: ProviderRole): Operation {
  const { random } = context;
  const version = versionFor(context, '1.0', '1.26');
  const current = yield { request: { method: 'GET', path: `/resource_providers/${uuid}/inventories`, version } };
  const classes = random.chance(0.1) ? [...classesFor(role), customClass(context)] : classesFor(role);
  for (const resourceClass of classes) context.model.stockedClasses.add(resourceClass);
  const inventories = Object.fromEntries(classes.map((resourceClass) => [resourceClass, inventoryRecord(context, resourceClass, version)]));
  yield {
    request: {
      method: 'PUT',
      path: `/resource_providers/${uuid}/inventories`,
      version,
      json: { resource_provider_generation: maybeStale(context, generationOf(current.reference)), inventories },
    },
  };
}

function* changeInventory(context: Context): Operation {
  const { random, model } = context;
  const uuid = pickProvider(context);
  if (!uuid) return yield* buildCloud(context);
  const role = model.providers.get(uuid)?.role ?? 'other';
  const resourceClass = random.chance(0.85) ? random.pick(classesFor(role)) : random.chance(0.5) ? customClass(context) : 'VCPU';
  model.stockedClasses.add(resourceClass);
  const version = versionFor(context, '1.0', '1.26');
  const base = `/resource_providers/${uuid}/inventories`;
  const action = random.weighted({ replaceAll: 3, showOne: 2, updateOne: 3, shrinkBelowUsage: 2, createOne: 1, deleteOne: 1, deleteAll: 1 });
  if (action === 'replaceAll') return yield* setInventories(context, uuid, role);
  if (action === 'showOne') {
    yield { request: { method: 'GET', path: `${base}/${resourceClass}`, version } };
    return;
  }
  const current = yield { request: { method: 'GET', path: base, version } };
  const generation = maybeStale(context, generationOf(current.reference));
  switch (action) {
    case 'updateOne':
      yield {
        request: {
          method: 'PUT',
          path: `${base}/${resourceClass}`,
          version,
          json: { resource_provider_generation: generation, ...inventoryRecord(context, resourceClass, version) },
        },
      };
      return;
    case 'shrinkBelowUsage': {
      // An operator takes capacity away from a provider with allocations: it ends up over capacity.
      const usages = yield { request: { method: 'GET', path: `/resource_providers/${uuid}/usages`, version } };
      const used = (usages.reference.body?.usages ?? {}) as Record<string, number>;
      const [usedClass, amount] = Object.entries(used)
        .sort()
        .find(([, value]) => value > 0) ?? [resourceClass, 1];
      yield {
        request: { method: 'PUT', path: `${base}/${usedClass}`, version, json: { resource_provider_generation: generation, total: Math.max(1, amount - 1) } },
      };
      return;
    }
    case 'createOne':
      yield {
        request: {
          method: 'POST',
          path: base,
          version,
          json: { resource_provider_generation: generation, resource_class: resourceClass, ...inventoryRecord(context, resourceClass, version) },
        },
      };
      return;
    case 'deleteOne':
      yield { request: { method: 'DELETE', path: `${base}/${resourceClass}`, version } };
      return;
    case 'deleteAll':
      yield { request: { method: 'DELETE', path: base, version: versionFor(context, '1.0', '1.5') } };
      return;
  }
}

function* usages(context: Context): Operation {
  const { random, model } = context;
  if (random.chance(0.5)) {
    yield { request: { method: 'GET', path: `/resource_providers/${someProvider(context)}/usages`, version: versionFor(context, '1.0', '1.19') } };
    return;
  }
  const version = versionFor(context, '1.9', '1.38');
  const pairs: [string, string][] = [['project_id', random.pick(model.projects)]];
  if (random.chance(0.4)) pairs.push(['user_id', random.pick(model.users)]);
  if (random.chance(0.4)) pairs.push(['consumer_type', random.pick(['INSTANCE', 'MIGRATION', 'all', 'unknown', 'INSTANCE,MIGRATION'])]);
  yield { request: { method: 'GET', path: `/usages${query(pairs)}`, version } };
}

// ---------------------------------------------------------------- aggregates and traits

function* setAggregates(context: Context, uuid: string, aggregates: string[]): Operation {
  const version = versionFor(context, '1.1', '1.19');
  const current = yield { request: { method: 'GET', path: `/resource_providers/${uuid}/aggregates`, version } };
  const json = minor(version) >= 19 ? { aggregates, resource_provider_generation: maybeStale(context, generationOf(current.reference)) } : aggregates;
  yield { request: { method: 'PUT', path: `/resource_providers/${uuid}/aggregates`, version, json } };
}

function* changeAggregates(context: Context): Operation {
  const uuid = someProvider(context);
  yield* setAggregates(context, uuid, context.random.some(context.model.aggregates, context.random.int(0, 3)));
}

function* setTraits(context: Context, uuid: string, traits: string[]): Operation {
  const version = versionFor(context, '1.6', '1.6');
  // As nova: make sure custom traits exist, then set the provider's.
  for (const trait of traits.filter((name) => name.startsWith('CUSTOM_'))) {
    const created = yield { request: { method: 'PUT', path: `/traits/${trait}`, version } };
    if (ok(created.reference)) context.model.customTraits.add(trait);
  }
  const current = yield { request: { method: 'GET', path: `/resource_providers/${uuid}/traits`, version } };
  yield {
    request: {
      method: 'PUT',
      path: `/resource_providers/${uuid}/traits`,
      version,
      json: { traits, resource_provider_generation: maybeStale(context, generationOf(current.reference)) },
    },
  };
}

function* changeTraits(context: Context): Operation {
  const { random } = context;
  const uuid = someProvider(context);
  const action = random.weighted({ set: 4, clear: 1, list: 1 });
  if (action === 'set') return yield* setTraits(context, uuid, random.some([...STANDARD_TRAITS, customTrait(context)], random.int(0, 3)));
  const version = versionFor(context, '1.6', '1.6');
  yield { request: { method: action === 'clear' ? 'DELETE' : 'GET', path: `/resource_providers/${uuid}/traits`, version } };
}

function* traitCatalog(context: Context): Operation {
  const { random, model } = context;
  const version = versionFor(context, '1.6', '1.6');
  const action = random.weighted({ list: 3, show: 2, create: 2, delete: 2 });
  if (action === 'list') {
    const pairs: [string, string][] = [];
    if (random.chance(0.5))
      pairs.push([
        'name',
        random.pick(['startswith:CUSTOM_', `in:${customTrait(context)},${random.pick(STANDARD_TRAITS)}`, 'startswith:HW_NIC', 'in:', 'bogus']),
      ]);
    if (random.chance(0.5)) pairs.push(['associated', random.pick(['true', 'false', 'yes'])]);
    // Unfiltered lists hold the whole standard catalog: keep them rarer.
    if (pairs.length === 0 && random.chance(0.7)) pairs.push(['name', 'startswith:CUSTOM_']);
    yield { request: { method: 'GET', path: `/traits${query(pairs)}`, version } };
    return;
  }
  const name = random.chance(0.8) ? customTrait(context) : random.pick([...STANDARD_TRAITS, 'NOT_CUSTOM', 'CUSTOM_lower']);
  const method = ({ show: 'GET', create: 'PUT', delete: 'DELETE' } as const)[action];
  const answer = yield { request: { method, path: `/traits/${name}`, version } };
  if (action === 'create' && ok(answer.reference)) model.customTraits.add(name);
  if (action === 'delete' && answer.reference.status === 204) model.customTraits.delete(name);
}

function* resourceClassCatalog(context: Context): Operation {
  const { random, model } = context;
  const action = random.weighted({ list: 2, show: 2, create: 2, put: 4, delete: 2 });
  const name = random.chance(0.85) ? customClass(context) : random.pick(['VCPU', 'CUSTOM_', 'custom_lower', 'DISK_GB']);
  if (action === 'list') {
    yield { request: { method: 'GET', path: '/resource_classes', version: versionFor(context, '1.2', '1.7') } };
    return;
  }
  if (action === 'create') {
    const answer = yield { request: { method: 'POST', path: '/resource_classes', version: versionFor(context, '1.2', '1.7'), json: { name } } };
    if (answer.reference.status === 201) model.customClasses.add(name);
    return;
  }
  if (action === 'put') {
    // 1.7 and later: create if missing (nova's way); before: rename.
    const version = versionFor(context, '1.2', '1.7');
    const renaming = minor(version) < 7;
    const stocked = [...model.stockedClasses].filter((stockedClass) => model.customClasses.has(stockedClass)).sort();
    const inUse = renaming && !context.renamesInUse && model.stockedClasses.has(name);
    const renamed = inUse ? 'CUSTOM_NEVER_STOCKED' : renaming && context.renamesInUse && stocked.length > 0 && random.chance(0.6) ? random.pick(stocked) : name;
    const json = renaming ? { name: random.chance(0.1) ? random.pick([...model.customClasses, renamed].sort()) : `${renamed}_RENAMED` } : undefined;
    const answer = yield { request: { method: 'PUT', path: `/resource_classes/${renamed}`, version, json } };
    if (ok(answer.reference)) {
      if (json && json.name !== renamed) {
        model.customClasses.delete(renamed);
        if (model.stockedClasses.delete(renamed)) model.stockedClasses.add(json.name);
      }
      model.customClasses.add(json ? json.name : renamed);
    }
    return;
  }
  const version = versionFor(context, '1.2', '1.7');
  const answer = yield { request: { method: action === 'show' ? 'GET' : 'DELETE', path: `/resource_classes/${name}`, version } };
  if (action === 'delete' && answer.reference.status === 204) model.customClasses.delete(name);
}

/**
 * An operator renaming a class that inventories and allocations use (1.2–1.6):
 * a custom class is stocked on a provider, now and then claimed, and renamed;
 * later requests name it by its new name (or, now and then, its old one).
 */
function* renameClassInUse(context: Context): Operation {
  const { random, model } = context;
  const uuid = pickProvider(context);
  if (!uuid) return yield* buildCloud(context);
  const known = [...model.customClasses].sort();
  const name = known.length > 0 && random.chance(0.7) ? random.pick(known) : `CUSTOM_${random.pick(['GPU', 'FPGA', 'MAGIC', 'PMEM_NS'])}`;
  const created = yield { request: { method: 'PUT', path: `/resource_classes/${name}`, version: '1.7' } };
  if (ok(created.reference)) model.customClasses.add(name);
  const current = yield { request: { method: 'GET', path: `/resource_providers/${uuid}/inventories`, version: '1.6' } };
  const inventory = { resource_provider_generation: generationOf(current.reference) ?? 0, total: random.pick([4, 8, 64]) };
  yield { request: { method: 'PUT', path: `/resource_providers/${uuid}/inventories/${name}`, version: '1.6', json: inventory } };
  model.stockedClasses.add(name);
  if (random.chance(0.6)) yield* claim(context, { [uuid]: { resources: { [name]: random.pick([1, 2]) } } }, random.uuid());
  const json = { name: `${name}_RENAMED` };
  const answer = yield { request: { method: 'PUT', path: `/resource_classes/${name}`, version: random.pick(['1.2', '1.3', '1.4', '1.5', '1.6']), json } };
  if (ok(answer.reference)) {
    model.customClasses.delete(name);
    model.stockedClasses.delete(name);
    model.customClasses.add(json.name);
    model.stockedClasses.add(json.name);
  }
}

// ---------------------------------------------------------------- the query language

function resourcesFor(context: Context, role: ProviderRole): string {
  const { random } = context;
  const amounts: Record<string, () => number> = {
    VCPU: () => random.pick([1, 2, 4]),
    MEMORY_MB: () => random.pick([512, 1024, 2048, 4096]),
    DISK_GB: () => random.pick([10, 20, 100]),
    IPV4_ADDRESS: () => 1,
    SRIOV_NET_VF: () => random.pick([1, 2]),
    NET_BW_EGR_KILOBIT_PER_SEC: () => random.pick([1000, 5000]),
    PCI_DEVICE: () => 1,
  };
  const classes = random.some(classesFor(role), random.int(1, classesFor(role).length));
  if (context.model.customClasses.size > 0 && random.chance(0.05)) classes.push(customClass(context));
  return classes.map((resourceClass) => `${resourceClass}:${(amounts[resourceClass] ?? (() => 1))()}`).join(',');
}

function requiredTraits(context: Context, version: string, name: string): [string, string][] {
  const { random } = context;
  const term = () => (minor(version) >= 22 && random.chance(0.3) ? `!${anyTrait(context)}` : anyTrait(context));
  if (minor(version) >= 39 && random.chance(0.3)) {
    // Any-of (1.39), possibly with a second required parameter.
    const pairs: [string, string][] = [[name, `in:${anyTrait(context)},${anyTrait(context)}`]];
    if (random.chance(0.4)) pairs.push([name, term()]);
    return pairs;
  }
  return [[name, Array.from({ length: random.int(1, 2) }, term).join(',')]];
}

function memberOf(context: Context, version: string, suffix: string): [string, string][] {
  const { random, model } = context;
  const aggregate = () => (random.chance(0.05) ? random.uuid() : random.pick(model.aggregates));
  const one = (): string => {
    if (minor(version) >= 32 && random.chance(0.2)) return random.chance(0.5) ? `!${aggregate()}` : `!in:${aggregate()},${aggregate()}`;
    if (random.chance(0.4)) return `in:${aggregate()},${aggregate()}`;
    return aggregate();
  };
  const pairs: [string, string][] = [[`member_of${suffix}`, one()]];
  if (minor(version) >= 24 && random.chance(0.2)) pairs.push([`member_of${suffix}`, one()]);
  return pairs;
}

/** A `GET /allocation_candidates` query string, valid for the version most of the time. */
function candidateQuery(context: Context, version: string): [string, string][] {
  const { random, model, profile } = context;
  const v = minor(version);
  const shape = profile === 'mixed' ? random.pick(['flat', 'nested', 'sharing'] as const) : profile;
  const pairs: [string, string][] = [];
  const unsuffixed =
    shape === 'nested' && v >= 25 && random.chance(0.4)
      ? 'VCPU:1'
      : resourcesFor(context, shape === 'sharing' ? random.pick(['compute', 'sharing'] as const) : 'compute');
  if (shape === 'sharing' && random.chance(0.6))
    pairs.push([
      'resources',
      `${unsuffixed},${random.pick(['DISK_GB:10', 'IPV4_ADDRESS:1', 'DISK_GB:20,IPV4_ADDRESS:1'])}`.replace(/(DISK_GB:\d+).*DISK_GB:\d+/, '$1'),
    ]);
  else pairs.push(['resources', unsuffixed]);
  if (random.chance(0.35)) pairs.push(...requiredTraits(context, version, 'required'));
  if (v >= 21 && random.chance(0.25)) pairs.push(...memberOf(context, version, ''));
  if (v >= 31 && random.chance(0.15)) pairs.push(['in_tree', someProvider(context)]);
  if (v >= 25 && random.chance(shape === 'nested' ? 0.6 : 0.25)) {
    // Granular groups: numbered (1.25) or named (1.33) suffixes.
    const suffixes = random.some(v >= 33 ? ['1', '2', '_NUMA0', '_NIC', '_ACCEL'] : ['1', '2', '3'], random.int(1, 2));
    for (const suffix of suffixes) {
      pairs.push([`resources${suffix}`, resourcesFor(context, random.pick(['numa', 'pf', 'compute'] as const))]);
      if (random.chance(0.3)) pairs.push(...requiredTraits(context, version, `required${suffix}`));
      if (random.chance(0.15)) pairs.push(...memberOf(context, version, suffix));
    }
    if (suffixes.length > 1 || random.chance(0.3)) pairs.push(['group_policy', random.pick(['isolate', 'none', 'none', 'isolate', 'bogus'])]);
    if (v >= 36 && suffixes.length > 1 && random.chance(0.3)) pairs.push(['same_subtree', suffixes.join(',')]);
  }
  if (v >= 35 && random.chance(0.3))
    pairs.push([
      'root_required',
      random.pick(['!COMPUTE_STATUS_DISABLED', 'HW_CPU_X86_AVX2', 'STORAGE_DISK_HDD', `!${anyTrait(context)},${anyTrait(context)}`]),
    ]);
  if (model.providers.size === 0 && random.chance(0.5)) pairs.splice(1);
  return pairs;
}

function toClaim(candidate: unknown): Record<string, { resources: Record<string, number> }> {
  const allocations = (candidate as { allocations: unknown }).allocations;
  if (Array.isArray(allocations)) {
    return Object.fromEntries(
      allocations.map((item: { resource_provider: { uuid: string }; resources: Record<string, number> }) => [
        item.resource_provider.uuid,
        { resources: item.resources },
      ]),
    );
  }
  return Object.fromEntries(
    Object.entries(allocations as Record<string, { resources: Record<string, number> }>).map(([uuid, item]) => [uuid, { resources: item.resources }]),
  );
}

/** Candidates in an order that does not depend on the service. */
function sortedCandidates(answer: ApiResponse): unknown[] {
  const candidates = (answer.body?.allocation_requests ?? []) as unknown[];
  return [...candidates].sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1));
}

function* allocationCandidates(context: Context): Operation {
  const { random } = context;
  const version = random.chance(0.5) ? random.pick(['1.36', '1.39', '1.34', '1.29']) : random.pick(VERSIONS.slice(10));
  const pairs = candidateQuery(context, version);
  const path = `/allocation_candidates${query(pairs)}`;
  const answer = yield { request: { method: 'GET', path, version } };
  if (minor(version) >= 16 && random.chance(0.35)) {
    const listing = yield { request: { method: 'GET', path: '/resource_providers', version: '1.14' } };
    const rootOf = new Map(
      ((listing.reference.body?.resource_providers ?? []) as { uuid: string; root_provider_uuid: string }[]).map((rp) => [rp.uuid, rp.root_provider_uuid]),
    );
    const limit = random.pick([1, 2, 3]);
    yield {
      request: { method: 'GET', path: `/allocation_candidates${query([...pairs, ['limit', String(limit)]])}`, version },
      limited: { limit, unlimited: answer, rootOf },
    };
  }
  // Half the time the scheduler claims one of them, as nova's claim_resources does.
  const candidates = sortedCandidates(answer.reference);
  if (candidates.length > 0 && random.chance(0.6)) yield* claim(context, toClaim(random.pick(candidates)), random.uuid());
}

// ---------------------------------------------------------------- allocations

function* claim(context: Context, allocations: Record<string, { resources: Record<string, number> }>, consumer: string): Operation {
  const { random, model } = context;
  const project = random.pick(model.projects);
  const user = random.pick(model.users);
  const version = random.chance(0.6) ? random.pick(['1.28', '1.36', '1.38', '1.39']) : random.pick(VERSIONS);
  const v = minor(version);
  let json: unknown;
  if (v < 12) {
    json = { allocations: Object.entries(allocations).map(([uuid, item]) => ({ resource_provider: { uuid }, resources: item.resources })) };
    if (v >= 8) Object.assign(json as object, { project_id: project, user_id: user });
  } else {
    json = { allocations, project_id: project, user_id: user };
    if (v >= 28) Object.assign(json as object, { consumer_generation: null });
    if (v >= 38) Object.assign(json as object, { consumer_type: random.pick(['INSTANCE', 'INSTANCE', 'MIGRATION']) });
  }
  const answer = yield { request: { method: 'PUT', path: `/allocations/${consumer}`, version, json } };
  if (answer.reference.status === 204) model.consumers.set(consumer, { project, user });
}

function* readAllocations(context: Context): Operation {
  const { random } = context;
  if (random.chance(0.5)) {
    yield { request: { method: 'GET', path: `/resource_providers/${someProvider(context)}/allocations`, version: versionFor(context, '1.0', '1.28') } };
  } else {
    yield { request: { method: 'GET', path: `/allocations/${someConsumer(context)}`, version: versionFor(context, '1.0', '1.28') } };
  }
}

/** A claim written by hand: operators and tests put allocations on a provider directly, not always within capacity. */
function* directClaim(context: Context): Operation {
  const { random, model } = context;
  const uuid = someProvider(context);
  const role = model.providers.get(uuid)?.role ?? 'compute';
  const resources = Object.fromEntries(
    random.some(classesFor(role), random.int(1, 2)).map((resourceClass) => [resourceClass, random.pick([1, 2, 8, 64, 100000])]),
  );
  yield* claim(context, { [uuid]: { resources } }, random.chance(0.3) ? someConsumer(context) : random.uuid());
}

/** Replaces a consumer's allocations knowing its generation (resize in place), or with a stale one. */
function* reclaim(context: Context): Operation {
  const { random, model } = context;
  const consumer = someConsumer(context);
  const current = yield { request: { method: 'GET', path: `/allocations/${consumer}`, version: '1.28' } };
  const body = current.reference.body as
    { allocations?: Record<string, { resources: Record<string, number> }>; consumer_generation?: number; project_id?: string; user_id?: string } | undefined;
  const allocations = Object.fromEntries(
    Object.entries(body?.allocations ?? {}).map(([uuid, item]) => [
      uuid,
      { resources: Object.fromEntries(Object.entries(item.resources).map(([name, amount]) => [name, random.chance(0.5) ? amount + 1 : amount])) },
    ]),
  );
  const known = model.consumers.get(consumer) ?? { project: random.pick(model.projects), user: random.pick(model.users) };
  const version = random.pick(['1.28', '1.33', '1.36', '1.38']);
  const json: Record<string, unknown> = {
    allocations,
    project_id: body?.project_id ?? known.project,
    user_id: body?.user_id ?? known.user,
    consumer_generation: random.chance(0.85) ? (body?.consumer_generation ?? null) : random.pick([null, 0, 5]),
  };
  if (minor(version) >= 38 && random.chance(0.5)) json.consumer_type = random.pick(['INSTANCE', 'MIGRATION']);
  const answer = yield { request: { method: 'PUT', path: `/allocations/${consumer}`, version, json } };
  if (answer.reference.status === 204 && Object.keys(allocations).length === 0) model.consumers.delete(consumer);
}

/** A move as nova does it: the instance's allocations go to a migration consumer and new ones are claimed, in one POST. */
function* move(context: Context): Operation {
  const { random, model } = context;
  const instance = someConsumer(context);
  const current = yield { request: { method: 'GET', path: `/allocations/${instance}`, version: '1.28' } };
  const body = current.reference.body as
    { allocations?: Record<string, { resources: Record<string, number> }>; consumer_generation?: number; project_id?: string; user_id?: string } | undefined;
  const held = body?.allocations ?? {};
  const project = body?.project_id ?? random.pick(model.projects);
  const user = body?.user_id ?? random.pick(model.users);
  const target = pickProvider(context, 'compute') ?? someProvider(context);
  const resources = Object.values(held)[0]?.resources ?? { VCPU: 1 };
  const migration = random.uuid();
  const version = random.pick(['1.28', '1.34', '1.38', '1.13', '1.27']);
  const v = minor(version);
  const entry = (allocations: unknown, generation: number | null | undefined, type: string) => ({
    allocations,
    project_id: project,
    user_id: user,
    ...(v >= 28 ? { consumer_generation: generation } : {}),
    ...(v >= 38 ? { consumer_type: type } : {}),
  });
  const json = {
    [migration]: entry(Object.fromEntries(Object.entries(held).map(([uuid, item]) => [uuid, { resources: item.resources }])), null, 'MIGRATION'),
    [instance]: entry({ [target]: { resources } }, random.chance(0.9) ? (body?.consumer_generation ?? null) : 3, 'INSTANCE'),
  };
  const answer = yield { request: { method: 'POST', path: '/allocations', version, json } };
  if (answer.reference.status === 204) {
    if (Object.keys(held).length > 0) model.consumers.set(migration, { project, user });
    model.consumers.set(instance, { project, user });
    if (random.chance(0.5)) {
      // Confirming the move drops the migration's allocations (an empty POST entry, or DELETE).
      if (random.chance(0.5)) {
        yield {
          request: {
            method: 'POST',
            path: '/allocations',
            version: '1.28',
            json: { [migration]: { allocations: {}, project_id: project, user_id: user, consumer_generation: 1 } },
          },
        };
      } else {
        yield { request: { method: 'DELETE', path: `/allocations/${migration}`, version: '1.28' } };
      }
      model.consumers.delete(migration);
    }
  }
}

function* deleteAllocations(context: Context): Operation {
  const consumer = someConsumer(context);
  const answer = yield { request: { method: 'DELETE', path: `/allocations/${consumer}`, version: versionFor(context, '1.0', '1.28') } };
  if (answer.reference.status === 204) context.model.consumers.delete(consumer);
}

/** nova's reshape: a root's inventory of one class moves to a (new) child with the allocations against it. */
function* reshape(context: Context): Operation {
  const { random, model } = context;
  const root = pickProvider(context, 'compute');
  if (!root) return yield* buildCloud(context);
  let child = model.list().find((provider) => provider.parent === root && provider.role === 'numa')?.uuid;
  if (!child) {
    child = random.uuid();
    const created = yield {
      request: {
        method: 'POST',
        path: '/resource_providers',
        version: '1.20',
        json: { uuid: child, name: `numa-${model.nextNumber()}`, parent_provider_uuid: root },
      },
    };
    if (!ok(created.reference)) return;
    model.providers.set(child, { uuid: child, name: created.reference.body.name, parent: root, role: 'numa' });
  }
  const rootInventory = yield { request: { method: 'GET', path: `/resource_providers/${root}/inventories`, version: '1.30' } };
  const childInventory = yield { request: { method: 'GET', path: `/resource_providers/${child}/inventories`, version: '1.30' } };
  const held = yield { request: { method: 'GET', path: `/resource_providers/${root}/allocations`, version: '1.30' } };
  const rootRecords = (rootInventory.reference.body?.inventories ?? {}) as Record<string, Record<string, unknown>>;
  const moving = random.chance(0.8) ? 'VCPU' : random.pick(Object.keys(rootRecords).sort().concat('VCPU'));
  const { [moving]: moved, ...staying } = rootRecords;
  const childRecords = { ...((childInventory.reference.body?.inventories ?? {}) as Record<string, unknown>), ...(moved ? { [moving]: moved } : {}) };
  const allocations: Record<string, unknown> = {};
  const consumers = Object.keys((held.reference.body?.allocations ?? {}) as Record<string, unknown>)
    .sort()
    .slice(0, 3);
  for (const consumer of consumers) {
    const current = yield { request: { method: 'GET', path: `/allocations/${consumer}`, version: '1.30' } };
    const body = current.reference.body as {
      allocations: Record<string, { resources: Record<string, number> }>;
      consumer_generation: number;
      project_id: string;
      user_id: string;
    };
    const rewritten: Record<string, { resources: Record<string, number> }> = {};
    for (const [uuid, item] of Object.entries(body.allocations ?? {})) {
      for (const [resourceClass, amount] of Object.entries(item.resources)) {
        const holder = uuid === root && resourceClass === moving ? child : uuid;
        (rewritten[holder] ??= { resources: {} }).resources[resourceClass] = amount;
      }
    }
    allocations[consumer] = {
      allocations: rewritten,
      project_id: body.project_id,
      user_id: body.user_id,
      consumer_generation: maybeStale(context, body.consumer_generation),
    };
  }
  const json = {
    inventories: {
      [root]: { resource_provider_generation: maybeStale(context, generationOf(rootInventory.reference)), inventories: staying },
      [child]: { resource_provider_generation: generationOf(childInventory.reference) ?? 0, inventories: childRecords },
    },
    allocations,
  };
  yield { request: { method: 'POST', path: '/reshaper', version: random.pick(['1.30', '1.30', '1.38', '1.39', '1.29']), json } };
}

function* versionDocument(context: Context): Operation {
  yield { request: { method: 'GET', path: '/', version: context.random.chance(0.5) ? null : context.random.pick(VERSIONS) } };
}

// ---------------------------------------------------------------- hostile requests

const ODD_VERSIONS = ['-1.0', '01.5', '1.05', '1.040', 'latest', '1.40', '2.0', '1', ' 1.5', '1.a', '0.9', '1.5.1', 'LATEST', '', '1.99999999999999999999'];
const ODD_CONTENT_TYPES = [
  'application/JSON',
  'Application/Json',
  'text/plain',
  'application/json; charset=UTF-8',
  'application/x-www-form-urlencoded',
  'application/jsonx',
  '',
];
const ODD_ACCEPTS = ['application/xml', 'text/html', '*/*', 'application/json;q=0.5', 'application/*', 'text/plain, application/json', 'application/JSON'];
const BAD_UUIDS = ['not-a-uuid', '12345', 'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ', '%20', 'a'.repeat(300)];
const ODD_NUMBERS = [-1, 0, 1.5, 2147483647, 2147483648, 2 ** 63, 1e20, '5', null, true];

function* hostile(context: Context): Operation {
  const { random, model } = context;
  const uuid = someProvider(context);
  const category = random.weighted({
    brokenJson: 2,
    contentType: 2,
    version: 3,
    accept: 2,
    badUuid: 2,
    unknownField: 2,
    numbers: 3,
    names: 2,
    badQuery: 3,
    method: 1,
  });
  switch (category) {
    case 'brokenJson':
      yield {
        request: {
          method: random.pick(['POST', 'PUT'] as const),
          path: random.pick(['/resource_providers', `/resource_providers/${uuid}/inventories`, '/allocations', `/resource_providers/${uuid}/traits`]),
          version: '1.39',
          rawBody: random.pick(['{', '{"name": }', '[1,2', 'null', '"text"', '{"a":1}}', '\u0000']),
          headers: { 'content-type': 'application/json' },
        },
      };
      return;
    case 'contentType': {
      const contentType = random.pick(ODD_CONTENT_TYPES);
      const requests: DiffRequest[] = [
        { method: 'POST', path: '/resource_providers', version: '1.20', rawBody: JSON.stringify({ name: `ct-${model.nextNumber()}`, uuid: random.uuid() }) },
        { method: 'POST', path: '/resource_classes', version: '1.7', rawBody: JSON.stringify({ name: 'CUSTOM_CONTENT_TYPE' }) },
        {
          method: 'PUT',
          path: `/resource_providers/${uuid}/traits`,
          version: '1.6',
          rawBody: JSON.stringify({ traits: [], resource_provider_generation: 999 }),
        },
        {
          method: 'PUT',
          path: `/allocations/${random.uuid()}`,
          version: '1.28',
          rawBody: JSON.stringify({ allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null }),
        },
        {
          method: 'PUT',
          path: `/resource_providers/${uuid}/inventories`,
          version: '1.26',
          rawBody: JSON.stringify({ resource_provider_generation: 999, inventories: {} }),
        },
      ];
      const request = random.pick(requests);
      yield { request: { ...request, headers: contentType === '' ? {} : { 'content-type': contentType } } };
      return;
    }
    case 'version': {
      const path = random.pick([
        '/',
        '/resource_providers',
        `/resource_providers/${uuid}`,
        '/traits?name=startswith:CUSTOM_',
        '/allocation_candidates?resources=VCPU:1',
      ]);
      const value = random.pick(ODD_VERSIONS);
      const header = random.chance(0.8)
        ? `placement ${value}`
        : random.pick([`compute ${value}`, value, `PLACEMENT ${value}`, `placement ${value}, compute 2.1`]);
      yield { request: { method: 'GET', path, version: null, headers: { 'openstack-api-version': header } } };
      return;
    }
    case 'accept': {
      const path = random.pick(['/', '/resource_providers', `/resource_providers/${uuid}`, `/resource_providers/${uuid}/inventories`, '/resource_classes']);
      yield { request: { method: 'GET', path, version: random.pick(['1.0', '1.39', null]), headers: { accept: random.pick(ODD_ACCEPTS) } } };
      return;
    }
    case 'badUuid': {
      const upperCase = random.chance(0.3);
      const bad = upperCase ? uuid.toUpperCase() : random.chance(0.2) ? uuid.replace(/-/g, '') : random.pick(BAD_UUIDS);
      const requests: DiffRequest[] = [
        { method: 'GET', path: `/resource_providers/${bad}`, version: '1.39' },
        { method: 'GET', path: `/allocations/${bad}`, version: '1.39' },
        {
          method: 'PUT',
          path: `/allocations/${bad}`,
          version: '1.39',
          json: { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE' },
        },
        { method: 'POST', path: '/resource_providers', version: '1.39', json: { name: `bad-uuid-${model.nextNumber()}`, uuid: bad } },
        { method: 'GET', path: `/resource_providers?uuid=${bad}`, version: '1.39' },
        { method: 'GET', path: `/resource_providers?in_tree=${bad}`, version: '1.39' },
        { method: 'GET', path: `/allocation_candidates?resources=VCPU:1&member_of=${bad}`, version: '1.39' },
        { method: 'PUT', path: `/resource_providers/${uuid}/aggregates`, version: '1.19', json: { aggregates: [bad], resource_provider_generation: 0 } },
      ];
      // A known uuid in upper case is the same object here and on upstream's MySQL, another one on the reference's SQLite
      // (docs/compatibility.md): only reads, which the tester checks against upstream's lower-case answer.
      yield { request: random.pick(upperCase ? requests.filter((request) => request.method === 'GET') : requests) };
      return;
    }
    case 'unknownField': {
      const requests: DiffRequest[] = [
        {
          method: 'POST',
          path: '/resource_providers',
          version: random.pick(['1.0', '1.20', '1.39']),
          json: { name: `extra-${model.nextNumber()}`, uuid: random.uuid(), bogus: 1 },
        },
        {
          method: 'PUT',
          path: `/resource_providers/${uuid}/inventories`,
          version: '1.26',
          json: { resource_provider_generation: 0, inventories: { VCPU: { total: 4, colour: 'red' } } },
        },
        {
          method: 'PUT',
          path: `/allocations/${random.uuid()}`,
          version: '1.28',
          json: { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null, extra: true },
        },
        { method: 'PUT', path: `/resource_providers/${uuid}/traits`, version: '1.6', json: { traits: [], resource_provider_generation: 0, more: [] } },
        { method: 'POST', path: '/resource_classes', version: '1.2', json: { name: 'CUSTOM_EXTRA', colour: 1 } },
        {
          method: 'PUT',
          path: `/allocations/${random.uuid()}`,
          version: '1.37',
          json: { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE' },
        },
      ];
      yield { request: random.pick(requests) };
      return;
    }
    case 'numbers': {
      const number = random.pick(ODD_NUMBERS);
      const field = random.pick(['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio']);
      const requests: DiffRequest[] = [
        {
          method: 'PUT',
          path: `/resource_providers/${uuid}/inventories/VCPU`,
          version: '1.26',
          json: { resource_provider_generation: 0, total: 8, [field]: number },
        },
        {
          method: 'POST',
          path: `/resource_providers/${uuid}/inventories`,
          version: '1.0',
          json: { resource_provider_generation: 0, resource_class: 'DISK_GB', total: 8, [field]: number },
        },
        {
          method: 'PUT',
          path: `/allocations/${random.uuid()}`,
          version: '1.28',
          json: { allocations: { [uuid]: { resources: { VCPU: number } } }, project_id: 'p', user_id: 'u', consumer_generation: null },
        },
        { method: 'PUT', path: `/resource_providers/${uuid}/traits`, version: '1.6', json: { traits: [], resource_provider_generation: number } },
        { method: 'GET', path: `/allocation_candidates?resources=VCPU:${String(number)}`, version: '1.39' },
        // Only limits that are refused or cut nothing: a cut is checked by the allocation candidates operation, against the unlimited answer.
        {
          method: 'GET',
          path: `/allocation_candidates?resources=VCPU:1&limit=${/^[0-9]+$/.test(String(number)) && Number(number) > 0 && Number(number) < 1000 ? 1000 : String(number)}`,
          version: '1.39',
        },
      ];
      yield { request: random.pick(requests) };
      return;
    }
    case 'names': {
      const name = random.pick(['', 'x'.repeat(201), 'x'.repeat(200), ' ', 'name\twith\ttabs', 'ünïcode', 'CUSTOM_' + 'A'.repeat(250), 'CUSTOM_with-dash']);
      const requests: DiffRequest[] = [
        { method: 'POST', path: '/resource_providers', version: random.pick(['1.0', '1.20', '1.39']), json: { name, uuid: random.uuid() } },
        { method: 'PUT', path: `/resource_providers/${uuid}`, version: '1.14', json: { name } },
        { method: 'POST', path: '/resource_classes', version: '1.7', json: { name } },
        { method: 'PUT', path: `/traits/${encodeURIComponent(name)}`, version: '1.6' },
        { method: 'GET', path: `/resource_providers?name=${encodeURIComponent(name)}`, version: '1.39' },
      ];
      yield { request: random.pick(requests) };
      return;
    }
    case 'badQuery': {
      const value = random.pick([
        'resources=VCPU:-1',
        'resources=VCPU:abc',
        'resources=VCPU',
        'resources=',
        'resources=VCPU:1&limit=0',
        'resources=VCPU:1&limit=-1',
        'resources=VCPU:1&member_of=in:',
        'resources=VCPU:1&required=',
        'resources=VCPU:1&required=!',
        'resources=VCPU:1&group_policy=bogus',
        'resources=VCPU:1&bogus=1',
        'resources1=VCPU:1',
        'resources_=VCPU:1',
        'resources=VCPU:1&resources=MEMORY_MB:1',
        'resources=NOT_A_CLASS:1',
        'resources=VCPU:1&required=in:',
        'resources=VCPU:1&root_required=in:HW_CPU_X86_AVX2',
        'resources=VCPU:1&same_subtree=_X',
        'resources=VCPU:1,VCPU:2',
        'resources=VCPU:1&required=HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2',
        'resources=VCPU:1&in_tree=',
        `resources=VCPU:1&member_of=!${model.aggregates[0]}`,
      ]);
      const path = random.chance(0.7) ? `/allocation_candidates?${value}` : `/resource_providers?${value}`;
      yield { request: { method: 'GET', path, version: random.pick(['1.39', '1.31', '1.25', '1.10', '1.4']) } };
      return;
    }
    case 'method':
      yield {
        request: {
          method: random.pick(['PATCH', 'OPTIONS', 'POST', 'DELETE'] as const),
          path: random.pick(['/', '/resource_providers', '/traits', `/resource_providers/${uuid}/usages`, '/allocation_candidates']),
          version: '1.39',
        },
      };
      return;
  }
}

// ---------------------------------------------------------------- the mix

const OPERATIONS: Record<string, OperationKind> = {
  'build cloud': buildCloud,
  'show provider': showProvider,
  'list providers': listProviders,
  'update provider': updateProvider,
  'delete provider': deleteProvider,
  inventory: changeInventory,
  usages,
  aggregates: changeAggregates,
  'provider traits': changeTraits,
  'trait catalog': traitCatalog,
  'resource classes': resourceClassCatalog,
  'rename class in use': renameClassInUse,
  'allocation candidates': allocationCandidates,
  'read allocations': readAllocations,
  'direct claim': directClaim,
  reclaim,
  move,
  'delete allocations': deleteAllocations,
  reshape,
  'version document': versionDocument,
  hostile,
};

const WEIGHTS: Record<string, number> = {
  'show provider': 3,
  'list providers': 8,
  'update provider': 3,
  'delete provider': 2,
  inventory: 6,
  usages: 3,
  aggregates: 3,
  'provider traits': 3,
  'trait catalog': 3,
  'resource classes': 3,
  'rename class in use': 1,
  'allocation candidates': 22,
  'read allocations': 4,
  'direct claim': 3,
  reclaim: 3,
  move: 4,
  'delete allocations': 3,
  reshape: 2,
  'version document': 1,
  hostile: 14,
};

/** Draws the next operation: building the cloud while it is small, then the mix above. */
export function nextOperation(context: Context): { name: string; steps: Operation } {
  const size = context.model.providers.size;
  const wanted = context.profile === 'nested' ? 14 : 10;
  const { 'rename class in use': _renameInUse, ...withoutRenamesInUse } = WEIGHTS;
  const weights = context.renamesInUse ? WEIGHTS : withoutRenamesInUse;
  const name = size < wanted && context.random.chance(size < 3 ? 0.9 : 0.5) ? 'build cloud' : context.random.weighted(weights);
  return { name, steps: OPERATIONS[name](context) };
}
