/**
 * The region the benchmark simulates, and its loading through the API.
 *
 * Node i is the same whatever the region's size (uuids are derived from the
 * seed and i), so a region grows by creating nodes N..M and shrinks by
 * deleting its highest nodes, on any Placement, through its public API only.
 *
 * - Every node is a compute node provider with VCPU (64, ratio 4), MEMORY_MB
 *   (384 GiB) and the ~60 traits a libvirt host reports.
 * - A share of the nodes (`nestedShare`) has two PF children with
 *   SRIOV_NET_VF; every third instance on them holds a VF.
 * - Nodes come in blocks of `aggregateSize`; a share of the blocks
 *   (`aggregatedShare`) is a host aggregate whose disk is a sharing provider
 *   (DISK_GB, MISC_SHARES_VIA_AGGREGATE) instead of the nodes' own.
 * - Each node holds `instancesPerNode` instances (2 VCPU, 4 GiB, 20 GB disk).
 */
import { createHash } from 'node:crypto';
import { SHARING_TRAIT } from '../../shared/domain/standard-catalog.js';
import type { ApiResponse, PlacementClient } from '../lib/placement-client.js';

export interface RegionShape {
  seed: number;
  instancesPerNode: number;
  nestedShare: number;
  pfsPerNode: number;
  aggregatedShare: number;
  aggregateSize: number;
}

export const DEFAULT_SHAPE: RegionShape = { seed: 42, instancesPerNode: 30, nestedShare: 0.2, pfsPerNode: 2, aggregatedShare: 0.5, aggregateSize: 20 };

export const INSTANCE_RESOURCES = { VCPU: 2, MEMORY_MB: 4096, DISK_GB: 20 } as const;
export const PROJECT_ID = 'bench-region-project';
export const USER_ID = 'bench-region-user';

/** What the libvirt driver reports for an x86-64 KVM host (names of os-traits 3.9). */
export const HOST_TRAITS = [
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
  /** The host aggregate and its sharing provider, when the node's block is one. */
  aggregate?: { uuid: string; sharing: ProviderModel };
}

/** A consumer's allocations: provider uuid to resources. */
export type Allocations = Record<string, { resources: Record<string, number> }>;

export interface InstanceModel {
  uuid: string;
  allocations: Allocations;
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

export class Region {
  constructor(readonly shape: RegionShape) {}

  node(index: number): NodeModel {
    const { seed, nestedShare, pfsPerNode, aggregatedShare, aggregateSize } = this.shape;
    const uuid = derivedUuid(seed, 'node', index);
    const nested = derivedFraction(seed, 'nested', index) < nestedShare;
    const pfs = nested ? Array.from({ length: pfsPerNode }, (_, n) => ({ uuid: derivedUuid(seed, 'pf', index, n), name: `region-cn-${index}-pf${n}` })) : [];
    const block = Math.floor(index / aggregateSize);
    const aggregated = derivedFraction(seed, 'aggregate', block) < aggregatedShare;
    const aggregate = aggregated
      ? { uuid: derivedUuid(seed, 'aggregate', block), sharing: { uuid: derivedUuid(seed, 'sharing', block), name: `region-shared-disk-${block}` } }
      : undefined;
    return { index, uuid, name: `region-cn-${index}`, pfs, aggregate };
  }

  /** Every provider uuid of the node's own tree. */
  treeOf(node: NodeModel): string[] {
    return [node.uuid, ...node.pfs.map((pf) => pf.uuid)];
  }

  /** The allocations of an instance placed on the node by the loader (the k-th) or by a boot. */
  allocationsOn(node: NodeModel, k: number): Allocations {
    const allocations: Allocations = { [node.uuid]: { resources: { VCPU: INSTANCE_RESOURCES.VCPU, MEMORY_MB: INSTANCE_RESOURCES.MEMORY_MB } } };
    if (node.aggregate) allocations[node.aggregate.sharing.uuid] = { resources: { DISK_GB: INSTANCE_RESOURCES.DISK_GB } };
    else allocations[node.uuid]!.resources.DISK_GB = INSTANCE_RESOURCES.DISK_GB;
    if (node.pfs.length > 0 && k % 3 === 0) allocations[node.pfs[(k / 3) % node.pfs.length]!.uuid] = { resources: { SRIOV_NET_VF: 1 } };
    return allocations;
  }

