/**
 * Capacity math: how much of a class a provider can hand out and whether an
 * amount fits the inventory's constraints. Pure.
 */
import { conflict } from '../api/errors.js';
import { entryOf, type Inventory, type Provider, type Resources } from './model.js';

/**
 * The one capacity rule: (total - reserved) * allocation_ratio in whole
 * units, cut towards zero as upstream's int() cuts it. Upstream shows and
 * checks inventories with the whole number but compares claims with the
 * product before the cut; for the whole amounts of at least 1 that claims
 * ask for, both comparisons answer alike, so every check uses this one.
 */
export function capacity(inventory: Inventory): number {
  // + 0: Math.trunc(-0.5) is -0, Python's int() has no negative zero.
  return Math.trunc((inventory.total - inventory.reserved) * inventory.allocation_ratio) + 0;
}

/** What is left once current usage is taken off. */
export function freeCapacity(inventory: Inventory, used: number): number {
  return capacity(inventory) - used;
}

/**
 * The most one allocation of the class could take now: its free capacity
 * within max_unit, never below 0. Any amount that fits is at most this
 * (fitsCapacity), so a provider below it for an amount cannot take it.
 */
export function largestAllocation(inventory: Inventory, used: number): number {
  return Math.max(0, Math.min(freeCapacity(inventory, used), inventory.max_unit));
}

/**
 * Free capacity of every class of a provider, in whole units: what claim
 * conditions compare with whole amounts. Whole, it is also a number DynamoDB
 * can store: a ratio of 1e-300 would leave 8e-300, which it cannot. It is
 * capped at 2^53 - 1, the largest integer a double holds exactly (a ratio of
 * 9e18 makes capacities the SDK refuses to write): one allocation asks for
 * at most max_unit (below 2^31), so no claim or search compares differently.
 */
export function freeCapacities(provider: Pick<Provider, 'inventories' | 'usages'>): Resources {
  return Object.fromEntries(
    Object.entries(provider.inventories).map(([resourceClass, inventory]) => [
      resourceClass,
      Math.min(freeCapacity(inventory, entryOf(provider.usages, resourceClass) ?? 0), Number.MAX_SAFE_INTEGER),
    ]),
  );
}

/** True when one allocation of `amount` respects min_unit, max_unit and step_size. */
export function fitsConstraints(inventory: Inventory, amount: number): boolean {
  return amount >= inventory.min_unit && amount <= inventory.max_unit && amount % inventory.step_size === 0;
}

const unableToAllocate = (detail: string) => conflict(`Unable to allocate inventory: ${detail}`);

/**
 * Checks that a consumer may hold `amount` of a class on a provider, given
 * what everyone else already uses there (`usedByOthers`).
 */
export function checkAllocation(provider: Provider, resourceClass: string, amount: number, usedByOthers: number): void {
  const inventory = entryOf(provider.inventories, resourceClass);
  if (inventory === undefined) {
    throw unableToAllocate(`Inventory for '${resourceClass}' on resource provider '${provider.uuid}' invalid.`);
  }
  if (!fitsConstraints(inventory, amount)) {
    throw unableToAllocate(
      `Unable to create allocation for '${resourceClass}' on resource provider '${provider.uuid}'. The requested amount would violate inventory constraints.`,
    );
  }
  if (capacity(inventory) < usedByOthers + amount) {
    throw unableToAllocate(
      `Unable to create allocation for '${resourceClass}' on resource provider '${provider.uuid}'. The requested amount would exceed the capacity.`,
    );
  }
}

/** True when the provider could take `amount` more of the class right now. */
export function fitsCapacity(provider: Pick<Provider, 'inventories' | 'usages'>, resourceClass: string, amount: number): boolean {
  const inventory = entryOf(provider.inventories, resourceClass);
  if (inventory === undefined || !fitsConstraints(inventory, amount)) return false;
  return capacity(inventory) >= (entryOf(provider.usages, resourceClass) ?? 0) + amount;
}
