/**
 * The provider item: one per resource provider, holding everything about it
 * (inventories, usage, free capacity, traits, aggregates, children,
 * generation). It shares its partition with the provider's allocation items
 * (allocation.ts) and is the only item in the byShard index, whose sort key
 * keeps a tree's providers together.
 *
 *   pk RP#<uuid>   sk PROVIDER   spk SHARD#<n>   ssk <root>#<uuid>
 */
import { createHash } from 'node:crypto';
import { freeCapacities } from '../../domain/capacity.js';
import { SEARCH_FIELDS, type Inventories, type Provider, type SearchProvider } from '../../domain/model.js';
import {
  boundedItem,
  nullableStringField,
  numberField,
  numberMapField,
  stringField,
  stringListField,
  stringSetField,
  TYPE_ATTRIBUTE,
  type Item,
  type Key,
} from './fields.js';
import { uuidPart } from './key-parts.js';
import { PROVIDER_SHARDS } from '../table-definition.js';

export const PROVIDER_TYPE = 'provider';
export const PROVIDER_SK = 'PROVIDER';

/** The provider item's attributes. */
export const ProviderAttribute = {
  uuid: 'uuid',
  name: 'name',
  generation: 'generation',
  parentUuid: 'parentUuid',
  rootUuid: 'rootUuid',
  inventories: 'inventories',
  usages: 'usages',
  /** Free capacity per class, kept beside the inventories so that claim conditions compare without arithmetic. */
  free: 'free',
  traits: 'traits',
  aggregates: 'aggregates',
  /** A string set, so that a child is linked and unlinked by ADD and DELETE without reading the parent; absent when empty. */
  children: 'children',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
} as const;
const A = ProviderAttribute;

/** The partition of a provider and its allocations. */
export const providerPartition = (uuid: string): string => uuidPart('RP', uuid);
export const providerKey = (uuid: string): Key => ({ pk: providerPartition(uuid), sk: PROVIDER_SK });

/** Trees, not providers, are sharded, so a whole tree sits in one index partition. */
export function shardOf(rootUuid: string): string {
  const digest = createHash('sha1').update(rootUuid).digest();
  return `SHARD#${digest.readUInt16BE(0) % PROVIDER_SHARDS}`;
}

export const allShards = (): string[] => Array.from({ length: PROVIDER_SHARDS }, (_, n) => `SHARD#${n}`);

/** The byShard sort keys of one tree's providers begin with this. */
export const treeSortPrefix = (rootUuid: string): string => `${rootUuid}#`;

/**
 * Index keys of a provider item: its shard (byShard), whose sort key keeps
 * each tree together, which is how a tree is listed. Providers are in no
 * other index, so that a claim, which changes a provider's usage, rewrites
 * one index entry only (an index entry is rewritten whenever its item is).
 */
function providerIndexKeys(uuid: string, rootUuid: string) {
  return { spk: shardOf(rootUuid), ssk: `${treeSortPrefix(rootUuid)}${uuid}` };
}

/**
 * Inventories are stored as one JSON string of number tuples, not as a map
 * of maps: no expression looks inside them (claims compare `free`), and the
 * candidate search reads thousands of providers per request, for which
 * DynamoDB's typed nested maps cost several times the bytes and parsing.
 */
type PackedInventory = [total: number, reserved: number, minUnit: number, maxUnit: number, stepSize: number, allocationRatio: number];

export function packInventories(inventories: Inventories): string {
  const packed: Record<string, PackedInventory> = {};
  for (const [resourceClass, inventory] of Object.entries(inventories)) {
    packed[resourceClass] = [inventory.total, inventory.reserved, inventory.min_unit, inventory.max_unit, inventory.step_size, inventory.allocation_ratio];
  }
  return JSON.stringify(packed);
}

function unpackInventories(packed: unknown): Inventories {
  if (typeof packed !== 'string') return {};
  return Object.fromEntries(
    Object.entries(JSON.parse(packed) as Record<string, PackedInventory>).map(([resourceClass, tuple]) => {
      const [total, reserved, min_unit, max_unit, step_size, allocation_ratio] = tuple;
      return [resourceClass, { total, reserved, min_unit, max_unit, step_size, allocation_ratio }];
    }),
  );
}

/** The one encoder of provider items; refuses (ItemTooLarge) a provider past the item size bound. */
export function encodeProvider(provider: Provider): Item {
  const item: Item = {
    ...providerKey(provider.uuid),
    ...providerIndexKeys(provider.uuid, provider.rootUuid),
    [TYPE_ATTRIBUTE]: PROVIDER_TYPE,
    [A.uuid]: provider.uuid,
    [A.name]: provider.name,
    [A.generation]: provider.generation,
    [A.parentUuid]: provider.parentUuid,
    [A.rootUuid]: provider.rootUuid,
    [A.inventories]: packInventories(provider.inventories),
    [A.usages]: provider.usages,
    [A.free]: freeCapacities(provider),
    [A.traits]: provider.traits,
    [A.aggregates]: provider.aggregates,
    [A.children]: provider.children.length > 0 ? new Set(provider.children) : undefined,
    [A.createdAt]: provider.createdAt,
    [A.updatedAt]: provider.updatedAt,
  };
  return boundedItem(item, () => `Resource provider ${provider.uuid}`);
}

/** What the allocation candidate search reads of a provider: parsing what it ignores is most of a search's CPU. */
export const SEARCH_ATTRIBUTES: readonly string[] = SEARCH_FIELDS.map((field) => A[field]);

export function decodeSearchProvider(item: Item): SearchProvider {
  return {
    uuid: stringField(item, A.uuid),
    parentUuid: nullableStringField(item, A.parentUuid),
    rootUuid: stringField(item, A.rootUuid),
    inventories: unpackInventories(item[A.inventories]),
    usages: numberMapField(item, A.usages),
    traits: stringListField(item, A.traits),
    aggregates: stringListField(item, A.aggregates),
    children: stringSetField(item, A.children),
  };
}

/** The one decoder of provider items. */
export function decodeProvider(item: Item): Provider {
  return {
    ...decodeSearchProvider(item),
    name: stringField(item, A.name),
    generation: numberField(item, A.generation),
    createdAt: stringField(item, A.createdAt),
    updatedAt: stringField(item, A.updatedAt),
  };
}

/** What the region's capacity figures need of a provider. */
export type ProviderCapacity = Pick<Provider, 'uuid' | 'name' | 'inventories' | 'usages'>;
export const CAPACITY_ATTRIBUTES: readonly string[] = [A.uuid, A.name, A.inventories, A.usages];

export function decodeProviderCapacity(item: Item): ProviderCapacity {
  return {
    uuid: stringField(item, A.uuid),
    name: stringField(item, A.name),
    inventories: unpackInventories(item[A.inventories]),
    usages: numberMapField(item, A.usages),
  };
}
