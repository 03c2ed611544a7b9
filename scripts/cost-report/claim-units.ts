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
import type { Item } from '../../shared/storage/reads.js';
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

/**
 * The mean write units of a boot's claim (a delete writes the same items
 * back), over the region's first `nodes` nodes and the instances the
 * loaders give them: the consumer, its allocations and the providers it
 * claims on.
 */
export function meanClaimWriteUnits(region: SyntheticRegion, nodes: number): number {
  const built = region.build(nodes);
  const items = providerItems(region, nodes);
  const now = new Date(0).toISOString();
  let units = 0;
  for (const consumer of built.consumers) {
    units += transactionWriteUnits([...consumerItems(consumer, now), ...Object.keys(consumer.allocations).map((uuid) => items.get(uuid)!)]);
  }
  return units / built.consumers.length;
}

/** The size of a node's provider item (the claim's largest write). */
export function nodeItemBytes(region: SyntheticRegion, index: number): number {
  return itemBytes(providerItems(region, index + 1).get(region.node(index).uuid)!);
}
