/**
 * Writes a region into a Placement API, given what that API already holds
 * (read beforehand with readRegion): only what is missing is written, so a
 * second run after an interruption finishes the job without duplicating
 * anything. A target holding different data under the same uuid is reported
 * as a conflict and left alone, unless `overwrite` is set.
 *
 * Order: custom classes and traits; providers level by level (parents
 * before children), each created then given its inventories, traits and
 * aggregates; then every consumer with one PUT /allocations/{consumer}
 * (atomic: a consumer is either wholly copied or not at all).
 *
 * A provider whose allocations no longer fit its inventory (an allocation
 * ratio or a total lowered after the claims, which Placement allows with a
 * warning) could not take them back: it first gets an inventory wide enough
 * for them, and its real inventory once its consumers are written. A run
 * stopped in between finds the wide inventory and carries on.
 */
import { capacity, fitsConstraints } from '../../shared/domain/capacity.js';
import type { Inventories, Resources } from '../../shared/domain/model.js';
import { mapConcurrently } from '../pool.js';
import { backOff, type ApiResponse } from '../placement-client.js';
import type { ProgressReporter } from '../progress.js';
import { expectStatus, type Endpoint } from '../endpoint.js';
import { UNTYPED_WRITE_VERSION, WRITE_VERSION } from './versions.js';
import {
  providerLevels,
  consumerDifference,
  sameAllocations,
  sameConsumer,
  sameInventories,
  sameMembers,
  sameProviderFields,
  type ConsumerRecord,
  type ProviderRecord,
  type Region,
} from './region.js';

export interface WriteOptions {
  concurrency: number;
  /** Replace what the target holds differently instead of reporting it. */
  overwrite: boolean;
  /** Decide and report what would be written; write nothing. */
  dryRun: boolean;
  progress: ProgressReporter;
  /** Told of each conflict and failed write as it happens. */
  report: (line: string) => void;
  /** Called as each write's answer arrives, with the number answered so far. */
  onWrite?: (answered: number) => void;
}

export interface WriteSummary {
  /** Write requests sent (or, in a dry run, that would have been). */
  writes: number;
  created: { resourceClasses: number; traits: number; providers: number; consumers: number };
  /** Providers and consumers already in the target as in the source. */
  unchanged: { providers: number; consumers: number };
  conflicts: number;
  failures: number;
}

type Body = Record<string, any>;

/**
 * Claims of several consumers on one provider (a sharing provider takes
 * most of them) can outrun the service's own retries: 409
 * placement.concurrent_update, nothing written. Like nova's report client,
 * the copy sends such a claim again, a few times, waiting as the service's
 * own retry policy waits.
 */
const CLAIM_RETRIES = 5;
const CLAIM_BACK_OFF = { baseMs: 25, maxMs: 400 };
const isContention = (response: ApiResponse) =>
  response.status === 409 && response.body?.errors?.[0]?.code === 'placement.concurrent_update' && !/consumer generation conflict/.test(response.text);

