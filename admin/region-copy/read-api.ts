/**
 * Reads a whole region from a Placement API (upstream or this service):
 * custom classes and traits, every provider with its inventories, traits,
 * aggregates and allocation list, then every consumer those lists name,
 * through GET /allocations/{consumer}, the only read that gives a
 * consumer's project, user (1.12) and type (1.38). The API has no way to
 * list consumers directly.
 */
import { INVENTORY_FIELDS } from '../../shared/domain/inventory.js';
import type { Inventories, Inventory, Resources } from '../../shared/domain/model.js';
import { UNKNOWN_CONSUMER_TYPE } from '../../shared/domain/model.js';
import { mapConcurrently } from '../pool.js';
import type { ProgressReporter } from '../progress.js';
import { expectStatus, type Endpoint } from '../endpoint.js';
import { isCustom, parentsFirst, type ConsumerRecord, type ProviderRecord, type Region } from './region.js';

export interface ReadOptions {
  /** Requests under way at once. */
  concurrency: number;
  /** Also read each provider's usages (verify compares them; a copy does not need them). */
  usages?: boolean;
  progress: ProgressReporter;
  /** Names the side in progress lines: "source", "target". */
  label: string;
}

type Body = Record<string, any>;

export async function readRegion(endpoint: Endpoint, options: ReadOptions): Promise<Region> {
  const { client, readVersion } = endpoint;
  const get = async (path: string): Promise<Body> => expectStatus(await client.get(path), [200], `GET ${client.baseUrl}${path}`).body as Body;

  const resourceClasses = ((await get('/resource_classes')).resource_classes as { name: string }[])
    .map(({ name }) => name)
    .filter(isCustom)
    .sort();
  const traits = ((await get('/traits?name=startswith:CUSTOM_')).traits as string[]).sort();

  const listed = (await get('/resource_providers')).resource_providers as Body[];
  const providers: ProviderRecord[] = [];
  const providerAllocations = new Map<string, Record<string, Resources>>();
  const usages = options.usages ? new Map<string, Resources>() : undefined;
  const providerPhase = options.progress(`${options.label}: resource providers`, listed.length);
  await mapConcurrently(listed, options.concurrency, async (listing) => {
    const uuid = listing.uuid as string;
    const path = `/resource_providers/${uuid}`;
    const inventories = inventoriesOf((await get(`${path}/inventories`)).inventories as Record<string, Inventory>);
    const providerTraits = ((await get(`${path}/traits`)).traits as string[]).sort();
    const aggregates = ((await get(`${path}/aggregates`)).aggregates as string[]).sort();
    const allocations = (await get(`${path}/allocations`)).allocations as Record<string, { resources: Resources }>;
    if (usages) usages.set(uuid, (await get(`${path}/usages`)).usages as Resources);
    providers.push({ uuid, name: listing.name, parent_provider_uuid: listing.parent_provider_uuid ?? null, inventories, traits: providerTraits, aggregates });
    providerAllocations.set(uuid, Object.fromEntries(Object.entries(allocations).map(([consumer, { resources }]) => [consumer, resources])));
    providerPhase.tick();
  });
  providerPhase.done();

  const consumerUuids = [...new Set([...providerAllocations.values()].flatMap((list) => Object.keys(list)))].sort();
  const consumerPhase = options.progress(`${options.label}: consumers`, consumerUuids.length);
  const consumers = await mapConcurrently(consumerUuids, options.concurrency, async (uuid): Promise<ConsumerRecord | undefined> => {
    const body = await get(`/allocations/${uuid}`);
    consumerPhase.tick();
    const allocations = body.allocations as Record<string, { resources: Resources }>;
    // Gone since its provider was read (the region was not frozen).
    if (Object.keys(allocations).length === 0) return undefined;
    const type = readVersion.isAtLeast('1.38') ? (body.consumer_type as string) : UNKNOWN_CONSUMER_TYPE;
    return {
      uuid,
      project_id: body.project_id,
      user_id: body.user_id,
      consumer_type: type === UNKNOWN_CONSUMER_TYPE ? null : type,
      allocations: Object.fromEntries(Object.entries(allocations).map(([provider, { resources }]) => [provider, resources])),
    };
  });
  consumerPhase.done();

  return {
    resourceClasses,
    traits,
    providers: parentsFirst(providers),
    consumers: consumers.filter((consumer) => consumer !== undefined),
    providerAllocations,
    usages,
  };
}

/** Only the inventory fields the model knows, in case an API adds more. */
function inventoriesOf(listed: Record<string, Inventory>): Inventories {
  return Object.fromEntries(
    Object.entries(listed).map(([resourceClass, inventory]) => [
      resourceClass,
      Object.fromEntries(INVENTORY_FIELDS.map((field) => [field, inventory[field]])) as unknown as Inventory,
    ]),
  );
}
