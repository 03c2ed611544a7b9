/**
 * Compares two regions (each read through its API, or a region file) and
 * lists every difference: custom classes and traits; per provider its name
 * and parent, inventories, traits, aggregates, usages and allocation list;
 * per consumer its allocations, project, user and type. Generations and
 * timestamps are not compared: a copy cannot keep them.
 *
 * "Checked" counts the comparisons: one per custom class and trait, seven
 * per provider (name, parent, inventories, traits, aggregates, allocation
 * list, usages; six when neither side's usages were read), one per
 * consumer, and one per provider or consumer found on one side only.
 */
import type { Resources } from '../../shared/domain/model.js';
import {
  consumerDifference,
  sameAllocations,
  sameConsumer,
  sameInventories,
  sameMembers,
  sameResources,
  usagesFromAllocations,
  type ProviderRecord,
  type Region,
} from './region.js';

export interface Comparison {
  checked: number;
  differences: string[];
}

export const summaryLine = ({ checked, differences }: Comparison): string => `${checked} checked, ${differences.length} differences`;

export function compareRegions(source: Region, target: Region): Comparison {
  const differences: string[] = [];
  let checked = 0;

  for (const [kind, a, b] of [
    ['resource class', source.resourceClasses, target.resourceClasses],
    ['trait', source.traits, target.traits],
  ] as const) {
    const inTarget = new Set(b);
    const inSource = new Set(a);
    for (const name of new Set([...a, ...b])) {
      checked++;
      if (!inTarget.has(name)) differences.push(`${kind} ${name}: only in the source`);
      else if (!inSource.has(name)) differences.push(`${kind} ${name}: only in the target`);
    }
  }

  const targetProviders = new Map(target.providers.map((provider) => [provider.uuid, provider]));
  const sourceUuids = new Set(source.providers.map((provider) => provider.uuid));
  for (const provider of source.providers) {
    const other = targetProviders.get(provider.uuid);
    const label = `resource provider ${provider.uuid} (${provider.name})`;
    if (other === undefined) {
      checked++;
      differences.push(`${label}: only in the source`);
      continue;
    }
    const compare = (aspect: string, same: boolean, a: unknown, b: unknown) => {
      checked++;
      if (!same) differences.push(`${label}: ${aspect}: source ${JSON.stringify(a)}, target ${JSON.stringify(b)}`);
    };
    compare('name', provider.name === other.name, provider.name, other.name);
    compare('parent', provider.parent_provider_uuid === other.parent_provider_uuid, provider.parent_provider_uuid, other.parent_provider_uuid);
    compare('inventories', sameInventories(provider.inventories, other.inventories), provider.inventories, other.inventories);
    compare('traits', sameMembers(provider.traits, other.traits), provider.traits, other.traits);
    compare('aggregates', sameMembers(provider.aggregates, other.aggregates), provider.aggregates, other.aggregates);
    const [ours, theirs] = [allocationList(source, provider.uuid), allocationList(target, provider.uuid)];
    compare('allocations', sameAllocations(ours, theirs), ours, theirs);
    if (source.usages || target.usages) {
      const [a, b] = [usagesOf(source, provider), usagesOf(target, other)];
      compare('usages', sameResources(a, b), a, b);
    }
  }
  for (const provider of target.providers) {
    if (sourceUuids.has(provider.uuid)) continue;
    checked++;
    differences.push(`resource provider ${provider.uuid} (${provider.name}): only in the target`);
  }

  const targetConsumers = new Map(target.consumers.map((consumer) => [consumer.uuid, consumer]));
  const sourceConsumers = new Set(source.consumers.map((consumer) => consumer.uuid));
  for (const consumer of source.consumers) {
    checked++;
    const other = targetConsumers.get(consumer.uuid);
    if (other === undefined) differences.push(`consumer ${consumer.uuid}: only in the source`);
    else if (!sameConsumer(consumer, other)) differences.push(`consumer ${consumer.uuid}: source vs target: ${consumerDifference(consumer, other)}`);
  }
  for (const consumer of target.consumers) {
    if (sourceConsumers.has(consumer.uuid)) continue;
    checked++;
    differences.push(`consumer ${consumer.uuid}: only in the target`);
  }
  return { checked, differences };
}

const allocationList = (region: Region, uuid: string): Record<string, Resources> => region.providerAllocations.get(uuid) ?? {};

/** What the provider reported, or for a region file what its allocations add up to. */
const usagesOf = (region: Region, provider: ProviderRecord): Resources =>
  region.usages?.get(provider.uuid) ?? usagesFromAllocations(provider, allocationList(region, provider.uuid));
