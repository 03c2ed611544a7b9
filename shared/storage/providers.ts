/** Provider items: reads, and the writes that change them (as transaction writes). */
import { freeCapacities } from '../domain/capacity.js';
import { SEARCH_FIELDS, type Inventories, type Provider, type SearchProvider } from '../domain/model.js';
import { nextAncestor, type Lineage } from '../domain/provider-tree.js';
import { tableName } from './client.js';
import { batchGet, getItem, projectionOf, queryAll, withProjection, type Item, type Projection } from './reads.js';
import {
  aggregateMemberKey,
  aggregatePartition,
  allShards,
  providerIndexKeys,
  providerKey,
  providerNameKey,
  shardOf,
  sharingInAggregateKey,
  sharingMarkerKey,
  treeSortPrefix,
  type Key,
} from './keys.js';
import { SHARING_TRAIT } from '../domain/standard-catalog.js';
import { BY_SHARD_INDEX } from './table-definition.js';
import { MAX_TRANSACTION_ITEMS, type Write } from './transaction.js';
import { resourceClasses, traits } from './catalog.js';
import { nullableStringField, numberField, numberMapField, stringField, stringListField, stringSetField } from './item-fields.js';

/**
 * Inventories are stored as one JSON string of number tuples, not as a map
 * of maps: no expression looks inside them (claims compare `free`), and the
 * candidate search reads thousands of providers per request, for which
 * DynamoDB's typed nested maps cost several times the bytes and parsing.
 */
type PackedInventory = [total: number, reserved: number, minUnit: number, maxUnit: number, stepSize: number, allocationRatio: number];

