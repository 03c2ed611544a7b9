// Body of PUT /resource_providers/{uuid}/aggregates.
import type { JsonSchema } from '../api/json-schema.js';
import { UUID_STRING } from './common.js';

/** A list of distinct aggregate uuids. */
const AGGREGATES_LIST = {
  type: 'array',
  items: UUID_STRING,
  uniqueItems: true,
} satisfies JsonSchema;

/** PUT /resource_providers/{uuid}/aggregates body, 1.1–1.18: a bare list of uuids. */
export const PUT_AGGREGATES_1_1 = { ...AGGREGATES_LIST } satisfies JsonSchema;

/** PUT /resource_providers/{uuid}/aggregates body, 1.19+: the list plus the provider generation. */
export const PUT_AGGREGATES_1_19 = {
  type: 'object',
  properties: {
    aggregates: { ...AGGREGATES_LIST },
    resource_provider_generation: { type: 'integer' },
  },
  required: ['aggregates', 'resource_provider_generation'],
  additionalProperties: false,
} satisfies JsonSchema;
