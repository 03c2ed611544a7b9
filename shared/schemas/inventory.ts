// Bodies of POST /resource_providers/{uuid}/inventories, PUT .../inventories and PUT .../inventories/{resource_class}.
import type { JsonSchema } from '../api/json-schema.js';
import { MAX_INT } from '../domain/inventory.js';
import { RC_PATTERN, SQL_SP_FLOAT_MAX } from './common.js';

/** PUT /resource_providers/{uuid}/inventories/{resource_class} body, 1.0+ (upstream's base inventory schema). */
export const PUT_INVENTORY_1_0 = {
  type: 'object',
  properties: {
    resource_provider_generation: { type: 'integer' },
    total: { type: 'integer', maximum: MAX_INT, minimum: 1 },
    reserved: { type: 'integer', maximum: MAX_INT, minimum: 0 },
    min_unit: { type: 'integer', maximum: MAX_INT, minimum: 1 },
    max_unit: { type: 'integer', maximum: MAX_INT, minimum: 1 },
    step_size: { type: 'integer', maximum: MAX_INT, minimum: 1 },
    allocation_ratio: { type: 'number', maximum: SQL_SP_FLOAT_MAX },
  },
  required: ['total', 'resource_provider_generation'],
  additionalProperties: false,
} satisfies JsonSchema;

/** POST /resource_providers/{uuid}/inventories body, 1.0+: names its resource_class, no generation required. */
export const POST_INVENTORY_1_0 = {
  ...PUT_INVENTORY_1_0,
  properties: { ...PUT_INVENTORY_1_0.properties, resource_class: { type: 'string', pattern: RC_PATTERN } },
  required: [...PUT_INVENTORY_1_0.required, 'resource_class'].filter((name) => name !== 'resource_provider_generation'),
} satisfies JsonSchema;

/** One record of the PUT /resource_providers/{uuid}/inventories body, 1.0+: no generation required. */
const INVENTORY_RECORD_1_0 = {
  ...PUT_INVENTORY_1_0,
  required: PUT_INVENTORY_1_0.required.filter((name) => name !== 'resource_provider_generation'),
} satisfies JsonSchema;

/** PUT /resource_providers/{uuid}/inventories body, 1.0+: all inventories keyed by resource class. */
export const PUT_INVENTORIES_1_0 = {
  type: 'object',
  properties: {
    resource_provider_generation: { type: 'integer' },
    inventories: {
      type: 'object',
      patternProperties: { [RC_PATTERN]: INVENTORY_RECORD_1_0 },
    },
  },
  required: ['resource_provider_generation', 'inventories'],
  additionalProperties: false,
} satisfies JsonSchema;
