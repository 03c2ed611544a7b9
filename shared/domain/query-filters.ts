/**
 * The provider filters of query strings (`resources`, `required`,
 * `member_of`, `in_tree`), parsed with upstream's rules per microversion,
 * and matched against providers. Pure; shared by GET /resource_providers and
 * GET /allocation_candidates (whose granular groups pass a suffix).
 */
import { badRequest } from '../api/errors.js';
import type { Microversion } from '../api/microversion.js';
import type { QueryString } from '../api/query-string.js';
import { foldUuidCase, isUuidLike } from './uuid.js';
import type { Resources } from './model.js';

const RESOURCES_FORM = 'Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024.';

/** `VCPU:2,MEMORY_MB:1024` to { VCPU: 2, MEMORY_MB: 1024 }. */
export function parseResources(text: string): Resources {
  if (text.trim() === '') throw badRequest(`Badly formed resources parameter. ${RESOURCES_FORM} Got: empty string.`);
  const amounts: [string, number][] = [];
  for (const pair of text.split(',')) {
    const parts = pair.split(':');
    if (parts.length !== 2) throw badRequest(`Badly formed resources parameter. ${RESOURCES_FORM} Got: ${pair}.`);
    const [name, amountText] = parts as [string, string];
    if (!/^\s*[-+]?\d+\s*$/.test(amountText)) {
      throw badRequest(`Requested resource ${name} expected positive integer amount. Got: ${amountText}.`);
    }
    const amount = Number(amountText);
    if (amount < 1) throw badRequest(`Requested resource ${name} requires amount >= 1. Got: ${amount}.`);
    amounts.push([name, amount]);
  }
  // From entries, never by assignment: "__proto__:1" must stay an (unknown) class.
  return Object.fromEntries(amounts);
}

/** Traits a provider must have: each inner list is any-of; the lists are all-of. */
export interface TraitFilter {
  anyOf: string[][];
  forbidden: string[];
}

export function parseTraitValue(value: string, allowForbidden: boolean, allowAnyOf: boolean): TraitFilter {
  if (value.startsWith('in:')) {
    if (!allowAnyOf) {
      throw badRequest(`Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${value}`);
    }
    const anyOf = [
      ...new Set(
        value
          .slice(3)
          .split(',')
          .map((trait) => trait.trim()),
      ),
    ];
    if (anyOf.some((trait) => trait === '')) {
      throw badRequest(
        `Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ${value}`,
      );
    }
    if (anyOf.some((trait) => trait.startsWith('!'))) {
      throw badRequest(`Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: ${value}`);
    }
    return { anyOf: [anyOf], forbidden: [] };
  }
  const all = value.split(',').map((trait) => trait.trim());
  // Like upstream, any number of leading '!' marks a forbidden trait.
  const forbidden = all.filter((trait) => trait.startsWith('!')).map((trait) => trait.replace(/^!+/, ''));
  if ([...all, ...forbidden].some((trait) => trait === '')) {
    const form = allowForbidden ? 'HW_CPU_X86_VMX,!CUSTOM_MAGIC' : 'HW_CPU_X86_VMX,CUSTOM_MAGIC';
    throw badRequest(`Invalid query string parameters: Expected 'required' parameter value of the form: ${form}. Got an empty trait in: ${value}`);
  }
  if (forbidden.length > 0 && !allowForbidden) {
    throw badRequest(`Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: ${value}`);
  }
  return { anyOf: all.filter((trait) => !trait.startsWith('!')).map((trait) => [trait]), forbidden };
}

/** `required<suffix>`: forbidden `!T` from 1.22; `in:` and repetition (all of) from 1.39, before which the last value wins. */
export function parseRequiredTraits(query: QueryString, version: Microversion, suffix = ''): TraitFilter | undefined {
  let values = query.all(`required${suffix}`);
  if (values.length === 0) return undefined;
  if (version.isBefore('1.39')) values = values.slice(-1);
  const filters = values.map((value) => parseTraitValue(value, version.isAtLeast('1.22'), version.isAtLeast('1.39')));
  return { anyOf: filters.flatMap((filter) => filter.anyOf), forbidden: [...new Set(filters.flatMap((filter) => filter.forbidden))] };
}

/** Aggregates a provider must be in: each inner list is any-of; the lists are all-of. */
export interface AggregateFilter {
  anyOf: string[][];
  forbidden: string[];
}

/** One `member_of` value: an aggregate, `in:` any of several, `!` or `!in:` forbidden. */
export function parseMemberOfValue(value: string): AggregateFilter {
  if (value.includes(',') && !value.startsWith('in:') && !value.startsWith('!in:')) {
    throw badRequest(`Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: ${value}`);
  }
  let required: string[] = [];
  let forbidden: string[] = [];
  if (value.startsWith('!in:')) forbidden = value.slice(4).split(',');
  else if (value.startsWith('!')) forbidden = [value.slice(1)];
  else if (value.startsWith('in:')) required = value.slice(3).split(',');
  else required = [value];
  for (const uuid of [...required, ...forbidden]) {
    if (!isUuidLike(uuid)) {
      throw badRequest(`Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: ${uuid}`);
    }
  }
  return { anyOf: required.length > 0 ? [[...new Set(required)]] : [], forbidden };
}

/** `member_of<suffix>`: repetition (all of) from 1.24, forbidden `!` from 1.32. */
export function parseMemberOf(query: QueryString, version: Microversion, suffix = ''): AggregateFilter | undefined {
  const values = query.all(`member_of${suffix}`);
  if (values.length === 0) return undefined;
  if (values.length > 1 && version.isBefore('1.24')) throw badRequest(`Multiple member_of${suffix} parameters are not supported`);
  const filters = values.map(parseMemberOfValue);
  const forbidden = [...new Set(filters.flatMap((filter) => filter.forbidden))];
  if (forbidden.length > 0 && version.isBefore('1.32')) {
    throw badRequest(`Forbidden member_of${suffix} parameters are not supported in the specified microversion`);
  }
  return { anyOf: filters.flatMap((filter) => filter.anyOf), forbidden };
}

/** The provider uuid of `in_tree<suffix>`, in the case it is stored in (see foldUuidCase). */
export function parseInTree(value: string, suffix = ''): string {
  const uuid = value.trim();
  if (!isUuidLike(uuid)) {
    throw badRequest(`Invalid query string parameters: Expected 'in_tree${suffix}' parameter to be a format of uuid. Got: ${value}`);
  }
  return foldUuidCase(uuid);
}

/** True when a set of names satisfies an any-of / all-of / none-of filter. */
export function satisfies(names: Iterable<string>, filter: { anyOf: string[][]; forbidden: string[] } | undefined): boolean {
  if (filter === undefined) return true;
  const have = new Set(names);
  return filter.anyOf.every((group) => group.some((name) => have.has(name))) && filter.forbidden.every((name) => !have.has(name));
}