export async function writeRegion(source: Region, target: Endpoint, current: Region, options: WriteOptions): Promise<WriteSummary> {
  const summary: WriteSummary = {
    writes: 0,
    created: { resourceClasses: 0, traits: 0, providers: 0, consumers: 0 },
    unchanged: { providers: 0, consumers: 0 },
    conflicts: 0,
    failures: 0,
  };
  const { client } = target;
  const conflict = (line: string) => {
    summary.conflicts++;
    options.report(`conflict: ${line} (kept the target's; --overwrite replaces it)`);
  };

  let answered = 0;
  /** Sends one write; undefined in a dry run or when it got no answer (reported). */
  const send = async (method: 'PUT' | 'POST', path: string, json: unknown, version: string): Promise<ApiResponse | undefined> => {
    summary.writes++;
    if (options.dryRun) return undefined;
    try {
      return await client.request(method, path, { json, version });
    } catch (error) {
      summary.failures++;
      options.report(`failed: ${method} ${path}: ${(error as Error).message} (run again to settle it)`);
      return undefined;
    } finally {
      options.onWrite?.(++answered);
    }
  };
  /** The body of an accepted answer; undefined when there was none or it was refused (reported). */
  const accepted = (response: ApiResponse | undefined, expected: number[], what: string): Body | undefined => {
    if (response === undefined) return undefined;
    try {
      return (expectStatus(response, expected, what).body as Body | undefined) ?? {};
    } catch (error) {
      summary.failures++;
      options.report(`failed: ${(error as Error).message}`);
      return undefined;
    }
  };
  const write = async (method: 'PUT' | 'POST', path: string, json: unknown, expected: number[]) =>
    accepted(await send(method, path, json, WRITE_VERSION), expected, `${method} ${path}`);

  const catalogPhase = options.progress('target: custom classes and traits', source.resourceClasses.length + source.traits.length);
  for (const [names, existing, path, counter] of [
    [source.resourceClasses, current.resourceClasses, '/resource_classes', 'resourceClasses'],
    [source.traits, current.traits, '/traits', 'traits'],
  ] as const) {
    const known = new Set(existing);
    await mapConcurrently(names, options.concurrency, async (name) => {
      if (!known.has(name) && (await write('PUT', `${path}/${name}`, undefined, [201, 204]))) summary.created[counter]++;
      catalogPhase.tick();
    });
  }
  catalogPhase.done();

  const currentProviders = new Map(current.providers.map((provider) => [provider.uuid, provider]));
  const widened = new Map<string, ProviderRecord>();
  const providerPhase = options.progress('target: resource providers', source.providers.length);
  for (const level of providerLevels(source.providers)) {
    await mapConcurrently(level, options.concurrency, async (provider) => {
      const before = currentProviders.get(provider.uuid);
      const sourceAllocations = source.providerAllocations.get(provider.uuid) ?? {};
      const wide = widenedInventories(provider.inventories, sourceAllocations);
      // Wide until the provider holds all its source allocations.
      const wanted = wide && !sameAllocations(current.providerAllocations.get(provider.uuid) ?? {}, sourceAllocations) ? wide : provider.inventories;
      if (wanted === wide) widened.set(provider.uuid, provider);
      if (
        before !== undefined &&
        sameProviderFields(provider, before) &&
        sameInventories(wanted, before.inventories) &&
        sameMembers(provider.traits, before.traits) &&
        sameMembers(provider.aggregates, before.aggregates)
      ) {
        summary.unchanged.providers++;
      } else {
        await copyProvider(provider, before, wanted, wide);
      }
      providerPhase.tick();
    });
  }
  providerPhase.done();

  /** Creates or completes one provider; each write returns the generation the next one needs. */
  async function copyProvider(
    provider: ProviderRecord,
    before: ProviderRecord | undefined,
    inventories: Inventories,
    wide: Inventories | undefined,
  ): Promise<void> {
    const path = `/resource_providers/${provider.uuid}`;
    let generation: number | undefined;
    const fields = { name: provider.name, parent_provider_uuid: provider.parent_provider_uuid };
    if (before === undefined) {
      const created = await write('POST', '/resource_providers', { uuid: provider.uuid, ...fields }, [200]);
      if (!options.dryRun && created === undefined) return;
      summary.created.providers++;
      generation = created?.generation;
    } else if (!sameProviderFields(provider, before)) {
      if (!options.overwrite)
        conflict(
          `resource provider ${provider.uuid}: the target has name "${before.name}" and parent ${before.parent_provider_uuid}, the source "${provider.name}" and ${provider.parent_provider_uuid}`,
        );
      else generation = (await write('PUT', path, fields, [200]))?.generation;
    }
    const currentGeneration = async () =>
      generation ?? (options.dryRun ? 0 : (expectStatus(await client.get(path), [200], `GET ${path}`).body as Body).generation);

    const ours = [provider.inventories, ...(wide ? [wide] : [])];
    const had = before?.inventories ?? {};
    if (!sameInventories(had, inventories)) {
      const owned = Object.keys(had).length === 0 || ours.some((mine) => sameInventories(had, mine));
      if (owned || options.overwrite) {
        const json = { resource_provider_generation: await currentGeneration(), inventories };
        generation = (await write('PUT', `${path}/inventories`, json, [200]))?.resource_provider_generation;
      } else conflict(`resource provider ${provider.uuid} (${provider.name}): inventories differ`);
    }
    for (const aspect of ['traits', 'aggregates'] as const) {
      const had = before?.[aspect] ?? [];
      if (sameMembers(had, provider[aspect])) continue;
      if (had.length === 0 || options.overwrite) {
        const json = { resource_provider_generation: await currentGeneration(), [aspect]: provider[aspect] };
        generation = (await write('PUT', `${path}/${aspect}`, json, [200]))?.resource_provider_generation;
      } else
        conflict(
          `resource provider ${provider.uuid} (${provider.name}): ${aspect} differ: target [${had.join(', ')}], source [${provider[aspect].join(', ')}]`,
        );
    }
  }

  const currentConsumers = new Map(current.consumers.map((consumer) => [consumer.uuid, consumer]));
  const consumerPhase = options.progress('target: consumers', source.consumers.length);
  await mapConcurrently(source.consumers, options.concurrency, async (consumer) => {
    const before = currentConsumers.get(consumer.uuid);
    if (before !== undefined && sameConsumer(consumer, before)) summary.unchanged.consumers++;
    else if (before !== undefined && !options.overwrite) conflict(`consumer ${consumer.uuid}: ${consumerDifference(consumer, before)}`);
    else if (await copyConsumer(consumer, before !== undefined)) summary.created.consumers++;
    consumerPhase.tick();
  });
  consumerPhase.done();

  async function copyConsumer(consumer: ConsumerRecord, exists: boolean): Promise<boolean> {
    const path = `/allocations/${consumer.uuid}`;
    const generation = exists ? (expectStatus(await client.get(path), [200], `GET ${path}`).body as Body).consumer_generation : null;
    const json: Body = {
      allocations: Object.fromEntries(Object.entries(consumer.allocations).map(([provider, resources]) => [provider, { resources }])),
      project_id: consumer.project_id,
      user_id: consumer.user_id,
      consumer_generation: generation,
    };
    if (consumer.consumer_type !== null) json.consumer_type = consumer.consumer_type;
    const version = consumer.consumer_type === null ? UNTYPED_WRITE_VERSION : WRITE_VERSION;
    let response = await send('PUT', path, json, version);
    for (let retry = 0; retry < CLAIM_RETRIES && response !== undefined && isContention(response); retry++) {
      await backOff(retry, CLAIM_BACK_OFF);
      response = await send('PUT', path, json, version);
    }
    // Upstream can keep a consumer without allocations (left by a failed claim), which no read shows: its generation is in the refusal.
    const leftover = !exists && response?.status === 409 ? /consumer generation conflict - expected (\d+) but got None/.exec(response.text) : null;
    if (leftover) response = await send('PUT', path, { ...json, consumer_generation: Number(leftover[1]) }, version);
    return accepted(response, [204], `PUT ${path}`) !== undefined || options.dryRun;
  }

  const restorePhase = options.progress('target: real inventories of widened providers', widened.size);
  await mapConcurrently([...widened.values()], options.concurrency, async (provider) => {
    const path = `/resource_providers/${provider.uuid}`;
    const generation = options.dryRun ? 0 : (expectStatus(await client.get(path), [200], `GET ${path}`).body as Body).generation;
    await write('PUT', `${path}/inventories`, { resource_provider_generation: generation, inventories: provider.inventories }, [200]);
    restorePhase.tick();
  });
  restorePhase.done();
  return summary;
}

