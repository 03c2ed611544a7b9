/**
 * The one seeded synthetic region of the benchmarks, the measurements and
 * the region-copy tests: what a nova region looks like to Placement.
 *
 * Node i is the same whatever the region's size (its uuids and choices are
 * derived from the seed and i), so a region grows by adding nodes N..M and
 * shrinks by dropping its highest ones. The loaders take it into a service
 * through the API (api-loader.ts), as DynamoDB items (items.ts) or as a
 * region file (main.ts, with placement-admin's region-file format).
 *
 * - Every node is a compute node provider with VCPU (64, ratio 4), MEMORY_MB
 *   (384 GiB) and the ~60 traits a libvirt host reports.
 * - Nodes come in blocks of `aggregateSize`; a share of the blocks
 *   (`aggregatedShare`) is a host aggregate whose disk is a sharing provider
 *   (DISK_GB, MISC_SHARES_VIA_AGGREGATE) instead of the nodes' own.
 * - A share of the nodes (`nestedShare`) has PF children with SRIOV_NET_VF;
 *   every third instance on them holds a VF.
 * - A share (`numaShare`) keeps CPU and memory on two NUMA cells, each with a
 *   NIC child (VFs and bandwidth); a share (`fpgaShare`) has an FPGA child of
 *   a custom class; every `overCommitEvery`-th node had its CPU allocation
 *   ratio lowered below what its instances hold, as Placement allows.
 * - Each node holds `instancesPerNode` instances (2 VCPU, 4 GiB, 20 GB disk),
 *   of one project and user, or of `projects` projects and mixed consumer
 *   types (instances, migrations, consumers without a type).
 */
import { createHash } from 'node:crypto';
import { inventoryWithDefaults } from '../../shared/domain/inventory.js';
import type { Inventories, Inventory, Resources } from '../../shared/domain/model.js';
import { SHARING_TRAIT } from '../../shared/domain/standard-catalog.js';
import { allocationsByProvider, parentsFirst, type ConsumerRecord, type ProviderRecord, type Region } from '../../admin/region-copy/region.js';

export interface RegionShape {
  seed: number;
  instancesPerNode: number;
  /** Nodes come in blocks of this many. */
  aggregateSize: number;
  /** The share of blocks that are a host aggregate with a sharing disk provider. */
  aggregatedShare: number;
  /** The share of nodes with SR-IOV PF children, how many each, and the VFs of each. */
  nestedShare: number;
  pfsPerNode: number;
  vfsPerPf: number;
  /** The share of nodes whose CPU and memory sit on two NUMA cells, each with a NIC. */
  numaShare: number;
  /** The share of nodes with an FPGA child (the custom class FPGA_CLASS). */
  fpgaShare: number;
  /** Every this-many-th node (the 8th, then every this many) holds more CPU than its lowered allocation ratio allows; 0: none. */
  overCommitEvery: number;
  /** The compute nodes' traits: the ~60 of a libvirt host, or a few (SSE4.2; AVX2 on half the nodes, multi-attach on 30%). */
  hostTraits: 'libvirt' | 'few';
  /** A custom trait per block (CUSTOM_RACK_<block>) on its nodes. */
  rackTraits: boolean;
  /** Consumers of this many projects (3 users each) and of mixed types; 0: one project and user, every consumer an INSTANCE. */
  projects: number;
}

/** The region of bench:region and cost-report: polled compute nodes, some with PFs, half the blocks with shared disk. */
export const DEFAULT_SHAPE: RegionShape = {
  seed: 42,
  instancesPerNode: 30,
  aggregateSize: 20,
  aggregatedShare: 0.5,
  nestedShare: 0.2,
  pfsPerNode: 2,
  vfsPerPf: 16,
  numaShare: 0,
  fpgaShare: 0,
  overCommitEvery: 0,
  hostTraits: 'libvirt',
  rackTraits: false,
  projects: 0,
};

/** The same region with every kind of provider tree and consumer a copy must carry (region-copy tests, capacity measurement). */
export const VARIED_SHAPE: RegionShape = {
  ...DEFAULT_SHAPE,
  instancesPerNode: 8,
  aggregateSize: 4,
  numaShare: 0.2,
  fpgaShare: 0.1,
  overCommitEvery: 100,
  rackTraits: true,
  projects: 20,
};

export const INSTANCE_RESOURCES = { VCPU: 2, MEMORY_MB: 4096, DISK_GB: 20 } as const;
export const PROJECT_ID = 'bench-region-project';
export const USER_ID = 'bench-region-user';
export const FPGA_CLASS = 'CUSTOM_FPGA_XILINX_VU9P';
const USERS_PER_PROJECT = 3;

