/**
 * A capacity entry (storage format 3): one per provider and resource class
 * it has an inventory of, saying the most one allocation of the class could
 * take there now (largestAllocation: free capacity within max_unit, never
 * below 0). Its sort key starts with that amount, so "the providers where at
 * least n of class C fit" is a key condition (sk >= n) on the class's
 * partitions, and a class nobody has room for reads nothing. What the amount
 * does not say (min_unit, step_size) rides along; the provider's own item
 * decides the rest. Kept in the commit of every write that moves the amount
 * (entries/capacity-entries.ts).
 *
 *   pk CAPACITY#<class>#<n>   sk <most, 10 digits>#<uuid>   minUnit, stepSize (absent when 1)
 *
 * A class's entries are spread over CAPACITY_SHARDS partitions by provider
 * (never by tree: a move does not touch them): a claim that moves an entry
 * deletes one item and puts another, 4 write units of a transaction, so a
 * class's 8 partitions take about 2,000 such claims a second (1,000 write
 * units a second each).
 */
import { createHash } from 'node:crypto';
import { optionalNumberField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart } from './key-parts.js';

export const CAPACITY_ENTRY_TYPE = 'capacityEntry';
export const CAPACITY_SHARDS = 8;

export const CapacityEntryAttribute = { minUnit: 'minUnit', stepSize: 'stepSize' } as const;
const A = CapacityEntryAttribute;

/** Digits of the amount in the sort key: max_unit, and so the amount, is at most 2^31 - 1. */
const AMOUNT_DIGITS = 10;

export interface CapacityEntry {
  resourceClass: string;
  uuid: string;
  /** The most one allocation of the class could take on the provider now. */
  most: number;
  minUnit: number;
  stepSize: number;
}

export const capacityShardOf = (uuid: string): number => createHash('sha1').update(uuid).digest().readUInt16BE(0) % CAPACITY_SHARDS;

export const capacityPartition = (resourceClass: string, shard: number): string => clientPart('CAPACITY', `${resourceClass}#${shard}`);

/** Every partition of one class's entries. */
export const capacityPartitions = (resourceClass: string): string[] =>
  Array.from({ length: CAPACITY_SHARDS }, (_, shard) => capacityPartition(resourceClass, shard));

/** The sort key at and after which an entry has room for `amount`. */
export const capacitySortFrom = (amount: number): string => String(amount).padStart(AMOUNT_DIGITS, '0');

export const capacityEntryKey = ({ resourceClass, uuid, most }: Pick<CapacityEntry, 'resourceClass' | 'uuid' | 'most'>): Key => ({
  pk: capacityPartition(resourceClass, capacityShardOf(uuid)),
  sk: `${capacitySortFrom(most)}#${uuid}`,
});

export const encodeCapacityEntry = (entry: CapacityEntry): Item => ({
  ...capacityEntryKey(entry),
  [TYPE_ATTRIBUTE]: CAPACITY_ENTRY_TYPE,
  ...(entry.minUnit !== 1 && { [A.minUnit]: entry.minUnit }),
  ...(entry.stepSize !== 1 && { [A.stepSize]: entry.stepSize }),
});

/** An entry read from the partition of `resourceClass` (the partition key alone may be a digest). */
export function decodeCapacityEntry(item: Item, resourceClass: string): CapacityEntry {
  const sk = stringField(item, 'sk');
  return {
    resourceClass,
    uuid: sk.slice(AMOUNT_DIGITS + 1),
    most: Number(sk.slice(0, AMOUNT_DIGITS)),
    minUnit: optionalNumberField(item, A.minUnit) ?? 1,
    stepSize: optionalNumberField(item, A.stepSize) ?? 1,
  };
}
