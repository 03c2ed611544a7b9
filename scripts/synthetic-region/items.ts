/**
 * A region as DynamoDB items: exactly the items the API would have written
 * for it (the storage module's own write builders), for loading regions too
 * large to create through the API in reasonable time (scripts/lib/batch-write.ts).
 */
import type { Consumer, Provider } from '../../shared/domain/model.js';
import { claimWrites } from '../../shared/storage/consumers.js';
import { providerChangeWrites } from '../../shared/storage/providers.js';
import type { Item } from '../../shared/storage/reads.js';
import { entriesOfProvider } from '../../shared/storage/entries/of-provider.js';
import { encodeProviderName } from '../../shared/storage/items/provider-name.js';
import { usagesFromAllocations, type ConsumerRecord, type Region } from '../../admin/region-copy/region.js';

/** Every provider as the service stores it, usages included, by uuid. */
export function providers(region: Region, now = new Date().toISOString()): Map<string, Provider> {
  const parents = new Map(region.providers.map((provider) => [provider.uuid, provider.parent_provider_uuid]));
  const rootOf = (uuid: string): string => {
    const parent = parents.get(uuid);
    return parent ? rootOf(parent) : uuid;
  };
  const children = new Map<string, string[]>();
  for (const { uuid, parent_provider_uuid: parent } of region.providers) if (parent) children.set(parent, [...(children.get(parent) ?? []), uuid]);
  return new Map(
    region.providers.map((record) => [
      record.uuid,
      {
        uuid: record.uuid,
        name: record.name,
        generation: 1,
        parentUuid: record.parent_provider_uuid,
        rootUuid: rootOf(record.uuid),
        inventories: record.inventories,
        usages: usagesFromAllocations(record, region.providerAllocations.get(record.uuid)),
        traits: record.traits,
        aggregates: record.aggregates,
        children: (children.get(record.uuid) ?? []).sort(),
        createdAt: now,
        updatedAt: now,
      },
    ]),
  );
}

/** A provider's own item (its name, aggregate and search entries are further items; see `regionItems`). */
export const providerItem = (provider: Provider): Item => providerChangeWrites(undefined, provider)[0]!.item.Put!.Item!;

/** The items of one consumer's claim: the consumer and its allocations (the providers' usages are in their items). */
export function consumerItems(record: ConsumerRecord, now = new Date().toISOString()): Item[] {
  const consumer: Consumer = {
    uuid: record.uuid,
    projectId: record.project_id,
    userId: record.user_id,
    consumerType: record.consumer_type ?? undefined,
    generation: 1,
    allocations: record.allocations,
    createdAt: now,
    updatedAt: now,
  };
  return claimWrites([{ before: undefined, after: consumer }], [], { at: now, requestId: null }).map((write) => write.item.Put!.Item!);
}

/**
 * Every item the API would have written for the region in a table at the
 * newest storage format: providers with their names and every entry
 * (aggregates, sharing, traits, capacity), consumers, allocations; but for
 * the catalog, whose entries are there already and whose traits' holders
 * are noted on them (traitHolders).
 */
export function regionItems(region: Region, options: { consumers?: boolean } = {}): Item[] {
  const now = new Date().toISOString();
  const items: Item[] = [];
  for (const provider of providers(region, now).values()) {
    items.push(providerItem(provider), encodeProviderName(provider.name, provider.uuid), ...entriesOfProvider(provider).map((entry) => entry.item));
  }
  if (options.consumers !== false) for (const consumer of region.consumers) items.push(...consumerItems(consumer, now));
  return items;
}

/**
 * A holder of each trait the region's providers hold, trait to provider
 * uuid: what the API notes on the traits' catalog entries as providers take
 * them (shared/storage/trait-holders.ts), which items written below it must
 * note too.
 */
export function traitHolders(region: Region): Map<string, string> {
  const holders = new Map<string, string>();
  for (const provider of region.providers) for (const trait of provider.traits) if (!holders.has(trait)) holders.set(trait, provider.uuid);
  return holders;
}
