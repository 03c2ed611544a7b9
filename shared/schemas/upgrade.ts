// Body of POST /upgrade/finalize, a route of this service's own (docs/operators/upgrade.md).
import type { JsonSchema } from '../api/json-schema.js';

/** The format the operator finalizes the table to: named, so that a finalize meant for another release is refused. */
export const FINALIZE_UPGRADE = {
  type: 'object',
  properties: {
    format: { type: 'integer', minimum: 1 },
  },
  required: ['format'],
  additionalProperties: false,
} satisfies JsonSchema;

/** GET /upgrade/entries: where a verify of the entries goes on (the `next` of the previous page). */
export const VERIFY_ENTRIES_QUERY = {
  type: 'object',
  properties: { marker: { type: 'string', minLength: 1, maxLength: 4096 } },
  additionalProperties: false,
} satisfies JsonSchema;