/**
 * Inventories wide enough for the allocations a provider holds, or undefined
 * when the real ones already take them: per class that does not, capacity
 * raised to the usage and unit constraints loosened to admit every amount.
 */
export function widenedInventories(inventories: Inventories, allocations: Record<string, Resources>): Inventories | undefined {
  const amounts = new Map<string, number[]>();
  for (const resources of Object.values(allocations)) {
    for (const [resourceClass, amount] of Object.entries(resources)) amounts.set(resourceClass, [...(amounts.get(resourceClass) ?? []), amount]);
  }
  let widened: Inventories | undefined;
  for (const [resourceClass, held] of amounts) {
    const inventory = inventories[resourceClass];
    if (inventory === undefined) continue;
    const used = held.reduce((sum, amount) => sum + amount, 0);
    if (capacity(inventory) >= used && held.every((amount) => fitsConstraints(inventory, amount))) continue;
    // One unit more than the ratio strictly needs keeps floating-point rounding on the safe side.
    const total = Math.max(inventory.total, inventory.reserved + Math.ceil(used / inventory.allocation_ratio) + 1);
    widened ??= { ...inventories };
    widened[resourceClass] = { ...inventory, total, min_unit: 1, step_size: 1, max_unit: Math.max(inventory.max_unit, ...held) };
  }
  return widened;
}
