/**
 * A capacity entry (storage format 3): one per provider and resource class
 * it has an inventory of, saying how much room the provider has for one
 * allocation of the class: the most one allocation could take there now
 * (largestAllocation: free capacity within max_unit, never below 0),
 * rounded up to the key's precision but not past the provider's whole
 * size (roomKey). Its sort key starts with
 * that amount, so "the providers where n of class C may fit" is a key
 * condition (sk >= n) on the class's partitions: every provider with room
 * for n, and those within 1/16 below it, which their own items rule out; a
 * class nobody has room for reads nothing. What the amount does not say
 * (min_unit, step_size) rides along. Kept in the commit of every write that
 * moves the key (entries/capacity-entries.ts).
 *
 *   pk CAPACITY#<class>#<n>   sk <room, 10 digits>#<uuid>   minUnit, stepSize (absent when 1)
 *
 * A class's entries are spread over CAPACITY_SHARDS partitions by provider
 * (never by tree: a move does not touch them): a claim that moves an entry
 * deletes one item and puts another, 4 write units of a transaction, so a
 * class's 8 partitions take about 2,000 such claims a second (1,000 write
 * units a second each), when every claim moves it.
 */
import { createHash } from 'node:crypto';
import { optionalNumberField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart } from './key-parts.js';

export const CAPACITY_ENTRY_TYPE = 'capacityEntry';
export const CAPACITY_SHARDS = 8;

export const CapacityEntryAttribute = { minUnit: 'minUnit', stepSize: 'stepSize' } as const;
const A = CapacityEntryAttribute;

/** Digits of the amount in the sort key: max_unit, and so the most one allocation takes and its key, is at most 2^31 - 1. */
const AMOUNT_DIGITS = 10;

/** Amounts up to this are keyed as they are. */
const KEYED_EXACTLY_UP_TO = 16;
/** Above, to 1/2^KEY_PRECISION_BITS of the power of two below them, rounded up: 16 keys between 2^k and 2^(k+1). */
const KEY_PRECISION_BITS = 4;

/**
 * The amount an entry keys `most` by: `most` rounded up to 1/16 of its
 * power of two (exact up to 16), but never above `ceiling`, the most one
 * allocation could take on the provider were it empty. Never below `most`,
 * so "key >= n" misses no provider with room for n. A claim takes a few
 * percent of a host at most, so most claims leave the key as it is and
 * write no entry: an entry keyed by the exact amount moved with every
 * claim, two more writes of its transaction each time. The ceiling keeps
 * an empty or nearly empty provider's key at its whole size: a request for
 * more than any provider of a class could ever give reads none of them.
 */
export function roomKey(most: number, ceiling: number): number {
  if (most <= KEYED_EXACTLY_UP_TO) return most;
  const step = 2 ** (Math.floor(Math.log2(most)) - KEY_PRECISION_BITS);
  return Math.min(Math.ceil(most / step) * step, ceiling);
}

export interface CapacityEntry {
  resourceClass: string;
  uuid: string;
  /** The most one allocation of the class could take on the provider now, as its key says it (roomKey). */
  room: number;
  minUnit: number;
  stepSize: number;
}

export const capacityShardOf = (uuid: string): number => createHash('sha1').update(uuid).digest().readUInt16BE(0) % CAPACITY_SHARDS;

export const capacityPartition = (resourceClass: string, shard: number): string => clientPart('CAPACITY', `${resourceClass}#${shard}`);

/** Every partition of one class's entries. */
export const capacityPartitions = (resourceClass: string): string[] =>
  Array.from({ length: CAPACITY_SHARDS }, (_, shard) => capacityPartition(resourceClass, shard));

/** The sort key at and after which an entry may have room for `amount`. */
export const capacitySortFrom = (amount: number): string => String(amount).padStart(AMOUNT_DIGITS, '0');

export const capacityEntryKey = ({ resourceClass, uuid, room }: Pick<CapacityEntry, 'resourceClass' | 'uuid' | 'room'>): Key => ({
  pk: capacityPartition(resourceClass, capacityShardOf(uuid)),
  sk: `${capacitySortFrom(room)}#${uuid}`,
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
    room: Number(sk.slice(0, AMOUNT_DIGITS)),
    minUnit: optionalNumberField(item, A.minUnit) ?? 1,
    stepSize: optionalNumberField(item, A.stepSize) ?? 1,
  };
}
