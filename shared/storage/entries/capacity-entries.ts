/**
 * The capacity entries of a provider (items/capacity-entry.ts): one per
 * class it has an inventory of, keyed by the room one allocation of the
 * class has there now. Every write that moves that key (a claim, an
 * allocation removed, an inventory changed, a reshape, a class renamed, a
 * provider created or deleted) writes the difference in its own commit, so
 * an entry is never behind its provider: a reader that finds no entry of a
 * class with room for n knows that no provider has room for n, at the
 * moment of its read.
 */
import { largestAllocation } from '../../domain/capacity.js';
import { entryOf, type Provider } from '../../domain/model.js';
import { tableName } from '../dynamodb.js';
import type { Write } from '../commit/write.js';
import { type Item } from '../items/fields.js';
import { capacityEntryKey, encodeCapacityEntry, roomKey, type CapacityEntry } from '../items/capacity-entry.js';

type Capacities = Pick<Provider, 'uuid' | 'inventories' | 'usages'>;

/** A provider's capacity entries in this state (none when it is not there). */
export function capacityEntriesOf(provider: Capacities | undefined): CapacityEntry[] {
  if (provider === undefined) return [];
  return Object.entries(provider.inventories).map(([resourceClass, inventory]) => ({
    resourceClass,
    uuid: provider.uuid,
    room: roomKey(largestAllocation(inventory, entryOf(provider.usages, resourceClass) ?? 0), largestAllocation(inventory, 0)),
    minUnit: inventory.min_unit,
    stepSize: inventory.step_size,
  }));
}

/** Each entry as stored, by its key. */
const byKey = (entries: CapacityEntry[]): Map<string, { entry: CapacityEntry; item: Item }> =>
  new Map(entries.map((entry) => [JSON.stringify(capacityEntryKey(entry)), { entry, item: encodeCapacityEntry(entry) }]));

/**
 * The puts and deletes that take a provider's capacity entries from one
 * state to the other (undefined: created, or deleted), and the classes
 * whose entry they move. An entry that stays as it is is not written.
 */
export function capacityEntryChanges(before: Capacities | undefined, after: Capacities | undefined): { writes: Write[]; classes: Set<string> } {
  const old = byKey(capacityEntriesOf(before));
  const next = byKey(capacityEntriesOf(after));
  const writes: Write[] = [];
  const classes = new Set<string>();
  for (const [key, { entry, item }] of next) {
    if (JSON.stringify(old.get(key)?.item) === JSON.stringify(item)) continue;
    writes.push({ item: { Put: { TableName: tableName(), Item: item } } });
    classes.add(entry.resourceClass);
  }
  for (const [key, { entry }] of old) {
    if (next.has(key)) continue;
    writes.push({ item: { Delete: { TableName: tableName(), Key: capacityEntryKey(entry) } } });
    classes.add(entry.resourceClass);
  }
  return { writes, classes };
}
