/**
 * A generated region, seeded, for the tests and the demonstrations of
 * migrate, export and import: what a nova region with a few kinds of
 * hardware looks like to Placement.
 *
 *   npx tsx scripts/region-copy/generate-region.ts --compute-nodes 1000 --consumers 10000 [--seed 1] > region.jsonl
 *
 * - compute nodes in aggregates of 50 (fewer in small regions), one custom
 *   rack trait per aggregate;
 *   every fifth aggregate keeps its disk on a sharing provider;
 * - most nodes flat (VCPU, MEMORY_MB, DISK_GB with nova's reserved and
 *   allocation ratios); a fifth nested, with two NUMA children holding VCPU
 *   and MEMORY_MB, each with a NIC child (SRIOV_NET_VF and bandwidth); a
 *   tenth with an FPGA child of a custom class;
 * - consumers of 20 projects with 3 users each: instances, migrations and
 *   consumers without a type, placed where they fit;
 * - one node in a hundred over its capacity (its allocation ratio lowered
 *   after its instances were placed, which Placement allows), so copies must
 *   cope with allocations that would no longer be accepted.
 */
import type { Inventories, Inventory, Resources } from '../../shared/domain/model.js';
import { capacity } from '../../shared/domain/capacity.js';
import { inventoryWithDefaults } from '../../shared/domain/inventory.js';
import { seededRandom } from '../lib/seeded-random.js';
import { allocationsByProvider, parentsFirst, type ConsumerRecord, type ProviderRecord, type Region } from './region.js';
import { regionFileLines } from './region-file.js';

export interface RegionShape {
  computeNodes: number;
  consumers: number;
  seed?: number;
}

const AGGREGATE_SIZE = 50;
const SHARED_STORAGE_EVERY = 5;
const PROJECTS = 20;
const USERS_PER_PROJECT = 3;
export const FPGA_CLASS = 'CUSTOM_FPGA_XILINX_VU9P';
export const GENERATED_TRAITS = { gold: 'CUSTOM_GOLD', physnet: 'CUSTOM_PHYSNET_DATA', unused: 'CUSTOM_NEVER_USED' };

/** Inventory as nova reports it: max_unit is the total unless given. */
const inventory = (total: number, fields: Partial<Inventory> = {}): Inventory => inventoryWithDefaults({ total, max_unit: total, ...fields });

/** Where an instance's resources go on one node: per class, the provider that has it. */
interface Host {
  root: ProviderRecord;
  /** The providers an instance can take its CPU and memory from (the node, or one of its NUMA cells). */
  cells: { cell: ProviderRecord; nic?: ProviderRecord }[];
  disk: ProviderRecord;
  fpga?: ProviderRecord;
  overCommitted: boolean;
}

