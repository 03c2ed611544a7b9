/**
 * Inventory rules: the defaults a client may leave out, the capacity check
 * made before inventory is written, which classes are still in use when
 * inventory is replaced or removed, and the JSON shape of an inventory.
 * Pure: no I/O, no HTTP.
 */
import { PythonFloat } from '../api/python-json.js';
import { capacity } from './capacity.js';
import { entryOf, type Inventories, type Inventory, type Provider, type Resources } from './model.js';
import { STANDARD_RESOURCE_CLASSES } from './standard-catalog.js';

/** The largest value of the 32-bit integer columns upstream stores inventory in. */
export const MAX_INT = 2147483647;

/** What an inventory gets for each field the request did not give. */
export const INVENTORY_DEFAULTS: Readonly<Omit<Inventory, 'total'>> = Object.freeze({
  reserved: 0,
  min_unit: 1,
  max_unit: MAX_INT,
  step_size: 1,
  allocation_ratio: 1.0,
});

/** The order of the fields in a serialized inventory. */
export const INVENTORY_FIELDS = ['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'] as const;

/** An inventory as a request gives it: only `total` is required. */
export type InventoryFields = Pick<Inventory, 'total'> & Partial<Omit<Inventory, 'total'>>;

/** The full inventory for what a request gave; anything else in `fields` is ignored. */
export function inventoryWithDefaults(fields: InventoryFields): Inventory {
  const inventory: Inventory = { ...INVENTORY_DEFAULTS, total: fields.total };
  for (const name of INVENTORY_FIELDS) {
    const value = fields[name];
    if (value !== undefined) inventory[name] = value;
  }
  return inventory;
}

/**
 * Inventory records as inventories, defaults filled in. A record under a
 * name the schema's class pattern does not cover was not validated: such a
 * name can never be a class, and `onMalformed` names the error upstream gives.
 */
export function inventoriesFromRecords(records: Record<string, unknown>, onMalformed: (resourceClass: string) => Error): Inventories {
  // Built from entries, never by assignment: a "__proto__" record must stay a (refused) class, not replace the prototype.
  return Object.fromEntries(
    Object.entries(records).map(([resourceClass, record]) => {
      if (!isWellFormedInventory(record)) throw onMalformed(resourceClass);
      return [resourceClass, inventoryWithDefaults(record)];
    }),
  );
}

/** True when every field of the record is a number (a record the schema did not check may hold anything). */
export function isWellFormedInventory(fields: unknown): fields is InventoryFields {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return false;
  const record = fields as Record<string, unknown>;
  if (typeof record.total !== 'number') return false;
  return INVENTORY_FIELDS.every((name) => record[name] === undefined || typeof record[name] === 'number');
}

/**
 * JSON's NaN passes upstream's schema as an allocation_ratio (no comparison
 * fails on it), and upstream then answers 500; here it is refused.
 */
export function ratioProblem(resourceClass: string, providerUuid: string, inventory: Inventory): string | undefined {
  if (!Number.isNaN(inventory.allocation_ratio)) return undefined;
  return `Invalid inventory for '${resourceClass}' on resource provider '${providerUuid}'. The allocation_ratio is not a number.`;
}

/**
 * Why the inventory may not be written, or undefined when it may. Before
 * microversion 1.26 the capacity must be positive; from 1.26 it may be zero
 * (reserved equal to total), only a negative capacity is refused.
 */
export function capacityProblem(resourceClass: string, providerUuid: string, inventory: Inventory, reservedMayEqualTotal: boolean): string | undefined {
  const ratio = ratioProblem(resourceClass, providerUuid, inventory);
  if (ratio !== undefined) return ratio;
  const usable = capacity(inventory);
  const invalid = reservedMayEqualTotal ? usable < 0 : usable <= 0;
  if (!invalid) return undefined;
  const comparison = reservedMayEqualTotal ? 'greater than' : 'greater than or equal to';
  return `Invalid inventory for '${resourceClass}' on resource provider '${providerUuid}'. The reserved value is ${comparison} total.`;
}

