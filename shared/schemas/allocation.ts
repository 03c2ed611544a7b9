// Bodies of PUT /allocations/{consumer_uuid} and POST /allocations.
import type { JsonSchema } from '../api/json-schema.js';
import { GROUP_PAT_1_33 } from '../domain/candidate-request.js';
import { CONSUMER_TYPE_PATTERN, RC_PATTERN, UUID_PATTERN, UUID_STRING } from './common.js';

/** Amounts keyed by resource class: at least one, each a positive integer. */
const RESOURCES = {
  type: 'object',
  minProperties: 1,
  patternProperties: { [RC_PATTERN]: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
} satisfies JsonSchema;

const PROJECT_OR_USER_ID = { type: 'string', minLength: 1, maxLength: 255 } satisfies JsonSchema;

/** PUT /allocations/{consumer_uuid} body, 1.0–1.7: a non-empty list of provider/resources pairs. */
export const PUT_ALLOCATIONS_1_0 = {
  type: 'object',
  properties: {
    allocations: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          resource_provider: {
            type: 'object',
            properties: { uuid: UUID_STRING },
            additionalProperties: false,
            required: ['uuid'],
          },
          resources: RESOURCES,
        },
        required: ['resource_provider', 'resources'],
        additionalProperties: false,
      },
    },
  },
  required: ['allocations'],
  additionalProperties: false,
} satisfies JsonSchema;

/** PUT /allocations/{consumer_uuid} body, 1.8–1.11: adds required project_id and user_id. */
export const PUT_ALLOCATIONS_1_8 = {
  ...PUT_ALLOCATIONS_1_0,
  properties: { ...PUT_ALLOCATIONS_1_0.properties, project_id: PROJECT_OR_USER_ID, user_id: PROJECT_OR_USER_ID },
  required: [...PUT_ALLOCATIONS_1_0.required, 'project_id', 'user_id'],
} satisfies JsonSchema;

/** PUT /allocations/{consumer_uuid} body, 1.12–1.27: allocations become an object keyed by provider uuid. */
export const PUT_ALLOCATIONS_1_12 = {
  type: 'object',
  properties: {
    allocations: {
      type: 'object',
      minProperties: 1,
      patternProperties: {
        [UUID_PATTERN]: {
          type: 'object',
          properties: {
            generation: { type: 'integer' },
            resources: RESOURCES,
          },
          required: ['resources'],
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    project_id: PROJECT_OR_USER_ID,
    user_id: PROJECT_OR_USER_ID,
  },
  additionalProperties: false,
  required: ['allocations', 'project_id', 'user_id'],
} satisfies JsonSchema;

/** One consumer's entry of the POST /allocations body, 1.13–1.27: like PUT 1.12 but allocations may be empty. */
const CONSUMER_ALLOCATIONS_1_13 = {
  ...PUT_ALLOCATIONS_1_12,
  properties: {
    ...PUT_ALLOCATIONS_1_12.properties,
    allocations: { ...PUT_ALLOCATIONS_1_12.properties.allocations, minProperties: 0 },
  },
} satisfies JsonSchema;

/** POST /allocations body, 1.13–1.27: consumer entries keyed by consumer uuid. */
export const POST_ALLOCATIONS_1_13 = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  patternProperties: { [UUID_PATTERN]: CONSUMER_ALLOCATIONS_1_13 },
} satisfies JsonSchema;

/**
 * PUT /allocations/{consumer_uuid} body, 1.28–1.33: adds required consumer_generation (null for a
 * new consumer); allocations may be empty. Also each consumer's entry of POST /allocations 1.28–1.33.
 */
export const PUT_ALLOCATIONS_1_28 = {
  ...CONSUMER_ALLOCATIONS_1_13,
  properties: {
    ...CONSUMER_ALLOCATIONS_1_13.properties,
    consumer_generation: { type: ['integer', 'null'], additionalProperties: false },
  },
  required: [...CONSUMER_ALLOCATIONS_1_13.required, 'consumer_generation'],
} satisfies JsonSchema;

/** POST /allocations body, 1.28–1.33. */
export const POST_ALLOCATIONS_1_28 = {
  ...POST_ALLOCATIONS_1_13,
  patternProperties: { [UUID_PATTERN]: PUT_ALLOCATIONS_1_28 },
} satisfies JsonSchema;

/** The optional mappings member, 1.34+: request-group suffix to a non-empty list of provider uuids. */
const MAPPINGS_1_34 = {
  type: 'object',
  minProperties: 1,
  patternProperties: {
    [GROUP_PAT_1_33]: { type: 'array', minItems: 1, items: UUID_STRING },
  },
} satisfies JsonSchema;

/** PUT /allocations/{consumer_uuid} body, 1.34–1.37: adds optional mappings. */
export const PUT_ALLOCATIONS_1_34 = {
  ...PUT_ALLOCATIONS_1_28,
  properties: { ...PUT_ALLOCATIONS_1_28.properties, mappings: MAPPINGS_1_34 },
} satisfies JsonSchema;

/** POST /allocations body, 1.34–1.37. */
export const POST_ALLOCATIONS_1_34 = {
  ...POST_ALLOCATIONS_1_28,
  patternProperties: { [UUID_PATTERN]: PUT_ALLOCATIONS_1_34 },
} satisfies JsonSchema;

/** PUT /allocations/{consumer_uuid} body, 1.38+: adds required consumer_type. */
export const PUT_ALLOCATIONS_1_38 = {
  ...PUT_ALLOCATIONS_1_34,
  properties: {
    ...PUT_ALLOCATIONS_1_34.properties,
    consumer_type: { type: 'string', pattern: CONSUMER_TYPE_PATTERN, minLength: 1, maxLength: 255 },
  },
  required: [...PUT_ALLOCATIONS_1_34.required, 'consumer_type'],
} satisfies JsonSchema;

/** POST /allocations body, 1.38+. */
export const POST_ALLOCATIONS_1_38 = {
  ...POST_ALLOCATIONS_1_34,
  patternProperties: { [UUID_PATTERN]: PUT_ALLOCATIONS_1_38 },
} satisfies JsonSchema;
