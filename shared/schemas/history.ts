// Query strings of the allocation history's routes, this service's own (docs/operators/history.md).
import type { JsonSchema } from '../api/json-schema.js';

/** A time: what one is, the handler asks shared/api/time.ts, the one reader of times. */
const TIME = { type: 'string' } as const;

/** The most events a page of a history listing holds, and how many it holds unless `limit` says fewer. */
export const HISTORY_PAGE_LIMIT = 1000;

/**
 * GET /history/allocations/{consumer_uuid} and /history/resource_providers/{uuid}/allocations: a range, and a page of
 * it (`marker`: the `next` link's, where the previous page ended; its syntax is checked by the handler).
 */
export const LIST_HISTORY_QUERY = {
  type: 'object',
  properties: { since: TIME, until: TIME, limit: { type: 'string', pattern: '^[1-9][0-9]{0,3}$' }, marker: { type: 'string' } },
  additionalProperties: false,
} satisfies JsonSchema;

/** GET /history/usages: a project's (or one user's) resource-hours. */
export const HISTORY_USAGES_QUERY = {
  type: 'object',
  properties: {
    project_id: { type: 'string', minLength: 1, maxLength: 255 },
    user_id: { type: 'string', minLength: 1, maxLength: 255 },
    since: TIME,
    until: TIME,
  },
  required: ['project_id'],
  additionalProperties: false,
} satisfies JsonSchema;