  /** What the loader stocks a node with: disk of its own unless its aggregate shares one. */
  inventoriesOf(node: NodeModel): Record<string, { total: number; allocation_ratio?: number; reserved?: number }> {
    return {
      VCPU: { total: 64, allocation_ratio: 4 },
      MEMORY_MB: { total: 384 * 1024, reserved: 4096 },
      ...(node.aggregate ? {} : { DISK_GB: { total: 4000 } }),
    };
  }

  /** A sharing provider's disk: what its nodes would have had. */
  sharedDiskTotal(): number {
    return 4000 * this.shape.aggregateSize;
  }

  /** A PF's virtual functions. */
  readonly vfsPerPf = 16;

  /** The instances the loader puts on a node. */
  instancesOf(node: NodeModel): InstanceModel[] {
    return Array.from({ length: this.shape.instancesPerNode }, (_, k) => ({
      uuid: derivedUuid(this.shape.seed, 'instance', node.index, k),
      allocations: this.allocationsOn(node, k),
    }));
  }
}

// ---------------------------------------------------------------- loading

const SETUP_VERSION = '1.39';
const LOAD_CONCURRENCY = 4;
const CONSUMERS_PER_POST = 5;
const NODE_NAME = /^region-cn-(\d+)$/;

async function expectOk(what: string, response: Promise<ApiResponse>): Promise<ApiResponse> {
  const answer = await response;
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer;
}

async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
}

/**
 * One target's copy of the region: which nodes exist there and which
 * instances they hold (the loaded ones, then whatever the simulated
 * scheduler booted and deleted).
 */
export class LoadedRegion {
  /** Nodes 0..size-1 exist on the target. */
  size = 0;
  /** Instance uuid to the index of the node holding it. */
  readonly instances = new Map<string, number>();

  constructor(
    readonly region: Region,
    private readonly client: PlacementClient,
  ) {}

  private get api() {
    // Loading is not measured: it may wait as long as a busy service needs.
    return this.client.with({ version: SETUP_VERSION, timeoutMs: 300_000 });
  }

  /** Finds how many of the region's nodes the target already has (a benchmark run against a reused server). */
  async discover(): Promise<void> {
    const listed = await expectOk('GET /resource_providers', this.api.get('/resource_providers'));
    const indexes = (listed.body.resource_providers as { name: string }[]).flatMap((provider) => {
      const match = NODE_NAME.exec(provider.name);
      return match ? [Number(match[1])] : [];
    });
    this.size = indexes.length === 0 ? 0 : Math.max(...indexes) + 1;
    for (let index = 0; index < this.size; index++) {
      const node = this.region.node(index);
      for (const uuid of await this.consumersOn(node)) this.instances.set(uuid, index);
    }
  }

  async resize(size: number): Promise<void> {
    if (size > this.size) await this.grow(size);
    else if (size < this.size) await this.shrink(size);
  }

  private async grow(size: number): Promise<void> {
    const nodes = Array.from({ length: size - this.size }, (_, n) => this.region.node(this.size + n));
    const sharing = new Map(nodes.flatMap((node) => (node.aggregate ? [[node.aggregate.sharing.uuid, node.aggregate] as const] : [])));
    await inParallel([...sharing.values()], (aggregate) => this.ensureSharingProvider(aggregate));
    await inParallel(nodes, (node) => this.createNode(node));
    this.size = size;
  }

