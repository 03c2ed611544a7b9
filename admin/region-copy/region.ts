/**
 * The Placement data of one region as migrate, export, import and verify see
 * it: everything a client can read from a Placement API and write back.
 * Export reads this model, import and migrate write it, verify reads two and
 * compares them. Generations and timestamps are not part of it: no client
 * can set them.
 */
import type { Inventories, Resources } from '../../shared/domain/model.js';

export interface ProviderRecord {
  uuid: string;
  name: string;
  parent_provider_uuid: string | null;
  /** Every field of every inventory (total, reserved, min_unit, max_unit, step_size, allocation_ratio). */
  inventories: Inventories;
  /** Sorted. */
  traits: string[];
  /** Sorted. */
  aggregates: string[];
}

export interface ConsumerRecord {
  uuid: string;
  project_id: string;
  user_id: string;
  /** null: the consumer has no type (upstream reports it as `unknown` from 1.38). */
  consumer_type: string | null;
  /** Provider uuid to the resources held there. */
  allocations: Record<string, Resources>;
}

export interface Region {
  /** Custom resource classes (the standard ones come with every Placement). */
  resourceClasses: string[];
  /** Custom traits. */
  traits: string[];
  /** Parents before their children. */
  providers: ProviderRecord[];
  consumers: ConsumerRecord[];
  /** What each provider lists as its allocations, by consumer (from the API, or derived from the consumers). */
  providerAllocations: Map<string, Record<string, Resources>>;
  /** What each provider reports as its usages, when they were read (verify reads them). */
  usages?: Map<string, Resources>;
}

export const isCustom = (name: string): boolean => name.startsWith('CUSTOM_');

/**
 * The providers grouped by depth in their trees (roots first): every
 * provider's parent is in an earlier level. Within a level, by name.
 */
export function providerLevels(providers: ProviderRecord[]): ProviderRecord[][] {
  const byUuid = new Map(providers.map((provider) => [provider.uuid, provider]));
  const depths = new Map<string, number>();
  const depthOf = (provider: ProviderRecord, seen = new Set<string>()): number => {
    const known = depths.get(provider.uuid);
    if (known !== undefined) return known;
    if (seen.has(provider.uuid)) throw new Error(`resource provider ${provider.uuid} is its own ancestor`);
    seen.add(provider.uuid);
    let depth = 0;
    if (provider.parent_provider_uuid !== null) {
      const parent = byUuid.get(provider.parent_provider_uuid);
      if (parent === undefined) throw new Error(`resource provider ${provider.uuid} names parent ${provider.parent_provider_uuid}, which is not in the region`);
      depth = depthOf(parent, seen) + 1;
    }
    depths.set(provider.uuid, depth);
    return depth;
  };
  const levels: ProviderRecord[][] = [];
  const ordered = [...providers].sort((a, b) => compareText(a.name, b.name) || compareText(a.uuid, b.uuid));
  for (const provider of ordered) (levels[depthOf(provider)] ??= []).push(provider);
  return levels;
}

/** Providers ordered so that every parent comes before its children. */
export const parentsFirst = (providers: ProviderRecord[]): ProviderRecord[] => providerLevels(providers).flat();

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Each provider's allocations by consumer, as the consumers' own allocations say. */
export function allocationsByProvider(consumers: ConsumerRecord[]): Map<string, Record<string, Resources>> {
  const byProvider = new Map<string, Record<string, Resources>>();
  for (const consumer of consumers) {
    for (const [provider, resources] of Object.entries(consumer.allocations)) {
      const list = byProvider.get(provider) ?? {};
      list[consumer.uuid] = resources;
      byProvider.set(provider, list);
    }
  }
  return byProvider;
}

/** A provider's usage per class from its allocation list: what GET .../usages answers (0 for classes nobody holds). */
export function usagesFromAllocations(provider: ProviderRecord, allocations: Record<string, Resources> = {}): Resources {
  const usages: Resources = Object.fromEntries(Object.keys(provider.inventories).map((resourceClass) => [resourceClass, 0]));
  for (const resources of Object.values(allocations)) {
    for (const [resourceClass, amount] of Object.entries(resources)) usages[resourceClass] = (usages[resourceClass] ?? 0) + amount;
  }
  return usages;
}

// ---------------------------------------------------------------- equality, shared by the copy's plan and verify

export function sameInventories(a: Inventories, b: Inventories): boolean {
  const classes = Object.keys(a);
  if (classes.length !== Object.keys(b).length) return false;
  return classes.every((resourceClass) => {
    const [x, y] = [a[resourceClass]!, b[resourceClass]];
    return (
      y !== undefined &&
      x.total === y.total &&
      x.reserved === y.reserved &&
      x.min_unit === y.min_unit &&
      x.max_unit === y.max_unit &&
      x.step_size === y.step_size &&
      x.allocation_ratio === y.allocation_ratio
    );
  });
}

/** Two lists with the same members, in any order. */
export function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((member) => set.has(member));
}

/** Amounts per class, a class at 0 counting as absent. */
export function sameResources(a: Resources = {}, b: Resources = {}): boolean {
  const nonZero = (resources: Resources) => Object.entries(resources).filter(([, amount]) => amount !== 0);
  const x = nonZero(a);
  return x.length === nonZero(b).length && x.every(([resourceClass, amount]) => b[resourceClass] === amount);
}

/** Allocations keyed by provider (a consumer's) or by consumer (a provider's list). */
export function sameAllocations(a: Record<string, Resources>, b: Record<string, Resources>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] !== undefined && sameResources(a[key], b[key]));
}

export function sameProviderFields(a: ProviderRecord, b: ProviderRecord): boolean {
  return a.name === b.name && a.parent_provider_uuid === b.parent_provider_uuid;
}

export function sameConsumer(a: ConsumerRecord, b: ConsumerRecord): boolean {
  return a.project_id === b.project_id && a.user_id === b.user_id && a.consumer_type === b.consumer_type && sameAllocations(a.allocations, b.allocations);
}

/** What differs between two versions of a consumer, for a conflict line. */
export function consumerDifference(a: ConsumerRecord, b: ConsumerRecord): string {
  const parts: string[] = [];
  for (const field of ['project_id', 'user_id', 'consumer_type'] as const) {
    if (a[field] !== b[field]) parts.push(`${field} ${JSON.stringify(a[field])} vs ${JSON.stringify(b[field])}`);
  }
  if (!sameAllocations(a.allocations, b.allocations)) parts.push(`allocations ${JSON.stringify(a.allocations)} vs ${JSON.stringify(b.allocations)}`);
  return parts.join('; ');
}
