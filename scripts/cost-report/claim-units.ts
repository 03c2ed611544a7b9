/**
 * The write units of a claim as DynamoDB bills them, computed from the items
 * the service writes for it. Not read from the metric records, because
 * DynamoDB Local 3 misreports transactions: it reports 2 units for two 1 KB
 * puts where AWS bills 4 (awslabs/amazon-dynamodb-local-samples#31; a claim
 * on two providers reported a table total of 6 for five items here), and it
 * doubles index writes, which AWS does not (index entries cost what the same
 * write costs outside a transaction, as measured against DynamoDB in
 * nubo-db/dynoxide#188).
 *
 * The rules (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 * an item's size is the sum of its attribute names and values (strings in
 * UTF-8 bytes, numbers about one byte per two digits plus one, lists and
 * maps their elements plus 3 bytes); a transactional write costs 2 units per
 * started KB of the item; every index holding the item rewrites its entry at
 * 1 unit per started KB (projection ALL: the entry is the item).
 */
import type { Provider, Resources } from '../../shared/domain/model.js';
import type { ConsumerRecord } from '../../admin/region-copy/region.js';
import type { Item } from '../../shared/storage/reads.js';
import { capacityEntriesOf, capacityEntryChanges } from '../../shared/storage/entries/capacity-entries.js';
import { encodeCapacityEntry } from '../../shared/storage/items/capacity-entry.js';
import { ENTRIES_SINCE_FORMAT, NEWEST_FORMAT } from '../../shared/storage/storage-format.js';
import { SECONDARY_INDEXES } from '../../shared/storage/table-definition.js';
import { consumerItems, providerItem, providers } from '../synthetic-region/items.js';
import type { SyntheticRegion } from '../synthetic-region/region.js';

function valueBytes(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number')
    return (
      Math.ceil(
        String(Math.abs(value))
          .replace('.', '')
          .replace(/^0+|0+$/g, '').length / 2,
      ) + 1
    );
  if (value instanceof Set) return [...value].reduce((sum: number, element) => sum + valueBytes(element), 0);
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, element) => sum + valueBytes(element), 0);
  return 3 + Object.entries(value as Record<string, unknown>).reduce((sum, [name, element]) => sum + Buffer.byteLength(name) + valueBytes(element), 0);
}

export function itemBytes(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => (value === undefined ? sum : sum + Buffer.byteLength(name) + valueBytes(value)), 0);
}

const startedKb = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** Units of a transaction that writes (puts, updates or deletes) these items. */
export function transactionWriteUnits(items: Item[]): number {
  let units = 0;
  for (const item of items) {
    const kb = startedKb(itemBytes(item));
    units += 2 * kb;
    for (const index of SECONDARY_INDEXES) if (item[index.partitionKey] !== undefined) units += kb;
  }
  return units;
}

/** The provider items of the region's first `nodes` nodes, as the service stores them with every instance placed, by uuid. */
function providerItems(region: SyntheticRegion, nodes: number): Map<string, Item> {
  const now = new Date(0).toISOString();
  return new Map([...providers(region.build(nodes), now)].map(([uuid, provider]) => [uuid, providerItem(provider)]));
}

/** Items as stored, by key. */
const byKey = (items: Item[]) => new Map(items.map((item) => [`${String(item.pk)} ${String(item.sk)}`, item]));

/**
 * The capacity entries (storage format 3) a change of a provider from
 * `before` to `after` moves, as items: those it puts, and those it deletes
 * as they were.
 */
export function capacityEntryItems(before: Provider, after: Provider): Item[] {
  const stored = byKey(capacityEntriesOf(before).map(encodeCapacityEntry));
  return capacityEntryChanges(before, after).writes.map(
    (write) => write.item.Put?.Item ?? stored.get(`${write.item.Delete!.Key!.pk} ${write.item.Delete!.Key!.sk}`)!,
  );
}

/** One claim of the region's instances, as they were placed one after the other: its providers before and after it. */
export interface PlacedClaim {
  consumer: ConsumerRecord;
  before: Provider[];
  after: Provider[];
}

/** The claims of the region's first `nodes` nodes in the order the loaders place them, each provider's usage moving with them. */
export function claimsInOrder(region: SyntheticRegion, nodes: number): PlacedClaim[] {
  const built = region.build(nodes);
  const now = new Date(0).toISOString();
  const state = new Map([...providers(built, now)].map(([uuid, provider]) => [uuid, { ...provider, usages: {} as Resources }]));
  return built.consumers.map((consumer) => {
    const before = Object.keys(consumer.allocations).map((uuid) => state.get(uuid)!);
    const after = before.map((provider) => {
      const usages = { ...provider.usages };
      for (const [resourceClass, amount] of Object.entries(consumer.allocations[provider.uuid]!)) usages[resourceClass] = (usages[resourceClass] ?? 0) + amount;
      const moved = { ...provider, usages };
      state.set(provider.uuid, moved);
      return moved;
    });
    return { consumer, before, after };
  });
}

/** The items a claim writes: the consumer, its allocations and the providers it claims on, and at `format` 3 the capacity entries it moves. */
export function claimItems({ consumer, before, after }: PlacedClaim, format: number): Item[] {
  const now = new Date(0).toISOString();
  return [
    ...consumerItems(consumer, now),
    ...after.map(providerItem),
    ...(format >= ENTRIES_SINCE_FORMAT ? before.flatMap((provider, n) => capacityEntryItems(provider, after[n]!)) : []),
  ];
}

/**
 * The mean write units of a boot's claim (a delete writes the same items
 * back), over the region's first `nodes` nodes and the instances the
 * loaders give them, placed one after the other.
 */
export function meanClaimWriteUnits(region: SyntheticRegion, nodes: number, format = NEWEST_FORMAT): number {
  const claims = claimsInOrder(region, nodes);
  return claims.reduce((sum, claim) => sum + transactionWriteUnits(claimItems(claim, format)), 0) / claims.length;
}

/** The size of a node's provider item (the claim's largest write). */
export function nodeItemBytes(region: SyntheticRegion, index: number): number {
  return itemBytes(providerItems(region, index + 1).get(region.node(index).uuid)!);
}
