/** Request bodies and query strings of /resource_providers and /resource_providers/{uuid}. */
import type { JsonSchema } from '../http/validation.js';

const NAME: JsonSchema = { type: 'string', maxLength: 200 };
const UUID: JsonSchema = { type: 'string', format: 'uuid' };

/** POST /resource_providers, 1.0–1.13. */
export const POST_RESOURCE_PROVIDER_1_0: JsonSchema = {
  type: 'object',
  properties: { name: NAME, uuid: UUID },
  required: ['name'],
  additionalProperties: false,
};

/** POST /resource_providers, 1.14+: a parent may be named. */
export const POST_RESOURCE_PROVIDER_1_14: JsonSchema = {
  ...POST_RESOURCE_PROVIDER_1_0,
  properties: { ...POST_RESOURCE_PROVIDER_1_0.properties, parent_provider_uuid: { anyOf: [UUID, { type: 'null' }] } },
};

const withoutUuid = (schema: JsonSchema): JsonSchema => {
  const { uuid: _uuid, ...properties } = schema.properties!;
  return { ...schema, properties };
};

/** PUT /resource_providers/{uuid}, 1.0–1.13. */
export const PUT_RESOURCE_PROVIDER_1_0 = withoutUuid(POST_RESOURCE_PROVIDER_1_0);
/** PUT /resource_providers/{uuid}, 1.14+. */
export const PUT_RESOURCE_PROVIDER_1_14 = withoutUuid(POST_RESOURCE_PROVIDER_1_14);

/** GET /resource_providers query, 1.0–1.2. */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_0: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, uuid: UUID },
  additionalProperties: false,
};

const extend = (schema: JsonSchema, properties: Record<string, JsonSchema>): JsonSchema => ({
  ...schema,
  properties: { ...schema.properties, ...properties },
});

/** 1.3–1.3: member_of. */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_3 = extend(LIST_RESOURCE_PROVIDERS_QUERY_1_0, { member_of: { type: 'string' } });
/** 1.4–1.13: resources. */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_4 = extend(LIST_RESOURCE_PROVIDERS_QUERY_1_3, { resources: { type: 'string' } });
/** 1.14–1.17: in_tree. */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_14 = extend(LIST_RESOURCE_PROVIDERS_QUERY_1_4, { in_tree: UUID });
/** 1.18+: required traits. */
export const LIST_RESOURCE_PROVIDERS_QUERY_1_18 = extend(LIST_RESOURCE_PROVIDERS_QUERY_1_14, { required: { type: 'string' } });