/** The first capacity problem among the inventories, in the order given. */
export function firstCapacityProblem(inventories: Inventories, providerUuid: string, reservedMayEqualTotal: boolean): string | undefined {
  for (const [resourceClass, inventory] of Object.entries(inventories)) {
    const problem = capacityProblem(resourceClass, providerUuid, inventory, reservedMayEqualTotal);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

const standardRank = new Map(STANDARD_RESOURCE_CLASSES.map((name, index) => [name, index]));

/**
 * Upstream lists resource classes in the order of their ids: the standard
 * ones in os-resource-classes order, then the custom ones (here by name).
 */
export function compareResourceClasses(a: string, b: string): number {
  const rankA = standardRank.get(a) ?? Number.MAX_SAFE_INTEGER;
  const rankB = standardRank.get(b) ?? Number.MAX_SAFE_INTEGER;
  if (rankA !== rankB) return rankA - rankB;
  return a < b ? -1 : a > b ? 1 : 0;
}

export const sortResourceClasses = (names: Iterable<string>): string[] => [...names].sort(compareResourceClasses);

/** The classes, among `classes`, that some consumer holds on the provider (in upstream's order). */
export function classesInUse(usages: Resources, classes: Iterable<string>): string[] {
  return sortResourceClasses(new Set([...classes].filter((resourceClass) => (entryOf(usages, resourceClass) ?? 0) > 0)));
}

/** Upstream's InventoryInUse sentence. */
export function inUseMessage(classes: readonly string[], providerUuid: string): string {
  return `Inventory for '${classes.join(', ')}' on resource provider '${providerUuid}' in use.`;
}

export interface InventoryDiff {
  added: string[];
  removed: string[];
  /** Classes present before and after (whether or not a field changed). */
  kept: string[];
}

export function diffInventories(before: Inventories, after: Inventories): InventoryDiff {
  const beforeClasses = Object.keys(before);
  const afterClasses = Object.keys(after);
  return {
    added: sortResourceClasses(afterClasses.filter((name) => !Object.hasOwn(before, name))),
    removed: sortResourceClasses(beforeClasses.filter((name) => !Object.hasOwn(after, name))),
    kept: sortResourceClasses(afterClasses.filter((name) => Object.hasOwn(before, name))),
  };
}

/**
 * The classes whose current usage exceeds the capacity the new inventories
 * give. Upstream allows such a change (it only logs a warning); this is what
 * it warns about.
 */
export function overCapacityClasses(inventories: Inventories, usages: Resources): string[] {
  return sortResourceClasses(
    Object.entries(inventories)
      .filter(([resourceClass, inventory]) => (entryOf(usages, resourceClass) ?? 0) > capacity(inventory))
      .map(([resourceClass]) => resourceClass),
  );
}

/**
 * Why the provider's inventories may not become `next`, or undefined: a
 * class some consumer still holds may not be removed. Shrinking a class
 * below its usage is allowed.
 */
export function replacementProblem(provider: Pick<Provider, 'uuid' | 'inventories' | 'usages'>, next: Inventories): string | undefined {
  const inUse = classesInUse(provider.usages, diffInventories(provider.inventories, next).removed);
  return inUse.length > 0 ? inUseMessage(inUse, provider.uuid) : undefined;
}

/**
 * The provider with its inventories replaced: every inventory write bumps
 * the generation by one, even when nothing changed. Usage is left exactly
 * as read (storage conditions the write on it being unchanged).
 */
export function withInventories(provider: Provider, inventories: Inventories, now: string): Provider {
  return { ...provider, inventories, generation: provider.generation + 1, updatedAt: now };
}

/** One inventory as the API shows it; the generation only when it is not 0 (as upstream). */
export function serializeInventory(inventory: Inventory, generation?: number): Record<string, number | PythonFloat> {
  const body: Record<string, number | PythonFloat> = {};
  for (const name of INVENTORY_FIELDS) body[name] = name === 'allocation_ratio' ? new PythonFloat(inventory[name]) : inventory[name];
  if (generation) body.resource_provider_generation = generation;
  return body;
}

/** All inventories of a provider, keyed by class in upstream's order. */
export function serializeInventories(inventories: Inventories, generation: number) {
  return {
    resource_provider_generation: generation,
    inventories: Object.fromEntries(
      sortResourceClasses(Object.keys(inventories)).map((resourceClass) => [resourceClass, serializeInventory(inventories[resourceClass]!)]),
    ),
  };
}
