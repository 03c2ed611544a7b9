/**
 * Resource classes and traits: two catalogs of names with the same storage
 * shape, one partition each. Custom entries count the providers (traits) or
 * inventories (resource classes) that use them, so a delete can be refused
 * atomically while the name is in use.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from './client.js';
import { batchGet, getItem, queryAll, type Item } from './reads.js';
import { booleanField, numberField, stringField } from './item-fields.js';
import { RESOURCE_CLASSES_PK, TRAITS_PK, type Key } from './keys.js';
import { readPlanCommit, type Write } from './transaction.js';
import { untilAllProcessed } from './retry.js';
import { STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS } from '../domain/standard-catalog.js';
import { isValidCustomName } from '../domain/catalog-names.js';

export interface CatalogEntry {
  name: string;
  /** Shipped with the service (os-traits, os-resource-classes); never changed or deleted. */
  standard: boolean;
  /** How many providers or inventories use the entry (maintained for custom entries). */
  refs: number;
  createdAt: string;
  updatedAt: string;
}

/** The one decoder of catalog entries (the writes below put them). */
function entryFromItem(item: Item): CatalogEntry {
  return {
    name: stringField(item, 'name'),
    standard: booleanField(item, 'standard'),
    refs: numberField(item, 'refs'),
    createdAt: stringField(item, 'createdAt'),
    updatedAt: stringField(item, 'updatedAt'),
  };
}

export class Catalog {
  private readonly standardNames: ReadonlySet<string>;

  constructor(
    private readonly partition: string,
    /** Names shipped with the service; seeded into the table and never deleted. */
    private readonly standard: readonly string[],
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

  private key(name: string): Key {
    return { pk: this.partition, sk: name };
  }

  async list(): Promise<CatalogEntry[]> {
    const items = await queryAll({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': this.partition },
      ConsistentRead: true,
    });
    return items.map(entryFromItem);
  }

  /** Strongly consistent reads of the named entries; missing names are absent from the map. */
  async getMany(names: Iterable<string>): Promise<Map<string, CatalogEntry>> {
    const possible = [...new Set(names)].filter((name) => this.couldHold(name));
    const entries = (await batchGet(possible.map((name) => this.key(name)))).map(entryFromItem);
    return new Map(entries.map((entry) => [entry.name, entry]));
  }

  async get(name: string): Promise<CatalogEntry | undefined> {
    if (!this.couldHold(name)) return undefined;
    const item = await getItem(this.key(name));
    return item && entryFromItem(item);
  }

  /** Adds a custom entry; `onExists` is the error when the name is taken. */
  async create(name: string, now: string, onExists: () => Error): Promise<void> {
    await readPlanCommit(async () => ({
      writes: [
        {
          item: {
            Put: {
              TableName: tableName(),
              Item: { ...this.key(name), name, standard: false, refs: 0, createdAt: now, updatedAt: now },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: onExists,
        },
      ],
    }));
  }

  /** Removes an unused custom entry; `onInUse` is the error when something still uses it. */
  async delete(name: string, onInUse: () => Error): Promise<void> {
    await readPlanCommit(async () => ({
      writes: [
        {
          item: {
            Delete: {
              TableName: tableName(),
              Key: this.key(name),
              ConditionExpression: 'attribute_not_exists(pk) OR refs = :none',
              ExpressionAttributeValues: { ':none': 0 },
            },
          },
          onConditionFailed: onInUse,
        },
      ],
    }));
  }

  /**
   * Gives an unused custom entry a new name (keeping its creation time), in
   * one transaction: `onExists` when the new name is taken, else `onInUse`
   * when the entry is gone or still in use (renaming a used name would need
   * every inventory and allocation that names it rewritten).
   */
  async rename(entry: CatalogEntry, newName: string, now: string, errors: { onInUse: () => Error; onExists: () => Error }): Promise<void> {
    await readPlanCommit(async () => ({
      writes: [
        {
          item: {
            Put: {
              TableName: tableName(),
              Item: { ...this.key(newName), name: newName, standard: false, refs: 0, createdAt: entry.createdAt, updatedAt: now },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: errors.onExists,
        },
        {
          item: {
            Delete: {
              TableName: tableName(),
              Key: this.key(entry.name),
              ConditionExpression: 'attribute_exists(pk) AND refs = :none',
              ExpressionAttributeValues: { ':none': 0 },
            },
          },
          onConditionFailed: errors.onInUse,
        },
      ],
    }));
  }

  /** A transaction write that moves the use count of a custom entry, which must exist. */
  adjustRefs(name: string, delta: number, onMissing: () => Error): Write {
    return {
      item: {
        Update: {
          TableName: tableName(),
          Key: this.key(name),
          UpdateExpression: 'ADD refs :delta',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':delta': delta },
        },
      },
      onConditionFailed: onMissing,
    };
  }

  /** Writes the standard entries that are missing (at start-up or deploy). */
  async seed(now: string): Promise<number> {
    const existing = new Set((await this.list()).map((entry) => entry.name));
    const missing = this.standard.filter((name) => !existing.has(name));
    for (let start = 0; start < missing.length; start += 25) {
      const batch = missing.slice(start, start + 25).map((name) => ({
        PutRequest: { Item: { ...this.key(name), name, standard: true, refs: 0, createdAt: now, updatedAt: now } },
      }));
      await untilAllProcessed({ [tableName()]: batch }, async (pending) => {
        const output = await dynamo().send(new BatchWriteCommand({ RequestItems: pending }));
        return output.UnprocessedItems as typeof pending | undefined;
      });
    }
    return missing.length;
  }
}

export const resourceClasses = new Catalog(RESOURCE_CLASSES_PK, STANDARD_RESOURCE_CLASSES);
export const traits = new Catalog(TRAITS_PK, STANDARD_TRAITS);

/** Idempotent: writes only the standard entries that are missing. */
export async function seedStandardCatalogs(now = new Date().toISOString()): Promise<void> {
  await Promise.all([resourceClasses.seed(now), traits.seed(now)]);
}
