// Query string of GET /usages.
import type { JsonSchema } from '../api/json-schema.js';
import { CONSUMER_TYPE_GET_PATTERN } from './common.js';

/** GET /usages query, 1.9–1.37: project_id (required) and user_id. */
export const LIST_USAGES_QUERY_1_9 = {
  type: 'object',
  properties: {
    project_id: { type: 'string', minLength: 1, maxLength: 255 },
    user_id: { type: 'string', minLength: 1, maxLength: 255 },
  },
  required: ['project_id'],
  additionalProperties: false,
} satisfies JsonSchema;

/** GET /usages query, 1.38+: adds consumer_type (a type, "all" or "unknown"). */
export const LIST_USAGES_QUERY_1_38 = {
  ...LIST_USAGES_QUERY_1_9,
  properties: {
    ...LIST_USAGES_QUERY_1_9.properties,
    consumer_type: { type: 'string', pattern: CONSUMER_TYPE_GET_PATTERN, minLength: 1, maxLength: 255 },
  },
} satisfies JsonSchema;
