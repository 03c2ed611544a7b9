// Bodies of POST /resource_classes and PUT /resource_classes/{name}.
import type { JsonSchema } from '../api/json-schema.js';
import { CUSTOM_RC_PATTERN } from './common.js';

/** POST /resource_classes body, 1.2+: a CUSTOM_ name. */
export const POST_RESOURCE_CLASS_1_2 = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: CUSTOM_RC_PATTERN, maxLength: 255 },
  },
  required: ['name'],
  additionalProperties: false,
} satisfies JsonSchema;

/**
 * PUT /resource_classes/{name} body, 1.2–1.6 (renames the class). From 1.7 there is no body:
 * upstream validates `{"name": <path name>}` against this same schema.
 */
export const PUT_RESOURCE_CLASS_1_2 = { ...POST_RESOURCE_CLASS_1_2 } satisfies JsonSchema;