/** What the libvirt driver reports for an x86-64 KVM host (names of os-traits 3.9). */
const HOST_TRAITS = [
  'COMPUTE_ACCELERATORS',
  'COMPUTE_DEVICE_TAGGING',
  'COMPUTE_NODE',
  'COMPUTE_RESCUE_BFV',
  'COMPUTE_SECURITY_UEFI_SECURE_BOOT',
  'COMPUTE_SOCKET_PCI_NUMA_AFFINITY',
  'COMPUTE_TRUSTED_CERTS',
  'COMPUTE_VOLUME_ATTACH_WITH_TAG',
  'COMPUTE_VOLUME_EXTEND',
  'COMPUTE_VOLUME_MULTI_ATTACH',
  'COMPUTE_NET_ATTACH_INTERFACE',
  'COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG',
  ...['BOCHS', 'CIRRUS', 'NONE', 'QXL', 'VGA', 'VIRTIO'].map((model) => `COMPUTE_GRAPHICS_MODEL_${model}`),
  ...['AKI', 'AMI', 'ARI', 'ISO', 'QCOW2', 'RAW'].map((type) => `COMPUTE_IMAGE_TYPE_${type}`),
  ...['E1000', 'E1000E', 'LAN9118', 'NE2K_PCI', 'PCNET', 'RTL8139', 'SPAPR_VLAN', 'VIRTIO', 'VMXNET3'].map((model) => `COMPUTE_NET_VIF_MODEL_${model}`),
  ...['FDC', 'IDE', 'SATA', 'SCSI', 'USB', 'VIRTIO'].map((bus) => `COMPUTE_STORAGE_BUS_${bus}`),
  'HW_ARCH_X86_64',
  ...['ABM', 'AESNI', 'AVX', 'AVX2', 'BMI', 'BMI2', 'CLMUL', 'F16C', 'FMA3', 'MMX', 'SSE', 'SSE2', 'SSE41', 'SSE42', 'SSSE3', 'SVM', 'AMD_SVM', 'SHA'].map(
    (flag) => `HW_CPU_X86_${flag}`,
  ),
];

export interface ProviderModel {
  uuid: string;
  name: string;
}

export interface NodeModel extends ProviderModel {
  index: number;
  pfs: ProviderModel[];
  /** NUMA cells (CPU and memory), each with its NIC, when the node has them. */
  cells: (ProviderModel & { nic: ProviderModel })[];
  fpga?: ProviderModel;
  /** The host aggregate and its sharing provider, when the node's block is one. */
  aggregate?: { uuid: string; sharing: ProviderModel };
  overCommitted: boolean;
}

/** A consumer's allocations: provider uuid to resources, as PUT /allocations takes them. */
export type Allocations = Record<string, { resources: Record<string, number> }>;

export interface InstanceModel {
  uuid: string;
  allocations: Allocations;
  projectId: string;
  userId: string;
  /** null: a consumer without a type. */
  consumerType: string | null;
}

function derivedUuid(seed: number, ...parts: (string | number)[]): string {
  const hex = createHash('sha256')
    .update([seed, ...parts].join('/'))
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[parseInt(hex[16]!, 16) % 4]}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A number in [0, 1) fixed by the seed and the parts. */
function derivedFraction(seed: number, ...parts: (string | number)[]): number {
  return (
    createHash('sha256')
      .update([seed, 'fraction', ...parts].join('/'))
      .digest()
      .readUInt32BE(0) /
    2 ** 32
  );
}

/** Every 1/share-th node, from the (share - phase)-th: spread evenly, so that even a test's ten nodes have some. */
const spread = (share: number, index: number, phase: number): boolean => share > 0 && (index + phase) % Math.round(1 / share) === 0;

const inventory = (fields: Partial<Inventory> & { total: number }): Inventory => inventoryWithDefaults(fields);

export class SyntheticRegion {
  constructor(readonly shape: RegionShape) {}

  node(index: number): NodeModel {
    const { seed, nestedShare, numaShare, fpgaShare, overCommitEvery, pfsPerNode, aggregatedShare } = this.shape;
    const uuid = derivedUuid(seed, 'node', index);
    const name = `region-cn-${index}`;
    const numa = spread(numaShare, index, 3);
    const nested = !numa && derivedFraction(seed, 'nested', index) < nestedShare;
    const pfs = nested ? Array.from({ length: pfsPerNode }, (_, n) => ({ uuid: derivedUuid(seed, 'pf', index, n), name: `${name}-pf${n}` })) : [];
    const cells = numa
      ? [0, 1].map((n) => ({
          uuid: derivedUuid(seed, 'numa', index, n),
          name: `${name}-numa${n}`,
          nic: { uuid: derivedUuid(seed, 'nic', index, n), name: `${name}-numa${n}-nic` },
        }))
      : [];
    const fpga = spread(fpgaShare, index, 5) ? { uuid: derivedUuid(seed, 'fpga', index), name: `${name}-fpga` } : undefined;
    const block = this.blockOf(index);
    const aggregated = derivedFraction(seed, 'aggregate', block) < aggregatedShare;
    const aggregate = aggregated
      ? { uuid: derivedUuid(seed, 'aggregate', block), sharing: { uuid: derivedUuid(seed, 'sharing', block), name: `region-shared-disk-${block}` } }
      : undefined;
    const overCommitted = overCommitEvery > 0 && index % overCommitEvery === 7 % overCommitEvery;
    return { index, uuid, name, pfs, cells, fpga, aggregate, overCommitted };
  }