function packInventories(inventories: Inventories): string {
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

function toItem(provider: Provider): Item {
  return {
    ...providerKey(provider.uuid),
    ...providerIndexKeys(provider.uuid, provider.rootUuid),
    type: 'provider',
    uuid: provider.uuid,
    name: provider.name,
    generation: provider.generation,
    parentUuid: provider.parentUuid,
    rootUuid: provider.rootUuid,
    inventories: packInventories(provider.inventories),
    usages: provider.usages,
    // Kept beside the inventories so claim conditions can compare without arithmetic.
    free: freeCapacities(provider),
    traits: provider.traits,
    aggregates: provider.aggregates,
    // A string set, so that a child is linked and unlinked by ADD and DELETE without reading the parent; absent when empty.
    children: provider.children.length > 0 ? new Set(provider.children) : undefined,
    createdAt: provider.createdAt,
    updatedAt: provider.updatedAt,
  };
}

/** Reads only SEARCH_ATTRIBUTES: the search reads thousands of providers, and parsing what it ignores is most of its CPU. */
export const SEARCH_PROJECTION: Projection = projectionOf(SEARCH_FIELDS);

export function fromSearchItem(item: Item): SearchProvider {
  return {
    uuid: stringField(item, 'uuid'),
    parentUuid: nullableStringField(item, 'parentUuid'),
    rootUuid: stringField(item, 'rootUuid'),
    inventories: unpackInventories(item.inventories),
    usages: numberMapField(item, 'usages'),
    traits: stringListField(item, 'traits'),
    aggregates: stringListField(item, 'aggregates'),
    children: stringSetField(item, 'children'),
  };
}

/** The one decoder of provider items (toItem is their one encoder). */
export function providerFromItem(item: Item): Provider {
  return {
    ...fromSearchItem(item),
    name: stringField(item, 'name'),
    generation: numberField(item, 'generation'),
    createdAt: stringField(item, 'createdAt'),
    updatedAt: stringField(item, 'updatedAt'),
  };
}

export async function getProvider(uuid: string): Promise<Provider | undefined> {
  const item = await getItem(providerKey(uuid));
  return item ? providerFromItem(item) : undefined;
}

/**
 * Batch read; missing providers are absent from the map. Strongly consistent
 * unless `consistent` is false: then at half the read units, for callers to
 * which a state up to about a second old is as good as the current one, and a
 * provider that read misses (one created moments ago) is read again strongly
 * consistent, so that no existing provider is ever reported missing.
 */
export async function getProviders(uuids: Iterable<string>, { consistent = true }: { consistent?: boolean } = {}): Promise<Map<string, Provider>> {
  const wanted = [...new Set(uuids)];
  const items = await batchGet(wanted.map(providerKey), { consistent });
  const found = new Map(items.map(providerFromItem).map((provider) => [provider.uuid, provider]));
  const missed = wanted.filter((uuid) => !found.has(uuid));
  if (!consistent && missed.length > 0) for (const [uuid, provider] of await getProviders(missed)) found.set(uuid, provider);
  return found;
}

export async function findProviderUuidByName(name: string): Promise<string | undefined> {
  const item = await getItem(providerNameKey(name));
  return item && stringField(item, 'uuid');
}

/**
 * A new parent and the providers above it, read strongly consistently one
 * level at a time (indexes may lag behind a move that just happened), up to
 * its root or until the walk finds the tree damaged (nextAncestor).
 */
export async function getLineage(parentUuid: string): Promise<Lineage> {
  const providers: Provider[] = [];
  for (let next: string | null = parentUuid; next !== null;) {
    const provider = await getProvider(next);
    // A provider above the parent that is gone: a damaged tree (a parent with children cannot be deleted).
    if (provider === undefined) return { providers, damaged: providers.length > 0 };
    providers.push(provider);
    const step = nextAncestor(providers);
    if (step === 'damaged') return { providers, damaged: true };
    next = step;
  }
  return { providers, damaged: false };
}

/**
 * Every provider below `provider`, read strongly consistently level by level
 * through the children sets. The walk skips providers it has seen (a damaged
 * tree) and stops once it found more than one transaction can rewrite.
 */
export async function getDescendants(provider: Provider): Promise<Provider[]> {
  const found = new Map<string, Provider>([[provider.uuid, provider]]);
  let level = provider.children;
  while (level.length > 0 && found.size <= MAX_TRANSACTION_ITEMS) {
    const read = await getProviders(level.filter((uuid) => !found.has(uuid)));
    for (const child of read.values()) found.set(child.uuid, child);
    level = [...read.values()].flatMap((child) => child.children).filter((uuid) => !found.has(uuid));
  }
  found.delete(provider.uuid);
  return [...found.values()];
}

/** Every provider item, from the sharded index (eventually consistent), the 8 shards in parallel. */
async function queryEveryShard(projection?: Projection): Promise<Item[]> {
  const shards = await Promise.all(
    allShards().map((shard) => {
      const input = {
        IndexName: BY_SHARD_INDEX.name,
        KeyConditionExpression: '#pk = :shard',
        ExpressionAttributeNames: { '#pk': BY_SHARD_INDEX.partitionKey },
        ExpressionAttributeValues: { ':shard': shard },
      };
      return queryAll(projection ? withProjection(input, projection) : input);
    }),
  );
  return shards.flat();
}

/** Every provider (eventually consistent). */
export async function listProviders(): Promise<Provider[]> {
  return (await queryEveryShard()).map(providerFromItem);
}

const CAPACITY_FIELDS = ['uuid', 'name', 'inventories', 'usages'] as const;
const CAPACITY_PROJECTION: Projection = projectionOf(CAPACITY_FIELDS);

/**
 * What the region's capacity figures need of every provider. The sharded
 * index holds provider items only, so this reads nothing else (a table scan
 * would read every allocation and consumer too); read units follow the size
 * of the provider items, whatever the projection.
 */
export async function listProviderCapacities(): Promise<Pick<Provider, (typeof CAPACITY_FIELDS)[number]>[]> {
  return (await queryEveryShard(CAPACITY_PROJECTION)).map((item) => ({
    uuid: stringField(item, 'uuid'),
    name: stringField(item, 'name'),
    inventories: unpackInventories(item.inventories),
    usages: numberMapField(item, 'usages'),
  }));
}

/** The providers of one tree, from the sharded index, whose sort key keeps a tree together (eventually consistent). */
export async function listTree(rootUuid: string): Promise<Provider[]> {
  const items = await queryAll({
    IndexName: BY_SHARD_INDEX.name,
    KeyConditionExpression: '#pk = :shard AND begins_with(#sk, :tree)',
    ExpressionAttributeNames: { '#pk': BY_SHARD_INDEX.partitionKey, '#sk': BY_SHARD_INDEX.sortKey },
    ExpressionAttributeValues: { ':shard': shardOf(rootUuid), ':tree': treeSortPrefix(rootUuid) },
  });
  return items.map(providerFromItem);
}

/** The uuids of the providers in any of the aggregates, from their membership items; `onPage` hears how many items each page read. */
export async function listAggregateMembers(aggregates: string[], onPage?: (scanned: number) => void): Promise<string[]> {
  const pages = await Promise.all(
    aggregates.map((aggregate) =>
      queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': aggregatePartition(aggregate) } }, onPage),
    ),
  );
  return [...new Set(pages.flat().map((item) => stringField(item, 'uuid')))];
}

/**
 * The members of any of these aggregates, which is all a member_of filter
 * can select, without reading every provider. Eventually consistent, like the
 * index listing of every provider.
 */
export async function listAggregateProviders(aggregates: string[]): Promise<Provider[]> {
  return [...(await getProviders(await listAggregateMembers(aggregates), { consistent: false })).values()];
}

/**
 * Writes the provider's new state, on condition that nobody changed it since
 * it was read as `read` (undefined: it must not exist yet). Generation alone
 * is not enough: allocation deletes move usages and aggregates before 1.19
 * change the provider without a new generation (nor a new update time), as
 * upstream does, and a new or deleted child changes only the parent's children.
 */
function putProvider(provider: Provider, read: Provider | undefined, onConditionFailed?: () => Error): Write {
  const children = read?.children.length ? 'children = :children' : 'attribute_not_exists(children)';
  return {
    item: {
      Put: {
        TableName: tableName(),
        Item: toItem(provider),
        ...(read === undefined
          ? { ConditionExpression: 'attribute_not_exists(pk)' }
          : {
              ConditionExpression: `generation = :read AND usages = :usages AND aggregates = :aggregates AND updatedAt = :readAt AND ${children}`,
              ExpressionAttributeValues: {
                ':read': read.generation,
                ':usages': read.usages,
                ':aggregates': read.aggregates,
                ':readAt': read.updatedAt,
                ...(read.children.length ? { ':children': new Set(read.children) } : {}),
              },
            }),
      },
    },
    onConditionFailed,
  };
}

export function deleteProvider(provider: Provider, onConditionFailed?: () => Error): Write {
  return {
    item: {
      Delete: {
        TableName: tableName(),
        Key: providerKey(provider.uuid),
        ConditionExpression: 'generation = :read AND attribute_not_exists(children)',
        ExpressionAttributeValues: { ':read': provider.generation },
      },
    },
    onConditionFailed,
  };
}

/**
 * Links a child into its parent or out of it, without touching the parent's
 * generation (upstream does not). With the parent as it was read, the write
 * also requires that it still hangs where it did and has the same root: a
 * new child then cannot take a root that a concurrent move just changed.
 */
function linkChild(parentUuid: string, childUuid: string, link: 'ADD' | 'DELETE', asRead?: Provider): Write {
  const place = placeUnchanged(asRead);
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: providerKey(parentUuid),
        UpdateExpression: `${link} children :child`,
        ConditionExpression: place.ConditionExpression,
        ExpressionAttributeValues: { ':child': new Set([childUuid]), ...place.ExpressionAttributeValues },
      },
    },
  };
}

