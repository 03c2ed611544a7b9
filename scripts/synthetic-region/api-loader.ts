/**
 * The synthetic region loaded into any Placement through its public API
 * only, grown and shrunk between benchmark runs: nodes 0..size-1 exist on
 * the target, with the instances the loader put on them and whatever the
 * benchmark's scheduler booted and deleted since.
 */
import type { ApiResponse, PlacementClient } from '../../admin/placement-client.js';
import { allocationsByProvider, type ProviderRecord } from '../../admin/region-copy/region.js';
import { widenedInventories } from '../../admin/region-copy/write-api.js';
import type { NodeModel, SyntheticRegion } from './region.js';

const SETUP_VERSION = '1.39';
const LOAD_CONCURRENCY = 4;
const CONSUMERS_PER_POST = 5;
const NODE_NAME = /^region-cn-(\d+)$/;

async function expectOk(what: string, response: Promise<ApiResponse>): Promise<ApiResponse> {
  const answer = await response;
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer;
}

/** Tries of a claim that upstream refused because another process changed its providers meanwhile (placement.concurrent_update). */
const CLAIM_TRIES = 5;

/** A claim sent again while upstream answers that it raced another process's (nova's report client retries it too). */
async function claimWithRetries(what: string, send: () => Promise<ApiResponse>): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send();
    const raced = answer.status === 409 && answer.body?.errors?.[0]?.code === 'placement.concurrent_update';
    if (!raced || attempt === CLAIM_TRIES) return expectOk(what, Promise.resolve(answer));
  }
}

async function inParallel<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
}

export class LoadedRegion {
  /** Nodes 0..size-1 exist on the target. */
  size = 0;
  /** Instance uuid to the index of the node holding it. */
  readonly instances = new Map<string, number>();

  constructor(
    readonly region: SyntheticRegion,
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
    for (const name of this.region.customResourceClasses()) await expectOk(`PUT ${name}`, this.api.put(`/resource_classes/${name}`, undefined));
    for (const name of this.region.customTraits(size)) await expectOk(`PUT ${name}`, this.api.put(`/traits/${name}`, undefined));
    const nodes = Array.from({ length: size - this.size }, (_, n) => this.region.node(this.size + n));
    const sharing = new Map(nodes.flatMap((node) => (node.aggregate ? [[node.aggregate.sharing.uuid, node.aggregate] as const] : [])));
    await inParallel([...sharing.values()], async (aggregate) => {
      if ((await this.api.get(`/resource_providers/${aggregate.sharing.uuid}`)).status !== 200)
        await this.createProvider(this.region.sharingProviderOf(aggregate));
    });
    await inParallel(nodes, (node) => this.createNode(node));
    this.size = size;
  }

  /** Creates the provider with its inventories (or, given, ones wide enough for allocations still to come), traits and aggregates. */
  private async createProvider(provider: ProviderRecord, inventories = provider.inventories): Promise<void> {
    const { uuid, name, parent_provider_uuid } = provider;
    const body = parent_provider_uuid === null ? { uuid, name } : { uuid, name, parent_provider_uuid };
    let generation = (await expectOk(`POST ${name}`, this.api.post('/resource_providers', body))).body.generation as number;
    const put = async (what: string, path: string, fields: object) => {
      const answer = await expectOk(
        `${what} of ${name}`,
        this.api.put(`/resource_providers/${uuid}/${path}`, { resource_provider_generation: generation, ...fields }),
      );
      generation = answer.body.resource_provider_generation as number;
    };
    if (Object.keys(inventories).length > 0) await put('inventories', 'inventories', { inventories });
    if (provider.traits.length > 0) await put('traits', 'traits', { traits: provider.traits });
    if (provider.aggregates.length > 0) await put('aggregates', 'aggregates', { aggregates: provider.aggregates });
  }

  private async createNode(node: NodeModel): Promise<void> {
    const instances = this.region.instancesOf(node);
    const providers = this.region.providersOf(node);
    // An over-committed provider holds more than its inventory now allows: it gets a wide one until its instances are placed.
    const allocations = allocationsByProvider(this.region.consumersOf(node));
    const widened = new Map(providers.map((provider) => [provider.uuid, widenedInventories(provider.inventories, allocations.get(provider.uuid) ?? {})]));
    for (const provider of providers) await this.createProvider(provider, widened.get(provider.uuid) ?? provider.inventories);
    // Consumers without a type are written at 1.37, the last microversion whose claims carry none.
    for (const [version, group] of [
      [SETUP_VERSION, instances.filter(({ consumerType }) => consumerType !== null)],
      ['1.37', instances.filter(({ consumerType }) => consumerType === null)],
    ] as const) {
      for (let start = 0; start < group.length; start += CONSUMERS_PER_POST) {
        const body = Object.fromEntries(
          group.slice(start, start + CONSUMERS_PER_POST).map(({ uuid, allocations, projectId, userId, consumerType }) => [
            uuid,
            {
              allocations,
              project_id: projectId,
              user_id: userId,
              consumer_generation: null,
              ...(consumerType === null ? {} : { consumer_type: consumerType }),
            },
          ]),
        );
        await claimWithRetries(`POST /allocations for ${node.name}`, () => this.api.post('/allocations', body, { version }));
      }
    }
    for (const provider of providers) {
      if (widened.get(provider.uuid) === undefined) continue;
      const { resource_provider_generation } = (await expectOk(`GET ${provider.name}`, this.api.get(`/resource_providers/${provider.uuid}/inventories`))).body;
      const inventories = { resource_provider_generation, inventories: provider.inventories };
      await expectOk(`inventories of ${provider.name}`, this.api.put(`/resource_providers/${provider.uuid}/inventories`, inventories));
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

  /** Deletes the highest nodes: their instances, their providers (children first), and a sharing provider left without nodes. */
  private async shrink(size: number): Promise<void> {
    const nodes = Array.from({ length: this.size - size }, (_, n) => this.region.node(size + n));
    await inParallel(nodes, async (node) => {
      for (const consumer of await this.consumersOn(node)) {
        const answer = await this.api.delete(`/allocations/${consumer}`);
        if (answer.status !== 204 && answer.status !== 404) throw new Error(`DELETE /allocations/${consumer}: ${answer.status} ${answer.text}`);
        this.instances.delete(consumer);
      }
      for (const provider of this.region.providersOf(node).reverse()) {
        await expectOk(`DELETE ${provider.name}`, this.api.delete(`/resource_providers/${provider.uuid}`));
      }
    });
    const kept = new Set(Array.from({ length: size }, (_, index) => this.region.node(index).aggregate?.sharing.uuid));
    const orphans = new Map(
      nodes.flatMap((node) => (node.aggregate && !kept.has(node.aggregate.sharing.uuid) ? [[node.aggregate.sharing.uuid, node.aggregate.sharing]] : [])),
    );
    for (const sharing of orphans.values()) await expectOk(`DELETE ${sharing.name}`, this.api.delete(`/resource_providers/${sharing.uuid}`));
    this.size = size;
  }
}