  blockOf(index: number): number {
    return Math.floor(index / this.shape.aggregateSize);
  }

  /** Every provider uuid of the node's own tree. */
  treeOf(node: NodeModel): string[] {
    return [node.uuid, ...node.cells.flatMap((cell) => [cell.uuid, cell.nic.uuid]), ...node.pfs.map((pf) => pf.uuid), ...(node.fpga ? [node.fpga.uuid] : [])];
  }

  /** The allocations of the node's k-th instance (placed by a loader, or booted by the benchmark's scheduler). */
  allocationsOn(node: NodeModel, k: number): Allocations {
    const cell = node.cells[k % 2];
    const compute = cell?.uuid ?? node.uuid;
    const allocations: Allocations = { [compute]: { resources: { VCPU: INSTANCE_RESOURCES.VCPU, MEMORY_MB: INSTANCE_RESOURCES.MEMORY_MB } } };
    const disk = node.aggregate?.sharing.uuid ?? node.uuid;
    allocations[disk] = { resources: { ...allocations[disk]?.resources, DISK_GB: INSTANCE_RESOURCES.DISK_GB } };
    if (k % 3 === 0 && cell) allocations[cell.nic.uuid] = { resources: { SRIOV_NET_VF: 1 } };
    else if (k % 3 === 0 && node.pfs.length > 0) allocations[node.pfs[(k / 3) % node.pfs.length]!.uuid] = { resources: { SRIOV_NET_VF: 1 } };
    if (node.fpga && (k === 1 || k === 5)) allocations[node.fpga.uuid] = { resources: { [FPGA_CLASS]: 1 } };
    return allocations;
  }

  /** The instances the loaders put on a node. */
  instancesOf(node: NodeModel): InstanceModel[] {
    const { seed, instancesPerNode, projects } = this.shape;
    return Array.from({ length: instancesPerNode }, (_, k) => {
      const uuid = derivedUuid(seed, 'instance', node.index, k);
      const allocations = this.allocationsOn(node, k);
      if (projects === 0) return { uuid, allocations, projectId: PROJECT_ID, userId: USER_ID, consumerType: 'INSTANCE' };
      const ordinal = node.index * instancesPerNode + k;
      const project = Math.floor(derivedFraction(seed, 'project', node.index, k) * projects);
      const user = Math.floor(derivedFraction(seed, 'user', node.index, k) * USERS_PER_PROJECT);
      return {
        uuid,
        allocations,
        projectId: derivedUuid(seed, 'project', project).replace(/-/g, ''),
        userId: derivedUuid(seed, 'user', project, user).replace(/-/g, ''),
        consumerType: ordinal % 20 === 19 ? null : ordinal % 10 === 4 ? 'MIGRATION' : 'INSTANCE',
      };
    });
  }

  /** The node's instances as placement-admin's region model has consumers. */
  consumersOf(node: NodeModel): ConsumerRecord[] {
    return this.instancesOf(node).map((instance) => ({
      uuid: instance.uuid,
      project_id: instance.projectId,
      user_id: instance.userId,
      consumer_type: instance.consumerType,
      allocations: Object.fromEntries(Object.entries(instance.allocations).map(([uuid, { resources }]) => [uuid, resources as Resources])),
    }));
  }

  /** A sharing provider's disk: what its nodes would have had. */
  sharedDiskTotal(): number {
    return 4000 * this.shape.aggregateSize;
  }

  /** The custom resource classes the region's providers may hold. */
  customResourceClasses(): string[] {
    return this.shape.fpgaShare > 0 ? [FPGA_CLASS] : [];
  }

  /** The custom traits of the first `nodes` nodes. */
  customTraits(nodes: number): string[] {
    if (!this.shape.rackTraits || nodes === 0) return [];
    return Array.from({ length: this.blockOf(nodes - 1) + 1 }, (_, block) => `CUSTOM_RACK_${block}`);
  }

