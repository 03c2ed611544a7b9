/**
 * Where the allocation candidate search finds provider trees, without
 * scanning the table or loading every provider:
 *
 * - on a table whose format 3 entries are built, the providers with room
 *   for an amount of a class and the holders of a trait, from their
 *   entries (entries/), read strongly: what no provider's entry offers,
 *   no provider has;
 * - the sharing providers, from their marker items: all of them for the
 *   walk, or only those of the aggregates of the trees found otherwise;
 * - named trees (in_tree) and the trees of an aggregate's members, level by
 *   level through each provider's children;
 * - the members of an aggregate (member_of), from the aggregate's items;
 * - otherwise a walk of the byShard index, whose sort key keeps each tree's
 *   providers together. The walk reads the shards in rounds, asking each for
 *   only as many items as the caller still wants, so its cost follows the
 *   requested limit rather than the size of the cloud. A filter expression
 *   drops flat providers that cannot hold the request before they leave
 *   DynamoDB; providers of nested trees always come back whole, because the
 *   exact check needs the whole tree.
 *
 * Every source counts the items DynamoDB read, so benchmarks can show what a
 * search cost. All its reads are eventually consistent, which is fine: the
 * claim transaction re-checks everything.
 */
import type { SearchProvider } from '../domain/model.js';
import { SHARING_TRAIT } from '../domain/standard-catalog.js';
import { listAggregateMembers as listProviderAggregateMembers } from './providers.js';
import { agreesWithEntries, listSearchEntries } from './entries/search-entries.js';
import { batchGet, projectionOf, queryPage, withProjection, type Item, type Projection } from './reads.js';
import { BY_SHARD_INDEX } from './table-definition.js';
import { allShards, decodeSearchProvider, providerKey, ProviderAttribute, SEARCH_ATTRIBUTES } from './items/provider.js';
import { decodeSearchEntry, SHARING_PK, sharingPartition, traitPartition } from './items/search-entry.js';
import { capacityPartitions, capacitySortFrom, decodeCapacityEntry } from './items/capacity-entry.js';

/** Reads only what the search uses: it reads thousands of providers, and parsing what it ignores is most of its CPU. */
const SEARCH_PROJECTION: Projection = projectionOf(SEARCH_ATTRIBUTES);

/** Counts the items read by one search. */
export class ReadCounter {
  items = 0;
}

/** Eventually consistent, like the index reads: the claim re-checks what it takes. */
export async function getProvidersForSearch(uuids: string[], counter: ReadCounter): Promise<SearchProvider[]> {
  const items = await batchGet(uuids.map(providerKey), { projection: SEARCH_PROJECTION, consistent: false });
  counter.items += items.length;
  return items.map(decodeSearchProvider);
}

/** The sharing providers: all of them, or those in any of the given aggregates. */
export async function listSharingProviders(counter: ReadCounter, aggregates?: string[]): Promise<SearchProvider[]> {
  const partitions = aggregates === undefined ? [SHARING_PK] : aggregates.map(sharingPartition);
  const providers = await getProvidersForSearch(await listSearchEntries(partitions, (scanned) => (counter.items += scanned)), counter);
  return providers.filter((provider) => agreesWithEntries(provider, aggregates, true));
}

/** The uuids of the providers in any of the aggregates. */
export const listAggregateMembers = (aggregates: string[], counter: ReadCounter): Promise<string[]> =>
  listProviderAggregateMembers(aggregates, (scanned) => (counter.items += scanned));

/** The providers some entries name, as far as they were read: all of them when `complete`. */
export interface EntrySet {
  uuids: string[];
  complete: boolean;
}

/**
 * At most `limit` items of each partition, strongly consistent (entries are
 * kept in their providers' commits), and whether that was all of them: one
 * item more is asked for, since DynamoDB says there may be more whenever a
 * page reaches its limit.
 */