  private async ensureSharingProvider(aggregate: NonNullable<NodeModel['aggregate']>): Promise<void> {
    const { uuid, name } = aggregate.sharing;
    if ((await this.api.get(`/resource_providers/${uuid}`)).status === 200) return;
    await expectOk(`POST ${name}`, this.api.post('/resource_providers', { uuid, name }));
    const disk = { DISK_GB: { total: this.region.sharedDiskTotal() } };
    await expectOk(`inventories of ${name}`, this.api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: disk }));
    await expectOk(`traits of ${name}`, this.api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits: [SHARING_TRAIT] }));
    const aggregates = { resource_provider_generation: 2, aggregates: [aggregate.uuid] };
    await expectOk(`aggregates of ${name}`, this.api.put(`/resource_providers/${uuid}/aggregates`, aggregates));
  }

  private async createNode(node: NodeModel): Promise<void> {
    const { uuid, name } = node;
    await expectOk(`POST ${name}`, this.api.post('/resource_providers', { uuid, name }));
    const inventories = this.region.inventoriesOf(node);
    await expectOk(`inventories of ${name}`, this.api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories }));
    await expectOk(`traits of ${name}`, this.api.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits: HOST_TRAITS }));
    if (node.aggregate) {
      const aggregates = { resource_provider_generation: 2, aggregates: [node.aggregate.uuid] };
      await expectOk(`aggregates of ${name}`, this.api.put(`/resource_providers/${uuid}/aggregates`, aggregates));
    }
    for (const pf of node.pfs) {
      await expectOk(`POST ${pf.name}`, this.api.post('/resource_providers', { ...pf, parent_provider_uuid: uuid }));
      const vfs = { resource_provider_generation: 0, inventories: { SRIOV_NET_VF: { total: this.region.vfsPerPf } } };
      await expectOk(`inventories of ${pf.name}`, this.api.put(`/resource_providers/${pf.uuid}/inventories`, vfs));
    }
    const instances = this.region.instancesOf(node);
    for (let start = 0; start < instances.length; start += CONSUMERS_PER_POST) {
      const body = Object.fromEntries(
        instances
          .slice(start, start + CONSUMERS_PER_POST)
          .map(({ uuid: consumer, allocations }) => [
            consumer,
            { allocations, project_id: PROJECT_ID, user_id: USER_ID, consumer_generation: null, consumer_type: 'INSTANCE' },
          ]),
      );
      await expectOk(`POST /allocations for ${name}`, this.api.post('/allocations', body));
    }
    for (const instance of instances) this.instances.set(instance.uuid, node.index);
  }

  /** The consumers holding anything in the node's tree, as the target reports them. */
  private async consumersOn(node: NodeModel): Promise<string[]> {
    const consumers = new Set<string>();
    for (const uuid of this.region.treeOf(node)) {
      const answer = await this.api.get(`/resource_providers/${uuid}/allocations`);
      if (answer.status === 404) continue;
      if (answer.status !== 200) throw new Error(`allocations of ${uuid}: ${answer.status} ${answer.text.slice(0, 300)}`);
      for (const consumer of Object.keys(answer.body.allocations)) consumers.add(consumer);
    }
    return [...consumers];
  }

  /** Deletes the highest nodes: their instances, their PFs, the node, and a sharing provider left without nodes. */
  private async shrink(size: number): Promise<void> {
    const nodes = Array.from({ length: this.size - size }, (_, n) => this.region.node(size + n));
    await inParallel(nodes, async (node) => {
      for (const consumer of await this.consumersOn(node)) {
        const answer = await this.api.delete(`/allocations/${consumer}`);
        if (answer.status !== 204 && answer.status !== 404) throw new Error(`DELETE /allocations/${consumer}: ${answer.status} ${answer.text}`);
        this.instances.delete(consumer);
      }
      for (const pf of node.pfs) await expectOk(`DELETE ${pf.name}`, this.api.delete(`/resource_providers/${pf.uuid}`));
      await expectOk(`DELETE ${node.name}`, this.api.delete(`/resource_providers/${node.uuid}`));
    });
    const kept = new Set(Array.from({ length: size }, (_, index) => this.region.node(index).aggregate?.sharing.uuid));
    const orphans = new Map(
      nodes.flatMap((node) => (node.aggregate && !kept.has(node.aggregate.sharing.uuid) ? [[node.aggregate.sharing.uuid, node.aggregate.sharing]] : [])),
    );
    for (const sharing of orphans.values()) await expectOk(`DELETE ${sharing.name}`, this.api.delete(`/resource_providers/${sharing.uuid}`));
    this.size = size;
  }
}