  /** The node's providers, parents first, as the API shows them once the loader is done (the over-committed ratio lowered). */
  providersOf(node: NodeModel): ProviderRecord[] {
    const record = (provider: ProviderModel, parent: string | null, inventories: Inventories, traits: string[] = [], aggregates: string[] = []) => ({
      uuid: provider.uuid,
      name: provider.name,
      parent_provider_uuid: parent,
      inventories,
      traits: [...traits].sort(),
      aggregates,
    });
    const compute = {
      VCPU: inventory({ total: 64, allocation_ratio: 4 }),
      MEMORY_MB: inventory({ total: 384 * 1024, reserved: 4096 }),
    };
    const disk: Inventories = node.aggregate ? {} : { DISK_GB: inventory({ total: 4000 }) };
    const traits = [...this.hostTraitsOf(node), ...(this.shape.rackTraits ? [`CUSTOM_RACK_${this.blockOf(node.index)}`] : [])];
    const root = record(node, null, node.cells.length > 0 ? disk : { ...compute, ...disk }, traits, node.aggregate ? [node.aggregate.uuid] : []);
    const providers: ProviderRecord[] = [root];
    for (const cell of node.cells) {
      const cellInventories = {
        VCPU: inventory({ total: 32, allocation_ratio: 4 }),
        MEMORY_MB: inventory({ total: 192 * 1024, reserved: 2048 }),
      };
      providers.push(record(cell, node.uuid, cellInventories, ['HW_NUMA_ROOT']));
      const nic = {
        SRIOV_NET_VF: inventory({ total: this.shape.vfsPerPf }),
        NET_BW_EGR_KILOBIT_PER_SEC: inventory({ total: 10_000_000, reserved: 1000, min_unit: 1000, step_size: 1000 }),
      };
      providers.push(record(cell.nic, cell.uuid, nic, ['HW_NIC_SRIOV']));
    }
    for (const pf of node.pfs) providers.push(record(pf, node.uuid, { SRIOV_NET_VF: inventory({ total: this.shape.vfsPerPf }) }, ['HW_NIC_SRIOV']));
    if (node.fpga) providers.push(record(node.fpga, node.uuid, { [FPGA_CLASS]: inventory({ total: 2 }) }));
    if (node.overCommitted) {
      // The operator lowered the CPU allocation ratio below what is already placed.
      const cpu = providers[node.cells.length > 0 ? 1 : 0]!;
      const held = this.instancesOf(node).reduce((sum, { allocations }) => sum + (allocations[cpu.uuid]?.resources.VCPU ?? 0), 0);
      const vcpu = cpu.inventories.VCPU!;
      cpu.inventories.VCPU = { ...vcpu, allocation_ratio: Math.max(0.1, Math.floor((held / vcpu.total) * 5) / 10) };
    }
    return providers;
  }

  /** The compute node's own traits. */
  hostTraitsOf(node: NodeModel): string[] {
    if (this.shape.hostTraits === 'libvirt') return HOST_TRAITS;
    const { seed } = this.shape;
    return [
      'COMPUTE_NODE',
      'HW_CPU_X86_SSE42',
      ...(derivedFraction(seed, 'avx2', node.index) < 0.5 ? ['HW_CPU_X86_AVX2'] : []),
      ...(derivedFraction(seed, 'multi-attach', node.index) < 0.3 ? ['COMPUTE_VOLUME_MULTI_ATTACH'] : []),
    ];
  }

  /** A block's sharing provider, when the block is an aggregate. */
  sharingProviderOf(aggregate: NonNullable<NodeModel['aggregate']>): ProviderRecord {
    return {
      uuid: aggregate.sharing.uuid,
      name: aggregate.sharing.name,
      parent_provider_uuid: null,
      inventories: { DISK_GB: inventory({ total: this.sharedDiskTotal() }) },
      traits: [SHARING_TRAIT],
      aggregates: [aggregate.uuid],
    };
  }

  /** The first `nodes` nodes as placement-admin's region model: what the region file and the items loaders take. */
  build(nodes: number): Region {
    const providers: ProviderRecord[] = [];
    const consumers: ConsumerRecord[] = [];
    const sharing = new Set<string>();
    for (let index = 0; index < nodes; index++) {
      const node = this.node(index);
      if (node.aggregate && !sharing.has(node.aggregate.sharing.uuid)) {
        sharing.add(node.aggregate.sharing.uuid);
        providers.push(this.sharingProviderOf(node.aggregate));
      }
      providers.push(...this.providersOf(node));
      consumers.push(...this.consumersOf(node));
    }
    const used = new Set(providers.flatMap((provider) => Object.keys(provider.inventories)));
    return {
      resourceClasses: this.customResourceClasses().filter((name) => used.has(name)),
      traits: this.customTraits(nodes),
      providers: parentsFirst(providers),
      consumers,
      providerAllocations: allocationsByProvider(consumers),
    };
  }
}