async function firstItems(partitions: string[], from: string | undefined, limit: number, counter: ReadCounter) {
  return Promise.all(
    partitions.map(async (pk) => {
      const page = await queryPage({
        KeyConditionExpression: from === undefined ? 'pk = :pk' : 'pk = :pk AND sk >= :from',
        ExpressionAttributeValues: { ':pk': pk, ...(from !== undefined && { ':from': from }) },
        ConsistentRead: true,
        Limit: limit + 1,
      });
      counter.items += page.scanned;
      return { items: page.items.slice(0, limit), complete: page.items.length <= limit };
    }),
  );
}

/**
 * The providers whose capacity entries say they may have room for one
 * allocation of `amount` of the class (within its min_unit and step_size):
 * every provider with room, and some within 1/16 below it
 * (items/capacity-entry.ts), at most `perPartition` read from each of the
 * class's partitions.
 */
export async function listProvidersWithRoom(resourceClass: string, amount: number, perPartition: number, counter: ReadCounter): Promise<EntrySet> {
  const parts = await firstItems(capacityPartitions(resourceClass), capacitySortFrom(amount), perPartition, counter);
  const entries = parts.flatMap((part) => part.items.map((item) => decodeCapacityEntry(item, resourceClass)));
  return {
    uuids: entries.filter((entry) => amount >= entry.minUnit && amount % entry.stepSize === 0).map((entry) => entry.uuid),
    complete: parts.every((part) => part.complete),
  };
}

/** The providers whose holder entries say they hold the trait (a provider changed a moment ago may not any more), at most `limit`. */
export async function listTraitHolders(trait: string, limit: number, counter: ReadCounter): Promise<EntrySet> {
  const [part] = await firstItems([traitPartition(trait)], undefined, limit, counter);
  return { uuids: part!.items.map(decodeSearchEntry), complete: part!.complete };
}

/**
 * Whole trees, by root, read level by level through each provider's
 * children: one batch read per level for all the trees together, rather than
 * a query per tree. Providers already in `known` are not read again, nor are
 * trees already in `loaded`; what is read is added to both.
 */
export async function loadTrees(
  roots: Iterable<string>,
  known: Map<string, SearchProvider>,
  counter: ReadCounter,
  loaded = new Map<string, SearchProvider[]>(),
): Promise<SearchProvider[][]> {
  const wanted = [...new Set(roots)];
  const trees = new Map(wanted.filter((root) => !loaded.has(root)).map((root) => [root, [] as SearchProvider[]]));
  const visited = new Set<string>();
  let level = [...trees.keys()].map((root) => ({ root, uuid: root }));
  while (level.length > 0) {
    const unread = new Set(level.map(({ uuid }) => uuid).filter((uuid) => !known.has(uuid)));
    for (const provider of await getProvidersForSearch([...unread], counter)) known.set(provider.uuid, provider);
    const next: typeof level = [];
    for (const { root, uuid } of level) {
      const provider = known.get(uuid);
      // A provider deleted since its parent was read is simply absent; `visited` guards against a cycle.
      if (provider === undefined || visited.has(uuid)) continue;
      visited.add(uuid);
      trees.get(root)!.push(provider);
      next.push(...provider.children.map((child) => ({ root, uuid: child })));
    }
    level = next;
  }
  for (const [root, tree] of trees) loaded.set(root, tree);
  return wanted.map((root) => loaded.get(root)!);
}

/** What a flat provider must have to be worth returning from the walk. */
export interface WalkFilter {
  /** Resource class to the free capacity a flat provider needs. */
  minimumFree: Record<string, number>;
  rootRequired: string[];
  rootForbidden: string[];
}

/**
 * Most conditions one filter holds. DynamoDB refuses an expression over
 * 4 KB or with more than 300 operators; 40 conditions (each under 40
 * characters and 3 operators) stay well below. Past them (root_required
 * with hundreds of traits) the walk filters less and the function, which
 * checks every tree exactly anyway, drops the rest.
 */
const MAX_FILTER_CONDITIONS = 40;

