// Shared fragments for every endpoint schema: uuid, resource class, trait and consumer type patterns, and the float limit.
import type { JsonSchema } from '../api/json-schema.js';

const UUID_CHAR = '[0-9a-fA-F-]';
/** Loose uuid shape (36 hex digits or dashes) used to key objects by provider/consumer uuid. */
export const UUID_PATTERN = `^${UUID_CHAR}{36}$`;

const RC_TRAIT_CHAR = '[A-Z0-9_]';
/** Any (standard or custom) resource class name. */
export const RC_PATTERN = `^${RC_TRAIT_CHAR}+$`;
/** Custom resource class names must carry the CUSTOM_ prefix. */
export const CUSTOM_RC_PATTERN = `^CUSTOM_${RC_TRAIT_CHAR}+$`;
/** Custom trait names share the resource class rule. */
export const CUSTOM_TRAIT_PATTERN = CUSTOM_RC_PATTERN;
/** Consumer types written with allocations (1.38+). */
export const CONSUMER_TYPE_PATTERN = RC_PATTERN;
/** Consumer type filter of GET /usages (1.38+): a type, or "all" / "unknown". */
export const CONSUMER_TYPE_GET_PATTERN = `${CONSUMER_TYPE_PATTERN}|^all|^unknown$`;

/** Largest value of the database's single-precision float columns. */
export const SQL_SP_FLOAT_MAX = 3.40282e38;

/** A string the uuid format checker must accept. */
export const UUID_STRING = { type: 'string', format: 'uuid' } satisfies JsonSchema;

/** A copy of `object` without `keys`, the other keys keeping their order (Python's dict.pop on a deepcopy). */
export function omit<T extends object, K extends keyof T>(object: T, ...keys: K[]): Omit<T, K> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key as K))) as Omit<T, K>;
}
