/**
 * What every stored item model (the other modules of this folder) is made
 * of: the item and key shapes, the type tag, the size bound, and typed reads
 * of an item's attributes in place of `item.name as T`. Each model decodes
 * its items in one function beside its encoder; an attribute of another type
 * than the encoder stores (an item written by hand or by another version)
 * stops the read here, named, rather than travelling on under a type it does
 * not have.
 */

/** A stored item as the document client reads and writes it. */
export type Item = Record<string, unknown>;

export interface Key {
  pk: string;
  sk: string;
}

/** The attribute every item carries its model's tag in (see placeholder items in journal.ts). */
export const TYPE_ATTRIBUTE = 'type';

/**
 * The most bytes a provider or consumer item may take. DynamoDB stores at
 * most 400 KB an item; the rest is room for what a multi-step change stages
 * beside an item of this size (journal.ts). Only data a client keeps adding
 * to (thousands of aggregates, children or allocations on one record) comes
 * near it.
 */
export const MAX_ITEM_BYTES = 350 * 1024;

/** A change would make one stored record larger than MAX_ITEM_BYTES (a 400 to the client: nothing is written). */
export class ItemTooLarge extends Error {
  constructor(record: string, bytes?: number) {
    const size = bytes === undefined ? "more storage than DynamoDB's 400 KB" : `${bytes} bytes of storage, more than the ${MAX_ITEM_BYTES}`;
    super(`${record} would take ${size} one record may hold (its traits, aggregates, children, inventories or allocations together).`);
    this.name = 'ItemTooLarge';
  }
}

/**
 * An upper bound of the size DynamoDB counts for a value: strings by their
 * UTF-8 bytes, numbers by at most 21 bytes, and 3 bytes plus one per element
 * of overhead for lists, maps and sets, attribute names included.
 */
function storedSize(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return 21;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (value instanceof Set || Array.isArray(value)) return [...value].reduce((sum: number, inner) => sum + storedSize(inner) + 1, 3);
  if (typeof value === 'object') {
    return Object.entries(value).reduce((sum, [name, inner]) => sum + Buffer.byteLength(name) + storedSize(inner) + 1, 3);
  }
  return 0;
}

/** The item itself, once checked against MAX_ITEM_BYTES; `record` names it in the error. */
export function boundedItem(item: Item, record: () => string): Item {
  const bytes = storedSize(item);
  if (bytes > MAX_ITEM_BYTES) throw new ItemTooLarge(record(), bytes);
  return item;
}

export class MalformedItem extends Error {
  constructor(attribute: string, expected: string, item: Item) {
    super(`stored item ${JSON.stringify(item.pk)}/${JSON.stringify(item.sk)}: ${attribute} is not ${expected}`);
    this.name = 'MalformedItem';
  }
}

function isNumberMap(value: unknown): value is Record<string, number> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((inner) => typeof inner === 'number');
}

export function stringField(item: Item, attribute: string): string {
  const value = item[attribute];
  if (typeof value !== 'string') throw new MalformedItem(attribute, 'a string', item);
  return value;
}

/** An attribute the writer leaves out when it has no value. */
export function optionalStringField(item: Item, attribute: string): string | undefined {
  const value = item[attribute];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new MalformedItem(attribute, 'a string', item);
  return value;
}

/** An attribute stored as null (or left out) when it has no value. */
export function nullableStringField(item: Item, attribute: string): string | null {
  return item[attribute] === null ? null : (optionalStringField(item, attribute) ?? null);
}

export function numberField(item: Item, attribute: string): number {
  const value = item[attribute];
  if (typeof value !== 'number') throw new MalformedItem(attribute, 'a number', item);
  return value;
}

/** A number the writer leaves out when it has its default. */
export function optionalNumberField(item: Item, attribute: string): number | undefined {
  return item[attribute] === undefined ? undefined : numberField(item, attribute);
}

export function booleanField(item: Item, attribute: string): boolean {
  const value = item[attribute];
  if (typeof value !== 'boolean') throw new MalformedItem(attribute, 'a boolean', item);
  return value;
}

/** A list of strings; absent is empty. */
export function stringListField(item: Item, attribute: string): string[] {
  const value = item[attribute];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((inner) => typeof inner === 'string')) throw new MalformedItem(attribute, 'a list of strings', item);
  return value;
}

/** A string set (DynamoDB omits an empty one), sorted; absent is empty. */
export function stringSetField(item: Item, attribute: string): string[] {
  const value = item[attribute];
  if (value === undefined) return [];
  if (!(value instanceof Set) || ![...value].every((inner) => typeof inner === 'string')) throw new MalformedItem(attribute, 'a string set', item);
  return [...(value as Set<string>)].sort();
}

/** A map of names to numbers (usages, resources); absent is empty. */
export function numberMapField(item: Item, attribute: string): Record<string, number> {
  const value = item[attribute];
  if (value === undefined) return {};
  if (!isNumberMap(value)) throw new MalformedItem(attribute, 'a map of numbers', item);
  return value;
}

/** A map of names to maps of numbers (a consumer's allocations by provider); absent is empty. */
export function numberMapsField(item: Item, attribute: string): Record<string, Record<string, number>> {
  const value = item[attribute];
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every(isNumberMap)) {
    throw new MalformedItem(attribute, 'a map of maps of numbers', item);
  }
  return value as Record<string, Record<string, number>>;
}
