/** Provider items: reads, and the writes that change them (as writes of one change). */
import { entryOf, type Provider } from '../domain/model.js';
import { freeCapacities } from '../domain/capacity.js';
import { renameEntry } from '../domain/class-rename.js';
import { nextAncestor, type Lineage } from '../domain/provider-tree.js';
import { SHARING_TRAIT } from '../domain/standard-catalog.js';
import { randomUUID } from 'node:crypto';
import { config } from '../config.js';
import { tableName } from './dynamodb.js';
import { keepsEntries, writesFormat } from './storage-format.js';
import { MAX_TRANSACTION_ITEMS } from './commit/transact.js';
import type { Plan } from './commit/transaction.js';
import { Expression } from './expression.js';
import { batchGet, getItem, projectionOf, queryAll, withProjection, type Projection } from './reads.js';
import { BY_SHARD_INDEX } from './table-definition.js';
import type { Write } from './commit/write.js';
import { resourceClasses, traits } from './catalog.js';
import { type Item } from './items/fields.js';
import {
  allShards,
  CAPACITY_ATTRIBUTES,
  decodeProvider,
  decodeProviderCapacity,
  encodeProvider,
  packInventories,
  ProviderAttribute as A,
  providerKey,
  shardOf,
  treeSortPrefix,
  type ProviderCapacity,
} from './items/provider.js';
import { decodeProviderName, encodeProviderName, providerNameKey } from './items/provider-name.js';
import { encodeEntryCleanup, entryCleanupKey, type EntryCleanup } from './items/entry-cleanup.js';
import { aggregatePartition, sharingPartition } from './items/search-entry.js';
import { shardForProvider } from './items/catalog-use-count.js';
import type { CountChange } from './items/count-change.js';
import { commitCountsAfter, commitCountsAhead, newCountChange, raiseCountsAhead, undoCountsAhead } from './commit/count-changes.js';
import { ConcurrentUpdate } from './errors.js';
import { SORT_PART_BYTES } from './items/key-parts.js';
import { capacityEntryChanges } from './entries/capacity-entries.js';
import { agreesWithEntries, listSearchEntries, searchEntryWrites } from './entries/search-entries.js';
import { addEntriesAhead, cleanUpEntries, ENTRIES_REMOVED_BY_THE_REQUEST, entriesOf, holdUntil } from './entries/outside-commit.js';
import { noteTraitHolders } from './trait-holders.js';

export async function getProvider(uuid: string): Promise<Provider | undefined> {
  const item = await getItem(providerKey(uuid));
  return item ? decodeProvider(item) : undefined;
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
  const found = new Map(items.map(decodeProvider).map((provider) => [provider.uuid, provider]));
  const missed = wanted.filter((uuid) => !found.has(uuid));
  if (!consistent && missed.length > 0) for (const [uuid, provider] of await getProviders(missed)) found.set(uuid, provider);
  return found;
}

