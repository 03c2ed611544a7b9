// Body of POST /reshaper.
import type { JsonSchema } from '../api/json-schema.js';
import { POST_ALLOCATIONS_1_28, POST_ALLOCATIONS_1_34, POST_ALLOCATIONS_1_38 } from './allocation.js';
import { UUID_PATTERN } from './common.js';
import { PUT_INVENTORIES_1_0 } from './inventory.js';

/** POST /reshaper body, 1.30–1.33: inventories per provider uuid, plus the 1.28 POST /allocations body (may be empty). */
export const POST_RESHAPER_1_30 = {
  type: 'object',
  properties: {
    inventories: {
      type: 'object',
      patternProperties: { [UUID_PATTERN]: PUT_INVENTORIES_1_0 },
      minProperties: 1,
      additionalProperties: false,
    },
    allocations: { ...POST_ALLOCATIONS_1_28, minProperties: 0 },
  },
  required: ['inventories', 'allocations'],
  additionalProperties: false,
} satisfies JsonSchema;

/** POST /reshaper body, 1.34–1.37: allocations as in POST /allocations 1.34 (mappings allowed). */
export const POST_RESHAPER_1_34 = {
  ...POST_RESHAPER_1_30,
  properties: { ...POST_RESHAPER_1_30.properties, allocations: { ...POST_ALLOCATIONS_1_34, minProperties: 0 } },
} satisfies JsonSchema;

/** POST /reshaper body, 1.38+: allocations as in POST /allocations 1.38 (consumer_type required). */
export const POST_RESHAPER_1_38 = {
  ...POST_RESHAPER_1_34,
  properties: { ...POST_RESHAPER_1_34.properties, allocations: { ...POST_ALLOCATIONS_1_38, minProperties: 0 } },
} satisfies JsonSchema;
