// Bodies of POST /resource_providers and PUT /resource_providers/{uuid}; query string of GET /resource_providers.
import type { JsonSchema } from '../api/json-schema.js';
import { omit, UUID_STRING } from './common.js';

/** POST /resource_providers body, 1.0–1.13. */
export const POST_RESOURCE_PROVIDER_1_0 = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 200 },
    uuid: UUID_STRING,
  },
  required: ['name'],
  additionalProperties: false,
} satisfies JsonSchema;

/** PUT /resource_providers/{uuid} body, 1.0–1.13: the POST body without uuid. */
export const PUT_RESOURCE_PROVIDER_1_0 = {
  ...POST_RESOURCE_PROVIDER_1_0,
  properties: omit(POST_RESOURCE_PROVIDER_1_0.properties, 'uuid'),
} satisfies JsonSchema;

/** POST /resource_providers body, 1.14+: adds an optional (nullable) parent_provider_uuid. */
export const POST_RESOURCE_PROVIDER_1_14 = {
  ...POST_RESOURCE_PROVIDER_1_0,
  properties: {
    ...POST_RESOURCE_PROVIDER_1_0.properties,
    parent_provider_uuid: { anyOf: [UUID_STRING, { type: 'null' }] },
  },
} satisfies JsonSchema;

/** PUT /resource_providers/{uuid} body, 1.14+: the 1.14 POST body without uuid. */
export const PUT_RESOURCE_PROVIDER_1_14 = {
  ...POST_RESOURCE_PROVIDER_1_14,
  properties: omit(POST_RESOURCE_PROVIDER_1_14.properties, 'uuid'),
} satisfies JsonSchema;

/** GET /resource_providers query, 1.0–1.2: name, uuid. */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_0 = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    uuid: UUID_STRING,
  },
  additionalProperties: false,
} satisfies JsonSchema;

/** GET /resource_providers query, 1.3: adds member_of. */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_3 = {
  ...LIST_RESOURCE_PROVIDERS_QUERY_1_0,
  properties: { ...LIST_RESOURCE_PROVIDERS_QUERY_1_0.properties, member_of: { type: 'string' } },
} satisfies JsonSchema;

/** GET /resource_providers query, 1.4–1.13: adds resources (its syntax is checked by the handler). */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_4 = {
  ...LIST_RESOURCE_PROVIDERS_QUERY_1_3,
  properties: { ...LIST_RESOURCE_PROVIDERS_QUERY_1_3.properties, resources: { type: 'string' } },
} satisfies JsonSchema;

/** GET /resource_providers query, 1.14–1.17: adds in_tree (a uuid). */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_14 = {
  ...LIST_RESOURCE_PROVIDERS_QUERY_1_4,
  properties: { ...LIST_RESOURCE_PROVIDERS_QUERY_1_4.properties, in_tree: UUID_STRING },
} satisfies JsonSchema;

/** GET /resource_providers query, 1.18+: adds required (trait list, syntax checked by the handler). */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_18 = {
  ...LIST_RESOURCE_PROVIDERS_QUERY_1_14,
  properties: { ...LIST_RESOURCE_PROVIDERS_QUERY_1_14.properties, required: { type: 'string' } },
} satisfies JsonSchema;
