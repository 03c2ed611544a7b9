// Trait names for PUT /traits/{name}, body of PUT /resource_providers/{uuid}/traits, query string of GET /traits.
import type { JsonSchema } from '../api/json-schema.js';
import { CUSTOM_TRAIT_PATTERN } from './common.js';

/** Any trait name, 1.6+. */
const TRAIT = { type: 'string', minLength: 1, maxLength: 255 } satisfies JsonSchema;

/** A custom trait name, 1.6+: the {name} of PUT /traits/{name} (validated as a bare string). */
export const CUSTOM_TRAIT = { ...TRAIT, pattern: CUSTOM_TRAIT_PATTERN } satisfies JsonSchema;

/** A list of custom traits, 1.6+ (defined upstream, used by no handler). */
const PUT_TRAITS_1_6 = {
  type: 'object',
  properties: {
    traits: { type: 'array', items: CUSTOM_TRAIT },
  },
  required: ['traits'],
  additionalProperties: false,
} satisfies JsonSchema;

/** PUT /resource_providers/{uuid}/traits body, 1.6+: any trait names plus the provider generation. */
export const PUT_RESOURCE_PROVIDER_TRAITS_1_6 = {
  ...PUT_TRAITS_1_6,
  properties: {
    ...PUT_TRAITS_1_6.properties,
    traits: { ...PUT_TRAITS_1_6.properties.traits, items: TRAIT },
    resource_provider_generation: { type: 'integer' },
  },
  required: [...PUT_TRAITS_1_6.required, 'resource_provider_generation'],
} satisfies JsonSchema;

/** GET /traits query, 1.6+: name and associated (their syntax is checked by the handler). */
export const LIST_TRAITS_QUERY_1_6 = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    associated: { type: 'string' },
  },
  additionalProperties: false,
} satisfies JsonSchema;
