/**
 * Resource classes and traits: two catalogs of names with the same storage
 * shape, one partition each (items/catalog-entry.ts). A custom entry counts
 * the inventories (classes) or providers (traits) that use it in use-count
 * shards (items/catalog-use-count.ts), so that a delete can be refused
 * atomically while the name is in use, and so that many providers starting
 * to use one name do not all write one item.
 */
import { batchWriteItem, tableName } from './dynamodb.js';
import { Expression } from './expression.js';
import { batchGet, getItem, queryAll } from './reads.js';
import { readPlanCommit } from './commit/transaction.js';
import { untilAllProcessed } from './retry.js';
import type { Write } from './commit/write.js';
import type { Key } from './items/fields.js';
import {
  catalogEntryKey,
  CatalogEntryAttribute,
  decodeCatalogEntry,
  encodeCatalogEntry,
  RESOURCE_CLASSES_PK,
  TRAITS_PK,
  type CatalogEntry,
} from './items/catalog-entry.js';
import { CatalogUseCountAttribute, decodeUseCount, encodeUseCount, USE_COUNT_SHARDS, useCountKey, useCountKeys } from './items/catalog-use-count.js';
import { STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS } from '../domain/standard-catalog.js';
import { isValidCustomName } from '../domain/catalog-names.js';

export type { CatalogEntry } from './items/catalog-entry.js';

/** A custom entry's use count as read: its legacy count and each shard's (undefined: the shard does not exist). */
export interface UseCount {
  entry: CatalogEntry;
  shards: (number | undefined)[];
}

/** How many uses a custom entry counts in all. */
export const totalUses = ({ entry, shards }: UseCount) => shards.reduce<number>((sum, refs) => sum + (refs ?? 0), entry.legacyRefs);

export class Catalog {
  private readonly standardNames: ReadonlySet<string>;

  constructor(
    readonly partition: string,
    /** Names shipped with the service; seeded into the table and never deleted. */
    readonly standard: readonly string[],
  ) {
    this.standardNames = new Set(standard);
  }

  /**
   * Whether the catalog could hold the name at all: a standard name or a
   * well-formed custom one. Other names (prototype names, 3000 characters)
   * are simply absent, without a read.
   */
  private couldHold(name: string): boolean {
    return this.standardNames.has(name) || isValidCustomName(name);
  }

  private key(name: string): Key {
    return catalogEntryKey(this.partition, name);
  }

  /**
   * The names, in request order, that are not in the catalog: standard names
   * are known without a read, the others are looked up in one batch.
   */
  async missing(names: Iterable<string>): Promise<string[]> {
    const requested = [...new Set(names)];
    const toRead = requested.filter((name) => !this.standardNames.has(name));
    const found = toRead.length === 0 ? new Map<string, CatalogEntry>() : await this.getMany(toRead);
    return requested.filter((name) => !this.standardNames.has(name) && !found.has(name));
  }

