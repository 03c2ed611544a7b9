// Query string of GET /allocation_candidates.
import type { JsonSchema } from '../api/json-schema.js';
import { GROUP_PAT, GROUP_PAT_1_33 } from '../domain/candidate-request.js';
import { omit } from './common.js';

/** GET /allocation_candidates query, 1.10–1.15: resources (required). */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_10 = {
  type: 'object',
  properties: {
    resources: { type: 'string' },
  },
  required: ['resources'],
  additionalProperties: false,
} satisfies JsonSchema;

/** GET /allocation_candidates query, 1.16: adds limit (a positive integer). */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_16 = {
  ...LIST_ALLOCATION_CANDIDATES_QUERY_1_10,
  properties: {
    ...LIST_ALLOCATION_CANDIDATES_QUERY_1_10.properties,
    limit: { type: ['integer', 'string'], pattern: '^[1-9][0-9]*$', minimum: 1, minLength: 1 },
  },
} satisfies JsonSchema;

/** GET /allocation_candidates query, 1.17–1.20: adds required (traits). */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_17 = {
  ...LIST_ALLOCATION_CANDIDATES_QUERY_1_16,
  properties: { ...LIST_ALLOCATION_CANDIDATES_QUERY_1_16.properties, required: { type: ['string'] } },
} satisfies JsonSchema;

/** GET /allocation_candidates query, 1.21–1.24: adds member_of. */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_21 = {
  ...LIST_ALLOCATION_CANDIDATES_QUERY_1_17,
  properties: { ...LIST_ALLOCATION_CANDIDATES_QUERY_1_17.properties, member_of: { type: ['string'] } },
} satisfies JsonSchema;

/** `^<name>(<suffix>)?$`: an unsuffixed or suffixed request-group parameter. */
const groupPattern = (name: string, suffix: string) => `^${name}(${suffix})?$`;
const groupParams = (names: string[], suffix: string): Record<string, JsonSchema> =>
  Object.fromEntries(names.map((name) => [groupPattern(name, suffix), { type: 'string' }]));

/**
 * GET /allocation_candidates query, 1.25–1.30: resources, required and member_of become
 * (optionally numbered) request-group parameters, nothing is required; adds group_policy.
 */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_25 = {
  ...omit(LIST_ALLOCATION_CANDIDATES_QUERY_1_21, 'required'),
  properties: {
    ...omit(LIST_ALLOCATION_CANDIDATES_QUERY_1_21.properties, 'resources', 'required', 'member_of'),
    group_policy: { type: 'string', enum: ['none', 'isolate'] },
  },
  patternProperties: groupParams(['resources', 'required', 'member_of'], GROUP_PAT),
} satisfies JsonSchema;

/** GET /allocation_candidates query, 1.31–1.32: adds the in_tree request-group parameter. */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_31 = {
  ...LIST_ALLOCATION_CANDIDATES_QUERY_1_25,
  patternProperties: { ...LIST_ALLOCATION_CANDIDATES_QUERY_1_25.patternProperties, ...groupParams(['in_tree'], GROUP_PAT) },
} satisfies JsonSchema;

/** GET /allocation_candidates query, 1.33–1.34: group suffixes may be 1-64 of [a-zA-Z0-9_-]. */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_33 = {
  ...LIST_ALLOCATION_CANDIDATES_QUERY_1_31,
  patternProperties: groupParams(['resources', 'required', 'member_of', 'in_tree'], GROUP_PAT_1_33),
} satisfies JsonSchema;

/** GET /allocation_candidates query, 1.35: adds root_required. */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_35 = {
  ...LIST_ALLOCATION_CANDIDATES_QUERY_1_33,
  properties: { ...LIST_ALLOCATION_CANDIDATES_QUERY_1_33.properties, root_required: { type: ['string'] } },
} satisfies JsonSchema;

/** GET /allocation_candidates query, 1.36+: adds same_subtree. */
export const LIST_ALLOCATION_CANDIDATES_QUERY_1_36 = {
  ...LIST_ALLOCATION_CANDIDATES_QUERY_1_35,
  properties: { ...LIST_ALLOCATION_CANDIDATES_QUERY_1_35.properties, same_subtree: { type: ['string'] } },
} satisfies JsonSchema;
