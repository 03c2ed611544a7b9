/**
 * Rules for the names of the two catalogs (traits and resource classes) and
 * the filters GET /traits understands. Pure: no I/O, no HTTP.
 */
import { badRequest } from '../api/errors.js';
import { STANDARD_RESOURCE_CLASSES } from './standard-catalog.js';

/** Every name a client creates carries this prefix. */
const CUSTOM_PREFIX = 'CUSTOM_';
/** The longest name the catalogs store. */
const MAX_NAME_LENGTH = 255;

const CUSTOM_NAME = /^CUSTOM_[A-Z0-9_]+$/;

/** True for names in the custom namespace (whether or not they exist). */
export const isCustomName = (name: string): boolean => name.startsWith(CUSTOM_PREFIX);

/** A name a client may create: CUSTOM_ followed by upper-case letters, digits and "_", at most 255 characters. */
export function isValidCustomName(name: string): boolean {
  const length = [...name].length;
  return length >= 1 && length <= MAX_NAME_LENGTH && CUSTOM_NAME.test(name);
}

export const INVALID_CUSTOM_TRAIT =
  'The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"';

/** The `name` filter of GET /traits: `in:A,B` (exact names) or `startswith:P` (prefix). */
export interface TraitNameFilter {
  nameIn?: string[];
  prefix?: string;
}

/**
 * Parses the `name` query parameter. An operator other than `in` or
 * `startswith` filters nothing (as upstream); a value without ":" is a 400.
 */
export function parseTraitNameFilter(value: string): TraitNameFilter {
  const colon = value.indexOf(':');
  if (colon < 0) {
    throw badRequest(
      `Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "${value}"`,
    );
  }
  const operator = value.slice(0, colon);
  const operand = value.slice(colon + 1);
  if (operator === 'in') return { nameIn: operand.split(',') };
  if (operator === 'startswith') return { prefix: operand };
  return {};
}

/** The `associated` filter of GET /traits: "true" or "false", in any case. */
export function parseAssociated(value: string): boolean {
  const lowered = value.toLowerCase();
  if (lowered !== 'true' && lowered !== 'false') throw badRequest('The query parameter "associated" only accepts "true" or "false"');
  return lowered === 'true';
}

/** SQL LIKE's case folding: ASCII letters only. */
const foldCase = (char: string): string => (char >= 'A' && char <= 'Z' ? char.toLowerCase() : char);

/** Whether the pattern piece (where "_" is any one character) matches `name` at `start`. Both are folded code points. */
function pieceMatchesAt(name: string[], start: number, piece: string[]): boolean {
  if (start + piece.length > name.length) return false;
  return piece.every((char, offset) => char === '_' || char === name[start + offset]);
}

/**
 * The prefix test upstream makes with SQL `LIKE '<prefix>%'`: "%" in the
 * prefix matches any run of characters, "_" any single character, and ASCII
 * letters match regardless of case.
 *
 * Not a regular expression: a client's pattern of many "%" would make one
 * backtrack exponentially (a reader could hold a function for minutes). The
 * pattern is cut at each "%"; the first piece must match at the start and
 * each further piece at its leftmost place after the one before, which is
 * always a safe choice when only "%" separates them. That is at most
 * (name length × pattern length) comparisons per name. A pattern whose
 * pieces need more characters than a name may have matches nothing.
 */
export function likePrefixMatcher(prefix: string): (name: string) => boolean {
  const [first = [], ...rest] = prefix.split('%').map((piece) => [...piece].map(foldCase));
  const needed = [first, ...rest].reduce((sum, piece) => sum + piece.length, 0);
  if (needed > MAX_NAME_LENGTH) return () => false;
  const pieces = rest.filter((piece) => piece.length > 0);
  return (name) => {
    const chars = [...name].map(foldCase);
    if (!pieceMatchesAt(chars, 0, first)) return false;
    let position = first.length;
    for (const piece of pieces) {
      while (position + piece.length <= chars.length && !pieceMatchesAt(chars, position, piece)) position++;
      if (position + piece.length > chars.length) return false;
      position += piece.length;
    }
    return true;
  };
}

export interface TraitListFilter extends TraitNameFilter {
  /** true: only traits some provider has; false: only traits no provider has. */
  associated?: boolean;
}

/** The traits (in the given order) that pass every filter given. */
export function filterTraits<T extends { name: string }>(entries: readonly T[], filter: TraitListFilter, associatedNames: ReadonlySet<string>): T[] {
  const nameIn = filter.nameIn === undefined ? undefined : new Set(filter.nameIn);
  const prefix = filter.prefix === undefined ? undefined : likePrefixMatcher(filter.prefix);
  return entries.filter(
    ({ name }) =>
      (nameIn === undefined || nameIn.has(name)) &&
      (prefix === undefined || prefix(name)) &&
      (filter.associated === undefined || associatedNames.has(name) === filter.associated),
  );
}

/** The requested names (first occurrence order, no repeats) that are not among the known ones. */
export function unknownNames(requested: readonly string[], known: ReadonlySet<string>): string[] {
  return [...new Set(requested)].filter((name) => !known.has(name));
}

/** The same names without repeats, in first-occurrence order. */
export const distinct = (names: readonly string[]): string[] => [...new Set(names)];

/** True when the two lists hold the same names, ignoring order and repeats. */
export function sameNames(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((name) => right.has(name));
}

const standardClassOrder = new Map(STANDARD_RESOURCE_CLASSES.map((name, index) => [name, index]));

/**
 * Resource classes in upstream's order (their ids): the standard classes in
 * os-resource-classes order, then the custom ones oldest first.
 */
export function orderResourceClasses<T extends { name: string; createdAt: string }>(entries: readonly T[]): T[] {
  const rank = (entry: T) => standardClassOrder.get(entry.name) ?? Number.MAX_SAFE_INTEGER;
  return [...entries].sort((a, b) => rank(a) - rank(b) || a.createdAt.localeCompare(b.createdAt) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The latest change among the entries (each: updated, else created), undefined when there are none. */
export function latestChange(entries: readonly { createdAt: string; updatedAt?: string | null }[]): Date | undefined {
  let latest: number | undefined;
  for (const entry of entries) {
    const time = Date.parse(entry.updatedAt || entry.createdAt);
    if (!Number.isNaN(time) && (latest === undefined || time > latest)) latest = time;
  }
  return latest === undefined ? undefined : new Date(latest);
}
