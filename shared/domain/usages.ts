/**
 * Usages: what consumers hold, per resource class, on one provider or summed
 * over the consumers of a project (optionally of one user), and from
 * microversion 1.38 grouped by consumer type. Pure.
 */
import { entryOf, UNKNOWN_CONSUMER_TYPE, type Consumer, type Provider, type Resources } from './model.js';
import { sortResourceClasses } from './inventory.js';

/** The `consumer_type` filter value that puts every consumer in one group. */
const ALL_CONSUMER_TYPES = 'all';

/** One provider's usage: every class it has inventory of, 0 when nobody holds any. */
export function providerUsages(provider: Pick<Provider, 'inventories' | 'usages'>): Resources {
  return Object.fromEntries(
    sortResourceClasses(Object.keys(provider.inventories)).map((resourceClass) => [resourceClass, entryOf(provider.usages, resourceClass) ?? 0]),
  );
}

/** What one consumer holds per class, summed over its providers. */
export function consumerTotals(consumer: Pick<Consumer, 'allocations'>): Resources {
  const totals: Resources = {};
  for (const resources of Object.values(consumer.allocations)) {
    for (const [resourceClass, amount] of Object.entries(resources)) {
      if (amount > 0) totals[resourceClass] = (totals[resourceClass] ?? 0) + amount;
    }
  }
  return totals;
}

function addInto(sum: Resources, more: Resources): void {
  for (const [resourceClass, amount] of Object.entries(more)) sum[resourceClass] = (sum[resourceClass] ?? 0) + amount;
}

const sorted = (resources: Resources): Resources =>
  Object.fromEntries(sortResourceClasses(Object.keys(resources)).map((resourceClass) => [resourceClass, resources[resourceClass]!]));

/** GET /usages before 1.38: the classes the consumers hold, summed. */
export function totalUsages(consumers: readonly Pick<Consumer, 'allocations'>[]): Resources {
  const sum: Resources = {};
  for (const consumer of consumers) addInto(sum, consumerTotals(consumer));
  return sorted(sum);
}

/** The type a consumer reports under: consumers created without one are 'unknown'. */
export const consumerTypeOf = (consumer: Pick<Consumer, 'consumerType'>): string => consumer.consumerType || UNKNOWN_CONSUMER_TYPE;

/** Per consumer type: the classes held, summed, plus `consumer_count` (consumers holding anything). */
export type UsagesByType = Record<string, Record<string, number>>;

/**
 * GET /usages from 1.38. Without a filter, one group per consumer type;
 * `all` puts every consumer in one group named "all"; `unknown` keeps only
 * consumers without a type; any other value keeps only that type. Consumers
 * holding nothing count nowhere.
 */
export function usagesByConsumerType(consumers: readonly Pick<Consumer, 'allocations' | 'consumerType'>[], filter?: string): UsagesByType {
  const groups = new Map<string, { sum: Resources; count: number }>();
  for (const consumer of consumers) {
    const totals = consumerTotals(consumer);
    if (Object.keys(totals).length === 0) continue;
    const type = consumerTypeOf(consumer);
    if (filter !== undefined && filter !== ALL_CONSUMER_TYPES && type !== filter) continue;
    const key = filter === ALL_CONSUMER_TYPES ? ALL_CONSUMER_TYPES : type;
    const group = groups.get(key) ?? { sum: {}, count: 0 };
    addInto(group.sum, totals);
    group.count += 1;
    groups.set(key, group);
  }
  const result: UsagesByType = {};
  for (const [type, { sum, count }] of groups) result[type] = { ...sorted(sum), consumer_count: count };
  return result;
}