function filterExpression(filter: WalkFilter) {
  const names: Record<string, string> = {
    '#traits': ProviderAttribute.traits,
    '#parent': ProviderAttribute.parentUuid,
    '#children': ProviderAttribute.children,
  };
  const values: Record<string, unknown> = { ':string': 'S', ':sharing': SHARING_TRAIT };
  // DynamoDB refuses names no expression uses: `#free` only when some class must be free
  // (not when sharing providers could supply every class, root_required alone filtering).
  const conditions: (() => string)[] = [
    ...Object.entries(filter.minimumFree).map(([resourceClass, amount], n) => () => {
      names['#free'] = ProviderAttribute.free;
      names[`#c${n}`] = resourceClass;
      // No capacity reaches past 2^53 (DynamoDB's SDK refuses larger numbers): such an amount fits nowhere either way.
      values[`:a${n}`] = Math.min(amount, Number.MAX_SAFE_INTEGER);
      return `#free.#c${n} >= :a${n}`;
    }),
    ...filter.rootRequired.map((trait, n) => () => {
      values[`:r${n}`] = trait;
      return `contains(#traits, :r${n})`;
    }),
    ...filter.rootForbidden.map((trait, n) => () => {
      values[`:f${n}`] = trait;
      return `NOT contains(#traits, :f${n})`;
    }),
  ];
  const flat = conditions.slice(0, MAX_FILTER_CONDITIONS).map((condition) => condition());
  const nested = 'attribute_type(#parent, :string) OR attribute_exists(#children)';
  const sharing = 'contains(#traits, :sharing)';
  return {
    FilterExpression: flat.length === 0 ? undefined : `${nested} OR ${sharing} OR (${flat.join(' AND ')})`,
    ExpressionAttributeNames: flat.length === 0 ? undefined : names,
    ExpressionAttributeValues: flat.length === 0 ? undefined : values,
  };
}

interface ShardCursor {
  shard: string;
  start: Item | undefined;
  done: boolean;
  /** Providers of a tree whose end has not been read yet. */
  pending: SearchProvider[];
}

/** Walks every tree on the byShard index, in rounds the caller sizes. */
export class ShardWalk {
  private readonly cursors: ShardCursor[] = allShards().map((shard) => ({ shard, start: undefined, done: false, pending: [] }));
  private readonly expression;

  constructor(
    filter: WalkFilter,
    private readonly counter: ReadCounter,
  ) {
    this.expression = filterExpression(filter);
  }

  get done(): boolean {
    return this.cursors.every((cursor) => cursor.done);
  }

  /** Reads up to `items` more items spread over the shards; returns the trees completed. */
  async next(items: number): Promise<SearchProvider[][]> {
    const open = this.cursors.filter((cursor) => !cursor.done);
    const perShard = Math.max(1, Math.ceil(items / Math.max(1, open.length)));
    const trees = await Promise.all(open.map((cursor) => this.advance(cursor, perShard)));
    return trees.flat();
  }

  private async advance(cursor: ShardCursor, limit: number): Promise<SearchProvider[][]> {
    const page = await queryPage(
      withProjection(
        {
          IndexName: BY_SHARD_INDEX.name,
          KeyConditionExpression: '#spk = :shard',
          ...this.expression,
          ExpressionAttributeNames: { ...this.expression.ExpressionAttributeNames, '#spk': BY_SHARD_INDEX.partitionKey },
          ExpressionAttributeValues: { ...this.expression.ExpressionAttributeValues, ':shard': cursor.shard },
          Limit: limit,
        },
        SEARCH_PROJECTION,
      ),
      cursor.start,
    );
    this.counter.items += page.scanned;
    cursor.start = page.next;
    cursor.done = page.next === undefined;
    const trees: SearchProvider[][] = [];
    let current = cursor.pending;
    for (const item of page.items) {
      const provider = decodeSearchProvider(item);
      if (current.length > 0 && current[0]!.rootUuid !== provider.rootUuid) {
        trees.push(current);
        current = [];
      }
      current.push(provider);
    }
    // The last tree of a page may continue on the next one, unless it is a single provider without children.
    const flat = current.length === 1 && current[0]!.parentUuid === null && current[0]!.children.length === 0;
    if (cursor.done || flat) {
      if (current.length > 0) trees.push(current);
      cursor.pending = [];
    } else {
      cursor.pending = current;
    }
    return trees;
  }
}