export async function findProviderUuidByName(name: string): Promise<string | undefined> {
  const item = await getItem(providerNameKey(name));
  return item && decodeProviderName(item);
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
 * Every provider below `provider`, as its children sets read strongly
 * consistently say, level by level; providers already seen are skipped, so a
 * damaged tree cannot loop the walk. What the tree index (eventually
 * consistent) shows below it is read strongly consistently first, in one
 * round, so a deep subtree costs one round of reads rather than one per level;
 * only a child the index does not show yet takes a round of its own.
 */
export async function getDescendants(provider: Provider): Promise<Provider[]> {
  const indexed = await listTree(provider.rootUuid);
  const read = await getProviders(uuidsBelow(provider.uuid, indexed));
  const found = new Map<string, Provider>([[provider.uuid, provider]]);
  let level = provider.children;
  while (level.length > 0) {
    const unread = level.filter((uuid) => !found.has(uuid) && !read.has(uuid));
    if (unread.length > 0) for (const [uuid, child] of await getProviders(unread)) read.set(uuid, child);
    const children = level.filter((uuid) => !found.has(uuid)).flatMap((uuid) => read.get(uuid) ?? []);
    for (const child of children) found.set(child.uuid, child);
    level = children.flatMap((child) => child.children);
  }
  found.delete(provider.uuid);
  return [...found.values()];
}

/** The uuids below `uuid` by the parents these providers name. */
function uuidsBelow(uuid: string, providers: Provider[]): string[] {
  const childrenOf = new Map<string, string[]>();
  for (const { uuid: child, parentUuid } of providers) if (parentUuid !== null) childrenOf.set(parentUuid, [...(childrenOf.get(parentUuid) ?? []), child]);
  const below = new Set<string>();
  for (let level = childrenOf.get(uuid) ?? []; level.length > 0;) {
    const next = level.filter((child) => child !== uuid && !below.has(child));
    for (const child of next) below.add(child);
    level = next.flatMap((child) => childrenOf.get(child) ?? []);
  }
  return [...below];
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
  return (await queryEveryShard()).map(decodeProvider);
}

const CAPACITY_PROJECTION: Projection = projectionOf(CAPACITY_ATTRIBUTES);

/**
 * What the region's capacity figures need of every provider. The sharded
 * index holds provider items only, so this reads nothing else (a table scan
 * would read every allocation and consumer too); read units follow the size
 * of the provider items, whatever the projection.
 */
export async function listProviderCapacities(): Promise<ProviderCapacity[]> {
  return (await queryEveryShard(CAPACITY_PROJECTION)).map(decodeProviderCapacity);
}

/** The providers of one tree, from the sharded index, whose sort key keeps a tree together (eventually consistent). */
export async function listTree(rootUuid: string): Promise<Provider[]> {
  const items = await queryAll({
    IndexName: BY_SHARD_INDEX.name,
    KeyConditionExpression: '#pk = :shard AND begins_with(#sk, :tree)',
    ExpressionAttributeNames: { '#pk': BY_SHARD_INDEX.partitionKey, '#sk': BY_SHARD_INDEX.sortKey },
    ExpressionAttributeValues: { ':shard': shardOf(rootUuid), ':tree': treeSortPrefix(rootUuid) },
  });
  return items.map(decodeProvider);
}

/**
 * The providers of the tree `uuid` is in (eventually consistent), undefined
 * when there is no such provider. The index is first asked for the tree as if
 * `uuid` were its root, which one query answers: nova names its compute
 * nodes, roots, every time it refreshes them. Only when that tree does not
 * hold `uuid` (a child, or a provider the index does not show yet) is the
 * provider read for its root.
 */
export async function listTreeOf(uuid: string): Promise<Provider[] | undefined> {
  // A string too long for a sort key names no stored provider (their uuids are keys): only the provider read can tell.
  const asRoot = Buffer.byteLength(treeSortPrefix(uuid)) <= SORT_PART_BYTES ? await listTree(uuid) : [];
  if (asRoot.some((provider) => provider.uuid === uuid)) return asRoot;
  const provider = (await getProviders([uuid], { consistent: false })).get(uuid);
  return provider && listTree(provider.rootUuid);
}

/** The uuids of the providers in any of the aggregates, from their membership items; `onPage` hears how many items each page read. */
export const listAggregateMembers = (aggregates: string[], onPage?: (scanned: number) => void): Promise<string[]> =>
  listSearchEntries(aggregates.map(aggregatePartition), onPage);

/**
 * The members of any of these aggregates, which is all a member_of filter
 * can select, without reading every provider; with `sharingOnly`, only those
 * with MISC_SHARES_VIA_AGGREGATE, from their sharing entries, without reading
 * the other members (nova asks for an aggregate's sharing providers each time
 * it refreshes a compute node's associations). Eventually consistent, like
 * the index listing of every provider.
 */
export async function listAggregateProviders(aggregates: string[], { sharingOnly = false }: { sharingOnly?: boolean } = {}): Promise<Provider[]> {
  const uuids = sharingOnly ? await listSearchEntries(aggregates.map(sharingPartition)) : await listAggregateMembers(aggregates);
  return [...(await getProviders(uuids, { consistent: false })).values()].filter((provider) => agreesWithEntries(provider, aggregates, sharingOnly));
}

/** The condition that a provider's inventories are still as read: a class renamed meanwhile changes them and nothing else. */
const inventoriesAsRead = (e: Expression, read: Provider) => `${e.name(A.inventories)} = ${e.value(packInventories(read.inventories))}`;

/**
 * Writes the provider's new state, on condition that nobody changed it since
 * it was read as `read` (undefined: it must not exist yet). Generation alone
 * is not enough: allocation deletes move usages and aggregates before 1.19
 * change the provider without a new generation (nor a new update time), as
 * upstream does, a new or deleted child changes only the parent's children,
 * and a resource class renamed changes only the names in inventories and usages.
 */
function putProvider(provider: Provider, read: Provider | undefined, onConditionFailed?: () => Error): Write {
  const e = new Expression();
  let condition = 'attribute_not_exists(pk)';
  if (read !== undefined) {
    const children = read.children.length > 0 ? `${e.name(A.children)} = ${e.value(new Set(read.children))}` : `attribute_not_exists(${e.name(A.children)})`;
    condition = [
      `${e.name(A.generation)} = ${e.value(read.generation)}`,
      `${e.name(A.usages)} = ${e.value(read.usages)}`,
      `${e.name(A.aggregates)} = ${e.value(read.aggregates)}`,
      `${e.name(A.updatedAt)} = ${e.value(read.updatedAt)}`,
      inventoriesAsRead(e, read),
      children,
    ].join(' AND ');
  }
  return { item: { Put: { TableName: tableName(), Item: encodeProvider(provider), ConditionExpression: condition, ...e.attributes() } }, onConditionFailed };
}

/**
 * A check, written nowhere, that a provider is still as read in what its
 * entries follow from: generation (traits bump it), usages (an allocation
 * removed moves them without a new one) and inventories (a class renamed
 * changes them without a new one).
 */
export function providerStillAsRead(read: Provider): Write {
  const e = new Expression();
  const condition = [`${e.name(A.generation)} = ${e.value(read.generation)}`, `${e.name(A.usages)} = ${e.value(read.usages)}`, inventoriesAsRead(e, read)].join(
    ' AND ',
  );
  return { item: { ConditionCheck: { TableName: tableName(), Key: providerKey(read.uuid), ConditionExpression: condition, ...e.attributes() } } };
}

/**
 * A class renamed in one provider: its inventories, and its usage and free
 * capacity of that class, on condition that its inventories and its usage of
 * the class are still as read. Only those entries are written, so that claims
 * of other classes on the provider meanwhile do not cancel the rename; a
 * claim of this class changes the usage, and the rename starts over.
 * Generation and update time stay, as upstream's rename leaves them. Its
 * capacity entry moves to the new name's partitions (format 3).
 */
export function renameClassWrites(provider: Provider, from: string, to: string): Write[] {
  const e = new Expression();
  const renamed = { ...provider, inventories: renameEntry(provider.inventories, from, to), usages: renameEntry(provider.usages, from, to) };
  const sets = [`${e.name(A.inventories)} = ${e.value(packInventories(renamed.inventories))}`];
  const removes: string[] = [];
  const conditions = [inventoriesAsRead(e, provider)];
  const used = entryOf(provider.usages, from);
  if (used === undefined) conditions.push(`attribute_not_exists(${e.name(A.usages, from)})`);
  else {
    sets.push(`${e.name(A.usages, to)} = ${e.value(used)}`);
    removes.push(e.name(A.usages, from));
    conditions.push(`${e.name(A.usages, from)} = ${e.value(used)}`);
  }
  const free = entryOf(freeCapacities(renamed), to);
  if (free !== undefined) sets.push(`${e.name(A.free, to)} = ${e.value(free)}`);
  removes.push(e.name(A.free, from));
  const expression = `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`;
  const update: Write = {
    item: {
      Update: {
        TableName: tableName(),
        Key: providerKey(provider.uuid),
        UpdateExpression: expression,
        ConditionExpression: conditions.join(' AND '),
        ...e.attributes(),
      },
    },
  };
  return [update, ...(keepsEntries() ? capacityEntryChanges(provider, renamed).writes : [])];
}

function deleteProvider(provider: Provider, onConditionFailed?: () => Error): Write {
  const e = new Expression();
  return {
    item: {
      Delete: {
        TableName: tableName(),
        Key: providerKey(provider.uuid),
        // The use counts it drops are those of the classes read: a class renamed meanwhile cancels the delete.
        ConditionExpression: `${e.name(A.generation)} = ${e.value(provider.generation)} AND ${inventoriesAsRead(e, provider)} AND attribute_not_exists(${e.name(A.children)})`,
        ...e.attributes(),
      },
    },
    onConditionFailed,
  };
}

/** The condition that a provider exists and, when given as read, still has the parent and root it was read with. */
function placeUnchanged(e: Expression, asRead?: Provider): string {
  if (asRead === undefined) return 'attribute_exists(pk)';
  return `attribute_exists(pk) AND ${e.name(A.parentUuid)} = ${e.value(asRead.parentUuid)} AND ${e.name(A.rootUuid)} = ${e.value(asRead.rootUuid)}`;
}

/**
 * Links a child into its parent or out of it, without touching the parent's
 * generation (upstream does not). With the parent as it was read, the write
 * also requires that it still hangs where it did and has the same root: a
 * new child then cannot take a root that a concurrent move just changed.
 * A parent whose item could not hold one more child refuses it (ItemTooLarge).
 */
function linkChild(parentUuid: string, childUuid: string, link: 'ADD' | 'DELETE', asRead?: Provider): Write {
  if (link === 'ADD' && asRead !== undefined) encodeProvider({ ...asRead, children: [...asRead.children, childUuid] });
  const e = new Expression();
  const update = `${link} ${e.name(A.children)} ${e.value(new Set([childUuid]))}`;
  const condition = placeUnchanged(e, asRead);
  return {
    item: { Update: { TableName: tableName(), Key: providerKey(parentUuid), UpdateExpression: update, ConditionExpression: condition, ...e.attributes() } },
  };
}

/** A check, written nowhere, that a provider above a new parent still hangs where it was read. */
function stillInPlace(asRead: Provider): Write {
  const e = new Expression();
  const condition = placeUnchanged(e, asRead);
  return { item: { ConditionCheck: { TableName: tableName(), Key: providerKey(asRead.uuid), ConditionExpression: condition, ...e.attributes() } } };
}

function claimName(name: string, uuid: string, onConditionFailed: () => Error): Write {
  return {
    item: { Put: { TableName: tableName(), Item: encodeProviderName(name, uuid), ConditionExpression: 'attribute_not_exists(pk)' } },
    onConditionFailed,
  };
}

function releaseName(name: string): Write {
  return { item: { Delete: { TableName: tableName(), Key: providerNameKey(name) } } };
}

const customNames = (names: Iterable<string>) => new Set([...names].filter((name) => name.startsWith('CUSTOM_')));

function useChanges(before: Iterable<string>, after: Iterable<string>): Map<string, number> {
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
   * providers above it, as read. The change requires each of them to still
   * hang where it was read, so that two concurrent moves cannot close a loop
   * between them, nor a new child take a stale root.
   */
  lineage?: readonly Provider[];
}

/**
 * Every write one provider change needs: the provider item (conditioned on
 * the state it was read in), its unique name, its parent's children (and the
 * new parent's place), its search entries, and the use counts of the custom
 * resource classes and traits it starts or stops using (which must exist).
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
 * providerChangeWrites for several providers in one change. A change may
 * write each item only once, so the use counts are summed per use-count
 * shard over all changes (a class moving between two providers that count
 * in the same shard writes no count at all).
 */
export function providerChangesWrites(changes: readonly ProviderChange[], errors: ProviderChangeErrors = {}): Write[] {
  return [...changes.flatMap((change) => providerItemWrites(change, errors)), ...useCountWrites(changes, errors)];
}

/** The writes of one change that touch items of that provider alone, and its parents' children. */
function providerItemWrites({ before, after, lineage = [] }: ProviderChange, errors: ProviderChangeErrors, { withSearchEntries = true } = {}): Write[] {
  const writes: Write[] = [];
  if (after === undefined) writes.push(deleteProvider(before!, errors.onStale));
  else writes.push(putProvider(after, before, errors.onStale));

  if (before?.name !== after?.name) {
    if (before) writes.push(releaseName(before.name));
    if (after) writes.push(claimName(after.name, after.uuid, () => errors.onDuplicateName?.(after.name) ?? new Error(`duplicate name ${after.name}`)));
  }
  if (before?.parentUuid !== after?.parentUuid) {
    // A change writes an item once: the old and new parent's links carry their own place conditions.
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
  if (keepsEntries()) writes.push(...capacityEntryChanges(before, after).writes);
  return withSearchEntries ? [...writes, ...searchEntryWrites(before, after)] : writes;
}

/** The custom class and trait use counts the changes move, net per use-count shard. */
function useCountWrites(changes: readonly ProviderChange[], errors: ProviderChangeErrors): Write[] {
  type ShardDeltas = Map<string, { name: string; shard: number; delta: number }>;
  const classUses: ShardDeltas = new Map();
  const traitUses: ShardDeltas = new Map();
  const sum = (into: ShardDeltas, uuid: string, changed: Map<string, number>) => {
    const shard = shardForProvider(uuid);
    for (const [name, delta] of changed) {
      const key = `${shard} ${name}`;
      const entry = into.get(key) ?? { name, shard, delta: 0 };
      entry.delta += delta;
      into.set(key, entry);
    }
  };
  for (const { before, after } of changes) {
    const uuid = (after ?? before)!.uuid;
    sum(classUses, uuid, useChanges(Object.keys(before?.inventories ?? {}), Object.keys(after?.inventories ?? {})));
    sum(traitUses, uuid, useChanges(before?.traits ?? [], after?.traits ?? []));
  }
  const writes: Write[] = [];
  for (const { name, shard, delta } of classUses.values()) {
    if (delta === 0) continue;
    writes.push(resourceClasses.countUses(name, shard, delta, () => errors.onUnknownResourceClass?.(name) ?? new Error(`unknown resource class ${name}`)));
  }
  for (const { name, shard, delta } of traitUses.values()) {
    if (delta === 0) continue;
    writes.push(traits.countUses(name, shard, delta, () => errors.onUnknownTrait?.(name) ?? new Error(`unknown trait ${name}`)));
  }
  return writes;
}

/**
 * From this storage format on, every release that may run reads a search
 * entry only as far as the provider it names, read, agrees, and finishes
 * the count changes a request left (a format is finalized only once no
 * older release runs; release 1.0.0 took every entry at its word and knows
 * no count change): a change can then write entries and counts ahead of
 * its commit and remove or lower them after it (entries/outside-commit.ts).
 */
const OUTSIDE_COMMIT_SINCE_FORMAT = 2;

/**
 * A provider's deletion (`after` undefined) or change. Where its writes fit
 * one transaction, they are the usual ones. A provider in thousands of
 * aggregates has as many search entries, and writing them in the commit
 * made its deletion, or a change adding or taking away many aggregates, a
 * multi-step change of thousands of fenced writes (11 s for a deletion in
 * 2,000 aggregates on DynamoDB Local). Where the table's format allows
 * (above), the commit instead holds everything else, and the entries no
 * reader takes yet or any more are written before it or removed after it:
 *
 * - Entries it takes away are removed after the commit, then the entry
 *   cleanup item (items/entry-cleanup.ts) the commit wrote: by the request
 *   when they take one round of transactions, else by the sweeper (at most a
 *   minute later in AWS), so that the change answers in the time of its
 *   other writes. A request that dies after the commit leaves its cleanup to
 *   the sweeper too, once its lease has passed.
 * - Entries it adds are written ahead of the commit (addEntriesAhead), held
 *   against every cleanup until the commit, which a reader must find them
 *   by as soon as the provider says it is a member.
 * - Use counts that would not fit beside the rest (thousands of custom
 *   traits) are raised ahead of the commit; those it lowers are owed after
 *   it, to the sweeper or to the next deletion of such a name
 *   (count-changes.ts).
 *
 * A change of whether the provider shares through its aggregates, or one
 * whose other writes still pass one transaction, keeps the usual plan.
 */
export function providerChangePlan(before: Provider, after: Provider | undefined, errors: ProviderChangeErrors = {}): Plan<undefined> {
  const plan = planProviderChange(before, after, errors);
  const had = new Set(before.traits);
  const gained = (after?.traits ?? []).filter((trait) => !had.has(trait));
  if (gained.length === 0) return plan;
  // Before anything that gives the provider a trait is written (trait-holders.ts).
  return {
    ...plan,
    beforeCommit: async () => {
      await noteTraitHolders(new Map(gained.map((trait) => [trait, before.uuid])));
      await plan.beforeCommit?.();
    },
  };
}

function planProviderChange(before: Provider, after: Provider | undefined, errors: ProviderChangeErrors): Plan<undefined> {
  const writes = providerChangeWrites(before, after, errors);
  if (writes.length <= MAX_TRANSACTION_ITEMS || writesFormat() < OUTSIDE_COMMIT_SINCE_FORMAT) return { writes };
  const sharing = before.traits.includes(SHARING_TRAIT);
  if (after !== undefined && sharing !== after.traits.includes(SHARING_TRAIT)) return { writes };
  const change: ProviderChange = { before, after };
  const commitWrites = providerItemWrites(change, errors, { withSearchEntries: false });
  const counts = useCountWrites([change], errors);
  // Room for the change's cleanup items beside its counts; else the counts go outside the commit.
  const countsOutside = commitWrites.length + counts.length + 2 > MAX_TRANSACTION_ITEMS;
  const { raised, lowered } = countsOutside ? countChangesOf(before, after) : {};
  if (!countsOutside) commitWrites.push(...counts);
  if (raised) commitWrites.push(commitCountsAhead(raised, () => new ConcurrentUpdate()));
  if (lowered) commitWrites.push(commitCountsAfter(lowered));

  const gone = (kept: readonly string[] | undefined, had: readonly string[]) => {
    const stays = new Set(kept ?? []);
    return had.filter((name) => !stays.has(name));
  };
  const removal: Omit<EntryCleanup, 'due'> = {
    key: entryCleanupKey(before.uuid, randomUUID()),
    uuid: before.uuid,
    aggregates: gone(after?.aggregates, before.aggregates),
    traits: keepsEntries() ? gone(after?.traits, before.traits) : [],
    sharing,
    marker: sharing && after === undefined,
  };
  const removed = entriesOf(removal).length;
  const byRequest = removed <= ENTRIES_REMOVED_BY_THE_REQUEST;
  if (removed > 0) {
    commitWrites.push({
      item: { Put: { TableName: tableName(), Item: encodeEntryCleanup({ ...removal, due: Date.now() + (byRequest ? config.changeLeaseMs : 0) }) } },
    });
  }

  const added = searchEntryWrites(before, after).filter((write) => write.item.Put !== undefined);
  let addition: EntryCleanup | undefined;
  if (commitWrites.length + added.length <= MAX_TRANSACTION_ITEMS) commitWrites.push(...added);
  else {
    addition = {
      key: entryCleanupKey(before.uuid, randomUUID()),
      uuid: before.uuid,
      aggregates: gone(before.aggregates, after?.aggregates ?? []),
      traits: keepsEntries() ? gone(before.traits, after?.traits ?? []) : [],
      sharing,
      marker: false,
      due: holdUntil(),
    };
    commitWrites.push({ item: { Delete: { TableName: tableName(), Key: addition.key, ConditionExpression: 'attribute_exists(pk)' } } });
  }
  if (commitWrites.length > MAX_TRANSACTION_ITEMS) return { writes };
  const cleansUp = removed > 0 && byRequest;
  return {
    writes: commitWrites,
    ...((addition || raised) && {
      beforeCommit: async () => {
        if (addition) await addEntriesAhead(addition);
        if (raised) await raiseCountsAhead(raised, errors);
      },
    }),
    ...(raised && {
      ifNotCommitted: async () => {
        await undoCountsAhead(raised);
      },
    }),
    ...(cleansUp && {
      afterCommit: async () => {
        await cleanUpEntries(removal);
      },
    }),
  };
}

/**
 * The use counts a provider change moves, as count changes of its shard
 * (count-changes.ts): those it raises, to go ahead of its commit, and those
 * it lowers, owed after it (due at once: the request leaves them to the
 * sweeper).
 */
function countChangesOf(before: Provider, after: Provider | undefined): { raised?: CountChange; lowered?: CountChange } {
  const classes = useChanges(Object.keys(before.inventories), Object.keys(after?.inventories ?? {}));
  const names = useChanges(before.traits, after?.traits ?? []);
  const moving = (delta: 1 | -1) => ({
    classes: [...classes].filter(([, d]) => d === delta).map(([name]) => name),
    traits: [...names].filter(([, d]) => d === delta).map(([name]) => name),
  });
  const shard = shardForProvider(before.uuid);
  const up = moving(1);
  const down = moving(-1);
  return {
    ...(up.classes.length + up.traits.length > 0 && { raised: newCountChange(shard, up.classes, up.traits, 1, holdUntil()) }),
    ...(down.classes.length + down.traits.length > 0 && {
      lowered: newCountChange(shard, down.classes, down.traits, -1, Date.now()),
    }),
  };
}
