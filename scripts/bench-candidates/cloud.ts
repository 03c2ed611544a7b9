/** The generated cloud (seeded: both services get the identical one) and the items our service stores for it. */
import { seededRandom } from '../lib/seeded-random.js';
import { SHARING_TRAIT } from '../../shared/domain/standard-catalog.js';
import type { Consumer, Provider } from '../../shared/domain/model.js';
import { claimWrites } from '../../shared/storage/consumers.js';
import { providerChangeWrites } from '../../shared/storage/providers.js';
import type { Item } from '../../shared/storage/reads.js';
import { AGGREGATE_SIZE, SHARED_STORAGE_EVERY, NESTED_SHARE, PFS_PER_NESTED_NODE, INSTANCES_PER_NODE, PROJECT, USER, CONSUMER_TYPE } from './settings.js';

// ---------------------------------------------------------------- the cloud

export interface CloudProvider {
  uuid: string;
  name: string;
  parentUuid: string | null;
  rootUuid: string;
  inventories: Record<string, { total: number; allocation_ratio: number }>;
  traits: string[];
  aggregates: string[];
  children: string[];
}

export interface Cloud {
  providers: CloudProvider[];
  /** Consumer uuid to provider uuid to the resources held there. */
  consumers: Map<string, Record<string, Record<string, number>>>;
  aggregates: string[];
}

export function buildCloud(computeNodes: number, seed: number): Cloud {
  const { next: random, int, uuid } = seededRandom(seed);
  const provider = (name: string, parent: CloudProvider | null, fields: Partial<CloudProvider>): CloudProvider => {
    const id = uuid();
    const tree = { parentUuid: parent?.uuid ?? null, rootUuid: parent?.rootUuid ?? id };
    return { uuid: id, name, ...tree, inventories: {}, traits: [], aggregates: [], children: [], ...fields };
  };
  // Splits a used amount over the instances of a node.
  const shares = (amount: number) => {
    const upTo = (k: number) => Math.floor((amount * k) / INSTANCES_PER_NODE);
    return Array.from({ length: INSTANCES_PER_NODE }, (_, k) => upTo(k + 1) - upTo(k));
  };

  const aggregates = Array.from({ length: Math.ceil(computeNodes / AGGREGATE_SIZE) }, uuid);
  const providers: CloudProvider[] = [];
  const sharedDisk = new Map<number, CloudProvider>();
  aggregates.forEach((aggregate, n) => {
    if (n % SHARED_STORAGE_EVERY !== 0) return;
    const storage = provider(`shared-disk-${n}`, null, {
      inventories: { DISK_GB: { total: 0, allocation_ratio: 1 } },
      traits: [SHARING_TRAIT],
      aggregates: [aggregate],
    });
    sharedDisk.set(n, storage);
    providers.push(storage);
  });

  const consumers: Cloud['consumers'] = new Map();
  for (let n = 0; n < computeNodes; n++) {
    const aggregate = Math.floor(n / AGGREGATE_SIZE);
    const storage = sharedDisk.get(aggregate);
    const disk = int(1000, 2000);
    const traits = ['COMPUTE_NODE', 'HW_CPU_X86_SSE42'];
    if (random() < 0.5) traits.push('HW_CPU_X86_AVX2');
    if (random() < 0.3) traits.push('COMPUTE_VOLUME_MULTI_ATTACH');
    const node = provider(`cn-${n}`, null, {
      inventories: {
        VCPU: { total: int(32, 64), allocation_ratio: 4 },
        MEMORY_MB: { total: 1024 * int(128, 256), allocation_ratio: 1 },
        ...(storage ? {} : { DISK_GB: { total: disk, allocation_ratio: 1 } }),
      },
      traits,
      aggregates: [aggregates[aggregate]!],
    });
    // A node of a shared-storage aggregate brings its disk to the sharing provider.
    if (storage) storage.inventories.DISK_GB!.total += disk;
    providers.push(node);
    const pf = (k: number) => provider(`cn-${n}-pf${k}`, node, { inventories: { SRIOV_NET_VF: { total: 8, allocation_ratio: 1 } }, traits: ['HW_NIC_SRIOV'] });
    const pfs = random() < NESTED_SHARE ? Array.from({ length: PFS_PER_NESTED_NODE }, (_, k) => pf(k)) : [];
    node.children = pfs.map((pf) => pf.uuid);
    providers.push(...pfs);

    const used = 0.2 + 0.2 * random();
    const usedOf = (resourceClass: string) => {
      const { total, allocation_ratio } = node.inventories[resourceClass]!;
      return shares(Math.round(total * allocation_ratio * used));
    };
    const [vcpu, memory] = [usedOf('VCPU'), usedOf('MEMORY_MB')];
    const diskUsed = shares(Math.round(disk * used));
    for (let k = 0; k < INSTANCES_PER_NODE; k++) {
      const allocations: Record<string, Record<string, number>> = { [node.uuid]: { VCPU: vcpu[k]!, MEMORY_MB: memory[k]! } };
      if (storage) allocations[storage.uuid] = { DISK_GB: diskUsed[k]! };
      else allocations[node.uuid]!.DISK_GB = diskUsed[k]!;
      if (pfs[k]) allocations[pfs[k]!.uuid] = { SRIOV_NET_VF: Math.round(8 * used) };
      consumers.set(uuid(), allocations);
    }
  }
  return { providers, consumers, aggregates };
}

export function usagesOf(cloud: Cloud): Map<string, Record<string, number>> {
  const usages = new Map<string, Record<string, number>>();
  for (const allocations of cloud.consumers.values()) {
    for (const [provider, resources] of Object.entries(allocations)) {
      const usage = usages.get(provider) ?? {};
      for (const [resourceClass, amount] of Object.entries(resources)) usage[resourceClass] = (usage[resourceClass] ?? 0) + amount;
      usages.set(provider, usage);
    }
  }
  return usages;
}

// ---------------------------------------------------------------- loading ours

/** The items the API would write for the cloud: providers with names and search entries, consumers, allocations. */
export function ourItems(cloud: Cloud, usages: Map<string, Record<string, number>>): Item[] {
  const now = new Date().toISOString();
  const items: Item[] = [];
  for (const source of cloud.providers) {
    const provider: Provider = {
      ...source,
      generation: 1,
      inventories: Object.fromEntries(
        Object.entries(source.inventories).map(([resourceClass, { total, allocation_ratio }]) => [
          resourceClass,
          { total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio },
        ]),
      ),
      usages: usages.get(source.uuid) ?? {},
      createdAt: now,
      updatedAt: now,
    };
    // Only the Puts: the parents' child links are already in `children`.
    for (const write of providerChangeWrites(undefined, provider)) if (write.item.Put) items.push(write.item.Put.Item!);
  }
  for (const [uuid, allocations] of cloud.consumers) {
    const owner = { projectId: PROJECT, userId: USER, consumerType: CONSUMER_TYPE };
    const after: Consumer = { uuid, ...owner, generation: 1, allocations, createdAt: now, updatedAt: now };
    // The providers' usage is already in their items: only the consumer's own writes (all Puts).
    for (const write of claimWrites([{ before: undefined, after }], [], now)) items.push(write.item.Put!.Item!);
  }
  return items;
}
