/**
 * A region's capacity at a glance, per resource class, from its providers'
 * inventories and usages: what the scheduled capacity function publishes
 * and `placement-admin capacity` prints. Pure.
 *
 * Per class: total and reserved as the inventories say; capacity
 * (total - reserved) * allocation_ratio summed; used; free, the capacity
 * not used (a provider over its capacity counts 0, not less); the providers
 * with free capacity, those that could still take the smallest allocation
 * their inventory allows; and a histogram of the providers' utilisation
 * (used / capacity) in tenths, plus "full" for those that could take
 * nothing more.
 */
import { capacity, fitsCapacity } from './capacity.js';
import { sortResourceClasses } from './inventory.js';
import type { Provider } from './model.js';

export type CapacityInput = Pick<Provider, 'uuid' | 'name' | 'inventories' | 'usages'>;

/** Buckets 0-9 are 0-10% ... 90-100%; bucket 10 is "full". */
export const HISTOGRAM_LABELS = [...Array.from({ length: 10 }, (_, n) => `${n * 10}-${n * 10 + 10}%`), 'full'] as const;
const FULL = 10;

export interface ClassCapacity {
  resourceClass: string;
  /** Providers with inventory of the class. */
  providers: number;
  total: number;
  reserved: number;
  capacity: number;
  used: number;
  free: number;
  /** used / capacity in percent, 2 decimals (100 when there is no capacity). */
  utilisationPercent: number;
  providersWithFree: number;
  /** Providers per utilisation bucket (HISTOGRAM_LABELS). */
  histogram: number[];
}

export interface ProviderUtilisation {
  uuid: string;
  name: string;
  resourceClass: string;
  used: number;
  capacity: number;
  utilisationPercent: number;
}

export interface RegionCapacity {
  providers: number;
  classes: ClassCapacity[];
  /** The most used provider and class pairs, fullest first. */
  fullest: ProviderUtilisation[];
}

const percent = (used: number, available: number) => (available > 0 ? Math.round((10_000 * used) / available) / 100 : 100);

/** The smallest amount the inventory accepts in one allocation. */
const smallestAllocation = (inventory: { min_unit: number; step_size: number }) => Math.ceil(inventory.min_unit / inventory.step_size) * inventory.step_size;

export function regionCapacity(providers: readonly CapacityInput[], fullestCount = 10): RegionCapacity {
  const classes = new Map<string, ClassCapacity>();
  const utilisations: ProviderUtilisation[] = [];
  for (const provider of providers) {
    for (const [resourceClass, inventory] of Object.entries(provider.inventories)) {
      const summary = classes.get(resourceClass) ?? {
        resourceClass,
        providers: 0,
        total: 0,
        reserved: 0,
        capacity: 0,
        used: 0,
        free: 0,
        utilisationPercent: 0,
        providersWithFree: 0,
        histogram: HISTOGRAM_LABELS.map(() => 0),
      };
      classes.set(resourceClass, summary);
      const available = capacity(inventory);
      const used = provider.usages[resourceClass] ?? 0;
      const hasFree = fitsCapacity(provider, resourceClass, smallestAllocation(inventory));
      const utilisation = percent(used, available);
      summary.providers++;
      summary.total += inventory.total;
      summary.reserved += inventory.reserved;
      summary.capacity += available;
      summary.used += used;
      summary.free += Math.max(0, available - used);
      if (hasFree) summary.providersWithFree++;
      summary.histogram[hasFree ? Math.min(9, Math.floor(utilisation / 10)) : FULL]!++;
      utilisations.push({ uuid: provider.uuid, name: provider.name, resourceClass, used, capacity: available, utilisationPercent: utilisation });
    }
  }
  for (const summary of classes.values()) summary.utilisationPercent = percent(summary.used, summary.capacity);
  const fullest = utilisations
    .sort((a, b) => b.utilisationPercent - a.utilisationPercent || b.used - a.used || (a.name < b.name ? -1 : 1))
    .slice(0, fullestCount);
  return { providers: providers.length, classes: sortResourceClasses(classes.keys()).map((name) => classes.get(name)!), fullest };
}
