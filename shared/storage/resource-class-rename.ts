/**
 * Renaming a custom resource class (PUT /resource_classes/{name}, 1.2–1.6)
 * that inventories and allocations may use. Upstream renames one row and its
 * inventories and allocations follow by id; here every provider, allocation
 * item and consumer that names the class is rewritten, with the catalog entry
 * and its use counts, in one change (readPlanCommit: one transaction, or the
 * journal's steps when it is bigger), so that the rename is wholly there or
 * wholly absent. docs/design/multi-step-changes.md#renaming-a-resource-class
 * says how the holders are found without an index, and why a concurrent
 * writer cannot leave the old name behind.
 */
import { providerNames } from '../domain/class-rename.js';
import { entryOf } from '../domain/model.js';
import { resourceClasses, totalUses, type CatalogEntry } from './catalog.js';
import { lowerCountsOwed } from './commit/count-changes.js';
import { getConsumers, getProviderAllocations, renameInAllocationWrite, renameInConsumerWrite, type ProviderAllocations } from './consumers.js';
import { renameClassWrites } from './providers.js';
import { projectionOf, queryAll } from './reads.js';
import { BY_SHARD_INDEX } from './table-definition.js';
import { readPlanCommit } from './commit/transaction.js';
import { entriesBuilt, writesFormat } from './storage-format.js';
import { ConcurrentUpdate } from './errors.js';
import type { Write } from './commit/write.js';
import { shardForProvider, USE_COUNT_SHARDS } from './items/catalog-use-count.js';
import { allShards, ProviderAttribute } from './items/provider.js';
import { capacityPartitions, decodeCapacityEntry } from './items/capacity-entry.js';

/** Provider partitions read at once while looking for the class's holders. */
const READS_AT_ONCE = 16;

export interface RenameErrors {
  /** The new name is taken. */
  onExists: () => Error;
  /** The class is gone (deleted or renamed meanwhile). */
  onMissing: () => Error;
  /** The class is in use and release 1.0.0 may still serve (the table is not finalized past format 1). */
  onInUse: () => Error;
}

/**
 * A class in use is renamed only once no function of release 1.0.0 serves:
 * 1.0.0's writers do not condition their writes on the classes they name, so
 * one racing the rename could bring the old name back. The operator's
 * finalize to format 2 says every function runs a later release (a stale
 * reading of the format is the older one, so this errs towards refusing).
 */
const RENAMES_IN_USE_SINCE_FORMAT = 2;

/**
 * The uuids of the providers whose inventories may name the class. Once
 * format 3's entries are built, from the class's capacity entries (one per
 * provider with an inventory of it): reads in proportion to its holders.
 * Before, from the byShard index (eventually consistent): its 8 shards, a
 * page at a time, each provider's packed inventories filtered by the quoted
 * name, so that only candidates come back (the read units are those of every
 * provider item). Either may miss a holder written a moment ago, which the
 * use counts then tell (renameResourceClass).
 */
async function providersMaybeNaming(resourceClass: string): Promise<string[]> {
  if (entriesBuilt()) {
    const parts = await Promise.all(
      capacityPartitions(resourceClass).map((pk) => queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } })),
    );
    return parts.flat().map((item) => decodeCapacityEntry(item, resourceClass).uuid);
  }
  const { ProjectionExpression, ExpressionAttributeNames } = projectionOf([ProviderAttribute.uuid]);
  const pages = await Promise.all(
    allShards().map((shard) =>
      queryAll({
        IndexName: BY_SHARD_INDEX.name,
        KeyConditionExpression: '#shard = :shard',
        FilterExpression: 'contains(#inventories, :quoted)',
        ProjectionExpression,
        ExpressionAttributeNames: { ...ExpressionAttributeNames, '#shard': BY_SHARD_INDEX.partitionKey, '#inventories': ProviderAttribute.inventories },
        ExpressionAttributeValues: { ':shard': shard, ':quoted': JSON.stringify(resourceClass) },
      }),
    ),
  );
  return pages.flat().map((item) => item[ProviderAttribute.uuid] as string);
}

/** The providers (with their allocations, strongly consistent) whose inventories or usages name the class. */
async function holdersOf(resourceClass: string): Promise<ProviderAllocations[]> {
  const candidates = await providersMaybeNaming(resourceClass);
  const holders: ProviderAllocations[] = [];
  for (let start = 0; start < candidates.length; start += READS_AT_ONCE) {
    const read = await Promise.all(candidates.slice(start, start + READS_AT_ONCE).map(getProviderAllocations));
    for (const holder of read) if (holder && providerNames(holder.provider, resourceClass)) holders.push(holder);
  }
  return holders;
}

/**
 * Renames the custom class `entry` to `newName`, which the caller checked is
 * a custom name other than the entry's. A use counted or a holder changed
 * between the reads and the commit (or a holder the index did not show yet)
 * runs the whole change again on fresh reads.
 */
export async function renameResourceClass(entry: CatalogEntry, newName: string, now: string, errors: RenameErrors): Promise<void> {
  const from = entry.name;
  // What provider changes that stopped using the class still owe its counts, lowered first: the holders are counted against them.
  await lowerCountsOwed('classes', from);
  await readPlanCommit(async () => {
    const [count, taken] = await Promise.all([resourceClasses.useCount(from), resourceClasses.get(newName)]);
    if (count === undefined) throw errors.onMissing();
    if (taken !== undefined) throw errors.onExists();
    if (totalUses(count) > 0 && writesFormat() < RENAMES_IN_USE_SINCE_FORMAT) throw errors.onInUse();
    const holders = await holdersOf(from);

    // The use counts say how many inventories name the class: fewer holders found means the index has not shown them all yet.
    const uses = Array.from({ length: USE_COUNT_SHARDS }, () => 0);
    for (const { provider } of holders) if (entryOf(provider.inventories, from) !== undefined) uses[shardForProvider(provider.uuid)]!++;
    if (uses.reduce((sum, n) => sum + n, 0) !== totalUses(count)) throw new ConcurrentUpdate();

    const writes: Write[] = [...resourceClasses.renameWrites(count, newName, uses, now, errors.onExists)];
    const consumerUuids = new Set<string>();
    for (const { provider, allocations } of holders) {
      writes.push(...renameClassWrites(provider, from, newName));
      for (const [consumerUuid, resources] of allocations) {
        if (entryOf(resources, from) === undefined) continue;
        writes.push(renameInAllocationWrite(provider.uuid, consumerUuid, resources, from, newName));
        consumerUuids.add(consumerUuid);
      }
    }
    // A consumer item is written once, for every provider it holds the class on, as the consumer item itself has it.
    for (const consumer of (await getConsumers([...consumerUuids])).values()) {
      const held = Object.entries(consumer.allocations).filter(([, resources]) => entryOf(resources, from) !== undefined);
      if (held.length > 0) writes.push(renameInConsumerWrite(consumer.uuid, held, from, newName));
    }
    return { writes };
  });
}