  /**
   * The named entries there are, strongly consistent, in the order of list()
   * (the sort key, the name: an ASCII name's code units sort as its bytes).
   * Reads only those, however big the catalog.
   */
  async listNamed(names: Iterable<string>): Promise<CatalogEntry[]> {
    const possible = [...new Set(names)].filter((name) => this.couldHold(name));
    const entries = (await batchGet(possible.map((name) => this.key(name)))).map(decodeCatalogEntry);
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async list(): Promise<CatalogEntry[]> {
    const items = await queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': this.partition },
      ConsistentRead: true,
    });
    return items.map(decodeCatalogEntry);
  }

  /**
   * Strongly consistent reads of the named entries; missing names are absent
   * from the map. Custom entries written before use-count shards existed get
   * their shards here, before any writer that looked them up counts a use.
   */
  async getMany(names: Iterable<string>): Promise<Map<string, CatalogEntry>> {
    const entries = await this.listNamed(names);
    await Promise.all(entries.filter((entry) => !entry.standard && entry.useCountShards === 0).map((entry) => this.addUseCountShards(entry)));
    return new Map(entries.map((entry) => [entry.name, entry]));
  }

  async get(name: string): Promise<CatalogEntry | undefined> {
    if (!this.couldHold(name)) return undefined;
    const item = await getItem(this.key(name));
    return item && decodeCatalogEntry(item);
  }

  /** The writes that create a custom entry, its use-count shards counting `uses` (default none); `onExists` when the name is taken. */
  private createWrites(entry: CatalogEntry, onExists: () => Error, uses: readonly number[] = []): Write[] {
    return [
      {
        item: { Put: { TableName: tableName(), Item: encodeCatalogEntry(this.partition, entry), ConditionExpression: 'attribute_not_exists(pk)' } },
        onConditionFailed: onExists,
      },
      ...useCountKeys(this.partition, entry.name).map((key, shard) => ({
        item: { Put: { TableName: tableName(), Item: encodeUseCount(key, uses[shard] ?? 0) } },
      })),
    ];
  }

  /** Adds a custom entry; `onExists` is the error when the name is taken. */
  async create(name: string, now: string, onExists: () => Error): Promise<void> {
    const entry: CatalogEntry = { name, standard: false, useCountShards: USE_COUNT_SHARDS, legacyRefs: 0, createdAt: now, updatedAt: now };
    await readPlanCommit(async () => ({ writes: this.createWrites(entry, onExists) }));
  }

  /** The entry and its use-count shards, strongly consistent; undefined when the entry does not exist. */
  async useCount(name: string): Promise<UseCount | undefined> {
    const keys = useCountKeys(this.partition, name);
    const [entry, shardItems] = await Promise.all([this.get(name), batchGet(keys)]);
    if (entry === undefined) return undefined;
    const refs = new Map(shardItems.map((item) => [item.sk, decodeUseCount(item)]));
    return { entry, shards: keys.map((key) => refs.get(key.sk)) };
  }

  /**
   * The writes that delete an unused entry and its shards, each conditioned
   * on the count read: a use counted meanwhile cancels them, and the delete
   * is read and decided again.
   */
  private deleteWrites(count: UseCount): Write[] {
    const head = new Expression();
    const legacy = head.name(CatalogEntryAttribute.legacyRefs);
    const headCondition =
      count.entry.legacyRefs === 0 ? `attribute_not_exists(${legacy}) OR ${legacy} = ${head.value(0)}` : `${legacy} = ${head.value(count.entry.legacyRefs)}`;
    const writes: Write[] = [
      {
        item: {
          Delete: {
            TableName: tableName(),
            Key: this.key(count.entry.name),
            ConditionExpression: `attribute_exists(pk) AND (${headCondition})`,
            ...head.attributes(),
          },
        },
      },
    ];
    count.shards.forEach((refs, shard) => {
      const key = useCountKey(this.partition, count.entry.name, shard);
      if (refs === undefined) {
        writes.push({ item: { ConditionCheck: { TableName: tableName(), Key: key, ConditionExpression: 'attribute_not_exists(pk)' } } });
        return;
      }
      const e = new Expression();
      writes.push({
        item: {
          Delete: { TableName: tableName(), Key: key, ConditionExpression: `${e.name(CatalogUseCountAttribute.refs)} = ${e.value(refs)}`, ...e.attributes() },
        },
      });
    });
    return writes;
  }

  /** Removes an unused custom entry (nothing when there is none); `onInUse` is the error when something still uses it. */
  async delete(name: string, onInUse: () => Error): Promise<void> {
    await readPlanCommit(async () => {
      const count = await this.useCount(name);
      if (count === undefined) return { writes: [] };
      if (totalUses(count) !== 0) throw onInUse();
      return { writes: this.deleteWrites(count) };
    });
  }

  /**
   * The catalog's writes of a rename: the entry under its new name (keeping
   * its creation time), its use-count shards counting `uses` (the uses of
   * the old name, per shard, as the caller found them), and the old entry and
   * shards deleted on condition that they still count what was read, so that
   * a use counted meanwhile cancels the rename. `onExists` when the new name
   * is taken.
   */
  renameWrites(count: UseCount, newName: string, uses: readonly number[], now: string, onExists: () => Error): Write[] {
    const renamed: CatalogEntry = { ...count.entry, name: newName, useCountShards: USE_COUNT_SHARDS, legacyRefs: 0, updatedAt: now };
    return [...this.createWrites(renamed, onExists, uses), ...this.deleteWrites(count)];
  }

  /**
   * A write that moves a custom entry's use count in one shard. A use
   * counted requires the shard, which exists exactly as long as the entry
   * (`onMissing` otherwise); a use dropped needs no condition, since a name in
   * use cannot be deleted.
   */
  countUses(name: string, shard: number, delta: number, onMissing: () => Error): Write {
    const e = new Expression();
    const update = `ADD ${e.name(CatalogUseCountAttribute.refs)} ${e.value(delta)}`;
    const condition = delta > 0 ? { ConditionExpression: 'attribute_exists(pk)' } : {};
    return {
      item: { Update: { TableName: tableName(), Key: useCountKey(this.partition, name, shard), UpdateExpression: update, ...condition, ...e.attributes() } },
      onConditionFailed: onMissing,
    };
  }

  /**
   * The use-count shards of an entry written before they existed, at 0 (its
   * earlier uses stay counted on the entry). Idempotent: a shard a decrement
   * already created keeps its count, and an entry another request upgraded
   * is left as it is.
   */
  private async addUseCountShards(entry: CatalogEntry): Promise<void> {
    const head = new Expression();
    const shards = head.name(CatalogEntryAttribute.useCountShards);
    const writes: Write[] = [
      {
        item: {
          Update: {
            TableName: tableName(),
            Key: this.key(entry.name),
            UpdateExpression: `SET ${shards} = ${head.value(USE_COUNT_SHARDS)}`,
            ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(${shards})`,
            ...head.attributes(),
          },
        },
        onConditionFailed: () => new UpgradedMeanwhile(),
      },
      ...useCountKeys(this.partition, entry.name).map((key): Write => {
        const e = new Expression();
        const refs = e.name(CatalogUseCountAttribute.refs);
        return {
          item: { Update: { TableName: tableName(), Key: key, UpdateExpression: `SET ${refs} = if_not_exists(${refs}, ${e.value(0)})`, ...e.attributes() } },
        };
      }),
    ];
    // Another request that upgraded the entry first leaves it upgraded either way.
    await readPlanCommit(async () => ({ writes })).catch((error: unknown) => {
      if (!(error instanceof UpgradedMeanwhile)) throw error;
    });
  }
}

/** Another request gave the entry its use-count shards first. */
class UpgradedMeanwhile extends Error {}

export const resourceClasses = new Catalog(RESOURCE_CLASSES_PK, STANDARD_RESOURCE_CLASSES);
export const traits = new Catalog(TRAITS_PK, STANDARD_TRAITS);

/** Writes the catalog's standard entries that are missing. */
async function seed(catalog: Catalog, now: string): Promise<void> {
  const existing = new Set((await catalog.list()).map((entry) => entry.name));
  const missing = catalog.standard.filter((name) => !existing.has(name));
  for (let start = 0; start < missing.length; start += 25) {
    const batch = missing.slice(start, start + 25).map((name) => ({
      PutRequest: { Item: encodeCatalogEntry(catalog.partition, { name, standard: true, useCountShards: 0, legacyRefs: 0, createdAt: now, updatedAt: now }) },
    }));
    await untilAllProcessed({ [tableName()]: batch }, async (pending) => {
      const output = await batchWriteItem({ RequestItems: pending });
      return output.UnprocessedItems as typeof pending | undefined;
    });
  }
}

/**
 * Idempotent: writes only the standard entries that are missing (at start-up
 * or deploy). A function, not a Catalog method, so that the handlers'
 * bundles, which never seed, leave it out.
 */
export async function seedStandardCatalogs(now = new Date().toISOString()): Promise<void> {
  await Promise.all([seed(resourceClasses, now), seed(traits, now)]);
}
