/**
 * Typed reads of a stored item's attributes, in place of `item.name as T`.
 * Each item type decodes its items in one function beside its writer
 * (providerFromItem, consumerFromItem, the catalogs' entryFromItem); an
 * attribute of another type than the writer stores (an item written by hand
 * or by another version) stops the read here, named, rather than travelling on
 * under a type it does not have.
 */
import type { Item } from './reads.js';

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
