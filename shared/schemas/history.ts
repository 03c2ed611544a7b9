// Query strings of the allocation history's routes, this service's own (docs/operators/history.md).
import type { JsonSchema } from '../api/json-schema.js';

/** ISO 8601 with a date, a time and an offset: 2026-11-26T17:00:00Z, 2026-11-26T18:00:00.5+01:00. */
const TIME = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$' } as const;

/** GET /history/allocations/{consumer_uuid} and /history/resource_providers/{uuid}/allocations. */
export const LIST_HISTORY_QUERY = {
  type: 'object',
  properties: { since: TIME, until: TIME },
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
