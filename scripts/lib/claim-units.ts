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
import type { Consumer, Provider } from '../../shared/domain/model.js';
import { newProvider } from '../../shared/domain/provider-tree.js';
import { claimWrites } from '../../shared/storage/consumers.js';
import { providerChangeWrites } from '../../shared/storage/providers.js';
import type { Item } from '../../shared/storage/reads.js';
import { SECONDARY_INDEXES } from '../../shared/storage/table-definition.js';
import { SHARING_TRAIT } from '../../shared/domain/standard-catalog.js';
import { HOST_TRAITS, PROJECT_ID, USER_ID, type Allocations, type NodeModel, type Region } from '../bench-region/region.js';

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

/** The provider items a node's claims touch, as the service stores them with the node holding its instances. */
function providerItems(region: Region, node: NodeModel): Map<string, Item> {
  const now = new Date(0).toISOString();
  const usage = new Map<string, Record<string, number>>();
  region.instancesOf(node).forEach((instance) => {
    for (const [uuid, { resources }] of Object.entries(instance.allocations)) {
      const held = usage.get(uuid) ?? {};
      for (const [resourceClass, amount] of Object.entries(resources)) held[resourceClass] = (held[resourceClass] ?? 0) + amount;
      usage.set(uuid, held);
    }
  });
  const inventory = (total: number, allocationRatio = 1, reserved = 0) => ({
    total,
    reserved,
    min_unit: 1,
    max_unit: total,
    step_size: 1,
    allocation_ratio: allocationRatio,
  });
  const provider = (uuid: string, name: string, fields: Partial<Provider>): Provider => ({
    ...newProvider(uuid, name, undefined, now),
    generation: 100,
    usages: usage.get(uuid) ?? {},
    ...fields,
  });

  const stocked = Object.fromEntries(
    Object.entries(region.inventoriesOf(node)).map(([name, one]) => [name, inventory(one.total, one.allocation_ratio, one.reserved)]),
  );
  const providers = [
    provider(node.uuid, node.name, {
      inventories: stocked,
      traits: HOST_TRAITS,
      aggregates: node.aggregate ? [node.aggregate.uuid] : [],
      children: node.pfs.map((pf) => pf.uuid),
    }),
    ...node.pfs.map((pf) =>
      provider(pf.uuid, pf.name, { parentUuid: node.uuid, rootUuid: node.uuid, inventories: { SRIOV_NET_VF: inventory(region.vfsPerPf) } }),
    ),
    ...(node.aggregate
      ? [
          provider(node.aggregate.sharing.uuid, node.aggregate.sharing.name, {
            inventories: { DISK_GB: inventory(region.sharedDiskTotal()) },
            traits: [SHARING_TRAIT],
            aggregates: [node.aggregate.uuid],
          }),
        ]
      : []),
  ];
  return new Map(providers.map((one) => [one.uuid, providerChangeWrites(undefined, one)[0]!.item.Put!.Item!]));
}

/** The items one claim for these allocations writes: consumer, allocations, providers. */
function claimItems(region: Region, node: NodeModel, allocations: Allocations): Item[] {
  const now = new Date(0).toISOString();
  const consumer: Consumer = {
    uuid: '00000000-0000-4000-8000-000000000000',
    projectId: PROJECT_ID,
    userId: USER_ID,
    generation: 1,
    consumerType: 'INSTANCE',
    allocations: Object.fromEntries(Object.entries(allocations).map(([uuid, { resources }]) => [uuid, resources])),
    createdAt: now,
    updatedAt: now,
  };
  const own = claimWrites([{ before: undefined, after: consumer }], [], now).map((write) => write.item.Put!.Item!);
  const providers = providerItems(region, node);
  return [...own, ...Object.keys(allocations).map((uuid) => providers.get(uuid)!)];
}

/**
 * The mean write units of a boot's claim (a delete writes the same items
 * back), over the region's first `nodes` nodes and the instance shapes the
 * loader gives them.
 */
export function meanClaimWriteUnits(region: Region, nodes: number): number {
  let units = 0;
  let claims = 0;
  for (let index = 0; index < nodes; index++) {
    const node = region.node(index);
    region.instancesOf(node).forEach((instance) => {
      units += transactionWriteUnits(claimItems(region, node, instance.allocations));
      claims++;
    });
  }
  return units / claims;
}

/** The size of a node's provider item (the claim's largest write). */
export function nodeItemBytes(region: Region, index: number): number {
  const node = region.node(index);
  return itemBytes(providerItems(region, node).get(node.uuid)!);
}