/** The condition that a provider exists and, when given as read, still has the parent and root it was read with. */
function placeUnchanged(asRead?: Provider): { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> } {
  if (asRead === undefined) return { ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: {} };
  return {
    ConditionExpression: 'attribute_exists(pk) AND parentUuid = :parent AND rootUuid = :root',
    ExpressionAttributeValues: { ':parent': asRead.parentUuid, ':root': asRead.rootUuid },
  };
}

/** A check, written nowhere, that a provider above a new parent still hangs where it was read. */
function stillInPlace(asRead: Provider): Write {
  return { item: { ConditionCheck: { TableName: tableName(), Key: providerKey(asRead.uuid), ...placeUnchanged(asRead) } } };
}

export function claimName(name: string, uuid: string, onConditionFailed: () => Error): Write {
  return {
    item: {
      Put: {
        TableName: tableName(),
        Item: { ...providerNameKey(name), type: 'providerName', uuid },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed,
  };
}

export function releaseName(name: string): Write {
  return { item: { Delete: { TableName: tableName(), Key: providerNameKey(name) } } };
}

const customNames = (names: Iterable<string>) => new Set([...names].filter((name) => name.startsWith('CUSTOM_')));

function refChanges(before: Iterable<string>, after: Iterable<string>): Map<string, number> {
  const old = customNames(before);
  const next = customNames(after);
  const changes = new Map<string, number>();
  for (const name of next) if (!old.has(name)) changes.set(name, 1);
  for (const name of old) if (!next.has(name)) changes.set(name, -1);
  return changes;
}

export interface ProviderChangeErrors {
  /** The provider changed since it was read (default: ConcurrentUpdate). */
  onStale?: () => Error;
  onDuplicateName?: (name: string) => Error;
  onUnknownResourceClass?: (name: string) => Error;
  onUnknownTrait?: (name: string) => Error;
}

/** One provider's change: `before` undefined creates, `after` undefined deletes. */
export interface ProviderChange {
  before: Provider | undefined;
  after: Provider | undefined;
  /**
   * When the change gives the provider a new parent: that parent and the
   * providers above it, as read. The transaction requires each of them to
   * still hang where it was read, so that two concurrent moves cannot close
   * a loop between them, nor a new child take a stale root.
   */
  lineage?: readonly Provider[];
}

/**
 * Every write one provider change needs, for one transaction: the provider
 * item (conditioned on the generation it was read at), its unique name, its
 * parent's children (and the new parent's place), and the use counts of the custom resource classes
 * and traits it starts or stops using (which must exist).
 */
export function providerChangeWrites(
  before: Provider | undefined,
  after: Provider | undefined,
  errors: ProviderChangeErrors = {},
  lineage?: readonly Provider[],
): Write[] {
  return providerChangesWrites([{ before, after, lineage }], errors);
}

/**
 * providerChangeWrites for several providers in one transaction. A
 * transaction may write each item only once, so the use counts are summed
 * per class and trait over all changes (a class moving from one provider to
 * another writes no count at all).
 */
export function providerChangesWrites(changes: readonly ProviderChange[], errors: ProviderChangeErrors = {}): Write[] {
  return [...changes.flatMap((change) => providerItemWrites(change, errors)), ...catalogUseWrites(changes, errors)];
}

/** The writes of one change that touch items of that provider alone, and its parents' children. */
function providerItemWrites({ before, after, lineage = [] }: ProviderChange, errors: ProviderChangeErrors): Write[] {
  const writes: Write[] = [];
  if (after === undefined) writes.push(deleteProvider(before!, errors.onStale));
  else writes.push(putProvider(after, before, errors.onStale));

  if (before?.name !== after?.name) {
    if (before) writes.push(releaseName(before.name));
    if (after) writes.push(claimName(after.name, after.uuid, () => errors.onDuplicateName?.(after.name) ?? new Error(`duplicate name ${after.name}`)));
  }
  if (before?.parentUuid !== after?.parentUuid) {
    // A transaction writes an item once: the old and new parent's links carry their own place conditions.
    const above = new Map(lineage.map((provider) => [provider.uuid, provider]));
    const take = (uuid: string) => {
      const provider = above.get(uuid);
      above.delete(uuid);
      return provider;
    };
    if (before?.parentUuid) writes.push(linkChild(before.parentUuid, before.uuid, 'DELETE', take(before.parentUuid)));
    if (after?.parentUuid) writes.push(linkChild(after.parentUuid, after.uuid, 'ADD', take(after.parentUuid)));
    writes.push(...[...above.values()].map(stillInPlace));
  }
  return [...writes, ...searchEntryWrites(before, after)];
}

/** The custom class and trait use counts the changes move, net per name. */
function catalogUseWrites(changes: readonly ProviderChange[], errors: ProviderChangeErrors): Write[] {
  const classUses = new Map<string, number>();
  const traitUses = new Map<string, number>();
  const sum = (into: Map<string, number>, changed: Map<string, number>) => {
    for (const [name, delta] of changed) into.set(name, (into.get(name) ?? 0) + delta);
  };
  for (const { before, after } of changes) {
    sum(classUses, refChanges(Object.keys(before?.inventories ?? {}), Object.keys(after?.inventories ?? {})));
    sum(traitUses, refChanges(before?.traits ?? [], after?.traits ?? []));
  }
  const writes: Write[] = [];
  for (const [name, delta] of classUses) {
    if (delta === 0) continue;
    writes.push(resourceClasses.adjustRefs(name, delta, () => errors.onUnknownResourceClass?.(name) ?? new Error(`unknown resource class ${name}`)));
  }
  for (const [name, delta] of traitUses) {
    if (delta === 0) continue;
    writes.push(traits.adjustRefs(name, delta, () => errors.onUnknownTrait?.(name) ?? new Error(`unknown trait ${name}`)));
  }
  return writes;
}

/**
 * The entries the allocation candidate search starts from: a marker per
 * sharing provider and one item per aggregate membership.
 */
function searchEntryWrites(before: Provider | undefined, after: Provider | undefined): Write[] {
  const entries = (provider: Provider | undefined): Map<string, Key> => {
    const keys = new Map<string, Key>();
    if (provider === undefined) return keys;
    const sharing = provider.traits.includes(SHARING_TRAIT);
    if (sharing) keys.set('sharing', sharingMarkerKey(provider.uuid));
    for (const aggregate of provider.aggregates) {
      keys.set(`aggregate ${aggregate}`, aggregateMemberKey(aggregate, provider.uuid));
      if (sharing) keys.set(`sharing ${aggregate}`, sharingInAggregateKey(aggregate, provider.uuid));
    }
    return keys;
  };
  const old = entries(before);
  const next = entries(after);
  const writes: Write[] = [];
  for (const [name, key] of next) {
    if (!old.has(name)) writes.push({ item: { Put: { TableName: tableName(), Item: { ...key, type: 'searchEntry', uuid: after!.uuid } } } });
  }
  for (const [name, key] of old) {
    if (!next.has(name)) writes.push({ item: { Delete: { TableName: tableName(), Key: key } } });
  }
  return writes;
}