export function generateRegion({ computeNodes, consumers: consumerCount, seed = 1 }: RegionShape): Region {
  const random = seededRandom(seed);
  const providers: ProviderRecord[] = [];
  const provider = (name: string, parent: ProviderRecord | null, fields: Partial<ProviderRecord> = {}): ProviderRecord => {
    const record: ProviderRecord = {
      uuid: random.uuid(),
      name,
      parent_provider_uuid: parent?.uuid ?? null,
      inventories: {},
      traits: [],
      aggregates: [],
      ...fields,
    };
    record.traits.sort();
    providers.push(record);
    return record;
  };

  // Small regions (the tests') still get several aggregates.
  const aggregateSize = Math.max(1, Math.min(AGGREGATE_SIZE, Math.ceil(computeNodes / 4)));
  const aggregates = Array.from({ length: Math.ceil(computeNodes / aggregateSize) }, () => random.uuid());
  const rackTraits = aggregates.map((_, n) => `CUSTOM_RACK_${n + 1}`);
  const sharedDisk = new Map<number, ProviderRecord>();
  aggregates.forEach((aggregate, n) => {
    if (n % SHARED_STORAGE_EVERY !== 0) return;
    const storage = provider(`shared-storage-${n + 1}`, null, {
      inventories: { DISK_GB: inventory(100_000, { reserved: 1000, max_unit: 10_000 }) },
      traits: ['MISC_SHARES_VIA_AGGREGATE'],
      aggregates: [aggregate],
    });
    sharedDisk.set(n, storage);
  });

  const hosts: Host[] = [];
  for (let n = 0; n < computeNodes; n++) {
    const rack = Math.floor(n / aggregateSize);
    const traits = ['COMPUTE_NODE', 'HW_CPU_X86_AVX2', rackTraits[rack]!];
    if (random.next() < 0.1) traits.push(GENERATED_TRAITS.gold);
    if (random.next() < 0.3) traits.push('HW_CPU_X86_AVX512F');
    const storage = sharedDisk.get(rack);
    const localDisk: Inventories = storage ? {} : { DISK_GB: inventory(random.int(2000, 4000), { reserved: 100 }) };
    const cpus = 8 * random.int(4, 16);
    const memory = 1024 * 8 * random.int(16, 64);
    const compute = { VCPU: inventory(cpus, { reserved: 2, allocation_ratio: 4 }), MEMORY_MB: inventory(memory, { reserved: 4096, allocation_ratio: 1.5 }) };
    const kind = random.next();
    const root = provider(`compute-${String(n + 1).padStart(5, '0')}`, null, { traits, aggregates: [aggregates[rack]!] });
    const host: Host = { root, cells: [], disk: storage ?? root, overCommitted: n % 100 === 7 };
    if (kind < 0.2) {
      // NUMA: CPU and memory on two cells, each with a NIC.
      root.inventories = localDisk;
      for (const cell of [0, 1]) {
        const numa = provider(`${root.name}-numa${cell}`, root, {
          inventories: { VCPU: inventory(cpus / 2, { allocation_ratio: 4 }), MEMORY_MB: inventory(memory / 2, { reserved: 2048, allocation_ratio: 1.5 }) },
          traits: ['HW_NUMA_ROOT'],
        });
        const nic = provider(`${root.name}-numa${cell}-nic`, numa, {
          inventories: { SRIOV_NET_VF: inventory(16), NET_BW_EGR_KILOBIT_PER_SEC: inventory(10_000_000, { reserved: 1000, step_size: 1000, min_unit: 1000 }) },
          traits: ['HW_NIC_SRIOV', GENERATED_TRAITS.physnet],
        });
        host.cells.push({ cell: numa, nic });
      }
    } else {
      root.inventories = { ...compute, ...localDisk };
      host.cells.push({ cell: root });
      if (kind < 0.3) host.fpga = provider(`${root.name}-fpga`, root, { inventories: { [FPGA_CLASS]: inventory(2) } });
    }
    hosts.push(host);
  }

  // What is still free per provider and class, so every consumer is placed where it fits.
  const used = new Map<string, Resources>();
  const fits = (target: ProviderRecord, resources: Resources) =>
    Object.entries(resources).every(([resourceClass, amount]) => {
      const inventory = target.inventories[resourceClass];
      return inventory !== undefined && amount <= inventory.max_unit && capacity(inventory) >= (used.get(target.uuid)?.[resourceClass] ?? 0) + amount;
    });
  const take = (target: ProviderRecord, resources: Resources) => {
    const usage = used.get(target.uuid) ?? {};
    for (const [resourceClass, amount] of Object.entries(resources)) usage[resourceClass] = (usage[resourceClass] ?? 0) + amount;
    used.set(target.uuid, usage);
  };

  const projects = Array.from({ length: PROJECTS }, () => ({
    id: random.uuid().replace(/-/g, ''),
    users: Array.from({ length: USERS_PER_PROJECT }, () => random.uuid().replace(/-/g, '')),
  }));
  const consumers: ConsumerRecord[] = [];
  for (let attempts = 0; consumers.length < consumerCount && attempts < consumerCount * 3; attempts++) {
    const host = random.pick(hosts);
    const { cell, nic } = random.pick(host.cells);
    const vcpus = random.pick([1, 2, 4, 8]);
    const wanted = new Map<ProviderRecord, Resources>();
    const add = (target: ProviderRecord, resources: Resources) => wanted.set(target, { ...wanted.get(target), ...resources });
    add(cell, { VCPU: vcpus, MEMORY_MB: vcpus * 2048 });
    add(host.disk, { DISK_GB: random.pick([10, 20, 40, 80]) });
    if (nic && random.next() < 0.5) add(nic, { SRIOV_NET_VF: 1, NET_BW_EGR_KILOBIT_PER_SEC: 1000 * random.int(1, 100) });
    if (host.fpga && random.next() < 0.3) add(host.fpga, { [FPGA_CLASS]: 1 });
    if (![...wanted].every(([target, resources]) => fits(target, resources))) continue;
    for (const [target, resources] of wanted) take(target, resources);
    const project = random.pick(projects);
    const kind = random.next();
    consumers.push({
      uuid: random.uuid(),
      project_id: project.id,
      user_id: random.pick(project.users),
      consumer_type: kind < 0.85 ? 'INSTANCE' : kind < 0.95 ? 'MIGRATION' : null,
      allocations: Object.fromEntries([...wanted].map(([target, resources]) => [target.uuid, resources])),
    });
  }
  if (consumers.length < consumerCount) throw new Error(`only ${consumers.length} of ${consumerCount} consumers fit on ${computeNodes} compute nodes`);

  // Over-committed nodes: the operator lowered the CPU allocation ratio below what is already placed.
  for (const host of hosts) {
    const cpu = host.cells[0]!.cell;
    const held = used.get(cpu.uuid)?.VCPU ?? 0;
    if (host.overCommitted && held > 0)
      cpu.inventories.VCPU = { ...cpu.inventories.VCPU!, allocation_ratio: Math.max(0.1, Math.floor((held / cpu.inventories.VCPU!.total) * 5) / 10) };
  }

  return {
    resourceClasses: [FPGA_CLASS],
    traits: [...rackTraits, ...Object.values(GENERATED_TRAITS)].sort(),
    providers: parentsFirst(providers),
    consumers,
    providerAllocations: allocationsByProvider(consumers),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({ options: { 'compute-nodes': { type: 'string' }, consumers: { type: 'string' }, seed: { type: 'string' } } });
  const region = generateRegion({
    computeNodes: Number(values['compute-nodes'] ?? 100),
    consumers: Number(values.consumers ?? 1000),
    seed: Number(values.seed ?? 1),
  });
  const header = { created_at: new Date().toISOString(), source: 'generate-region.ts', microversion: '1.39' };
  for (const line of regionFileLines(region, header)) process.stdout.write(`${line}\n`);
}
