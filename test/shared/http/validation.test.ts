import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../shared/api/errors.js';
import { pyRepr } from '../../../shared/api/python-repr.js';
import { isValid, validateBody, validateQuery, type JsonSchema } from '../../../shared/http/validation.js';
import { isUuidLike } from '../../../shared/domain/uuid.js';
import { PUT_AGGREGATES_1_19 } from '../../../shared/schemas/aggregate.js';
import { PUT_ALLOCATIONS_1_12, PUT_ALLOCATIONS_1_28, PUT_ALLOCATIONS_1_38, POST_ALLOCATIONS_1_34 } from '../../../shared/schemas/allocation.js';
import {
  LIST_ALLOCATION_CANDIDATES_QUERY_1_10,
  LIST_ALLOCATION_CANDIDATES_QUERY_1_16,
  LIST_ALLOCATION_CANDIDATES_QUERY_1_25,
  LIST_ALLOCATION_CANDIDATES_QUERY_1_33,
} from '../../../shared/schemas/allocation-candidate.js';
import { PUT_INVENTORY_1_0, POST_INVENTORY_1_0 } from '../../../shared/schemas/inventory.js';
import { POST_RESHAPER_1_30 } from '../../../shared/schemas/reshaper.js';
import { POST_RESOURCE_CLASS_1_2 } from '../../../shared/schemas/resource-class.js';
import {
  LIST_RESOURCE_PROVIDERS_QUERY_1_0,
  POST_RESOURCE_PROVIDER_1_0,
  POST_RESOURCE_PROVIDER_1_14,
  PUT_RESOURCE_PROVIDER_1_14,
} from '../../../shared/schemas/resource-provider.js';
import { CUSTOM_TRAIT } from '../../../shared/schemas/trait.js';
import { LIST_USAGES_QUERY_1_38 } from '../../../shared/schemas/usage.js';

const UUID = '12345678-1234-5678-1234-567812345678';

/** The 400's message, or undefined when the value is valid. */
function bodyError(schema: JsonSchema, body: unknown): string | undefined {
  try {
    validateBody(schema, body);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    return (error as HttpError).message;
  }
}

function queryError(schema: JsonSchema, params: Record<string, string>): string | undefined {
  try {
    validateQuery(schema, params);
    return undefined;
  } catch (error) {
    expect((error as HttpError).status).toBe(400);
    return (error as HttpError).message;
  }
}

describe('error messages', () => {
  it('reports a type error with its schema path and instance', () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } };
    expect(bodyError(schema, { a: [1, 2] })).toBe(
      "JSON does not validate: 1 is not of type 'string'  Failed validating 'type' in schema['properties']['a']['items']:" +
        "     {'type': 'string'}  On instance['a'][0]:     1",
    );
    expect(bodyError({ type: ['integer', 'null'] }, 'x')).toMatch(/^JSON does not validate: 'x' is not of type 'integer', 'null'/);
  });

  it('renders values as Python reprs', () => {
    expect(bodyError({ type: 'string' }, true)).toMatch(/: True is not of type 'string'/);
    expect(bodyError({ type: 'string' }, null)).toMatch(/: None is not of type 'string'/);
    expect(bodyError({ type: 'string' }, { a: [false, 1.5] })).toMatch(/: \{'a': \[False, 1\.5\]\} is not of type 'string'/);
    expect(pyRepr("it's")).toBe(`"it's"`);
    expect(pyRepr('a\nb\u00a0')).toBe("'a\\nb\\xa0'");
    expect(pyRepr(1e-5)).toBe('1e-05');
    expect(pyRepr(3.40282e38)).toBe('3.40282e+38');
  });

  it('names a missing required property', () => {
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, {})).toMatch(
      /^JSON does not validate: 'name' is a required property {2}Failed validating 'required' in schema:/,
    );
  });

  it('lists unexpected properties, sorted', () => {
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 'n', foo: 1, bar: 2 })).toMatch(
      /: Additional properties are not allowed \('bar', 'foo' were unexpected\)/,
    );
  });

  it('matches upstream byte for byte, schema laid out by pprint', () => {
    // As returned by the real Placement 8.0.0 for POST /resource_providers at 1.0.
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 1, foo: 2 })).toBe(
      "JSON does not validate: Additional properties are not allowed ('foo' was unexpected)" +
        "  Failed validating 'additionalProperties' in schema:     {'additionalProperties': False, " +
        "     'properties': {'name': {'maxLength': 200, 'type': 'string'}, " +
        "                    'uuid': {'format': 'uuid', 'type': 'string'}}, " +
        "     'required': ['name'],      'type': 'object'}  On instance:     {'foo': 2, 'name': 1}",
    );
  });

  it('splits a long string instance the way pprint does', () => {
    const name = `This is a long text of 201 characters ${'s'.repeat(170)}`;
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name })).toContain(
      `On instance['name']:     ('This is a long text of 201 characters '      '${'s'.repeat(170)}')`,
    );
  });

  it('reports pattern, minimum, maximum and length failures', () => {
    expect(bodyError(POST_INVENTORY_1_0, { resource_class: 'x', total: 1 })).toMatch(/: 'x' does not match '\^\[A-Z0-9_\]\+\$'/);
    const total0 = bodyError(PUT_INVENTORY_1_0, { resource_provider_generation: 1, total: 0 });
    expect(total0).toContain('JSON does not validate: 0 is less than the minimum of 1');
    expect(total0).toContain("Failed validating 'minimum' in schema['properties']['total']");
    expect(bodyError(PUT_INVENTORY_1_0, { resource_provider_generation: 1, total: 1, reserved: -1 })).toMatch(/: -1 is less than the minimum of 0/);
    expect(bodyError(PUT_INVENTORY_1_0, { resource_provider_generation: 1, total: 2147483648 })).toMatch(
      /: 2147483648 is greater than the maximum of 2147483647/,
    );
    expect(bodyError(PUT_INVENTORY_1_0, { resource_provider_generation: 1, total: 1, allocation_ratio: 3.5e38 })).toMatch(
      /: 3\.5e\+38 is greater than the maximum of 3\.40282e\+38/,
    );
    expect(bodyError(PUT_ALLOCATIONS_1_12, { allocations: {}, project_id: '', user_id: 'u' })).toMatch(/: \{\} does not have enough properties/);
    expect(bodyError({ type: 'array', minItems: 1 }, [])).toMatch(/: \[\] is too short/);
    expect(bodyError({ type: 'string', maxLength: 2 }, 'abc')).toMatch(/: 'abc' is too long/);
  });

  it('reports enum and uniqueness failures', () => {
    expect(queryError(LIST_ALLOCATION_CANDIDATES_QUERY_1_25, { group_policy: 'bogus' })).toMatch(
      /^Invalid query string parameters: 'bogus' is not one of \['none', 'isolate'\]/,
    );
    expect(bodyError(PUT_AGGREGATES_1_19, { aggregates: [UUID, UUID], resource_provider_generation: 1 })).toMatch(/has non-unique elements/);
  });

  it("applies upstream's uuid format (oslo is_uuid_like, shared/domain/uuid.ts), to any type", () => {
    expect(isValid({ format: 'uuid' }, `urn:uuid:${UUID}`)).toBe(true);
    expect(isValid({ format: 'uuid' }, `URN:UUID:${UUID}`)).toBe(false);
    for (const ok of [
      UUID,
      UUID.toUpperCase(),
      UUID.replaceAll('-', ''),
      `{${UUID}}`,
      `urn:uuid:${UUID}`,
      '1234-5678123456781234567812345678',
      `urn:urn:uuid:uuid:${UUID}`,
    ]) {
      expect(isUuidLike(ok)).toBe(true);
    }
    for (const bad of ['abc', UUID.slice(1), `g${UUID.slice(1)}`, ` ${UUID}`, `${UUID}\n`, 42, null]) {
      expect(isUuidLike(bad)).toBe(false);
    }
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 'n', uuid: 'abc' })).toMatch(
      /: 'abc' is not a 'uuid' {2}Failed validating 'format' in schema\['properties'\]\['uuid'\]/,
    );
    expect(bodyError({ format: 'uuid' }, 7)).toMatch(/: 7 is not a 'uuid'/);
  });

  it('descends into anyOf for the most specific branch error, else reports anyOf itself', () => {
    expect(bodyError(POST_RESOURCE_PROVIDER_1_14, { name: 'n', parent_provider_uuid: 'abc' })).toBe(
      "JSON does not validate: 'abc' is not a 'uuid'  Failed validating 'format' in schema[0]:" +
        "     {'format': 'uuid', 'type': 'string'}  On instance:     'abc'",
    );
    expect(bodyError(POST_RESOURCE_PROVIDER_1_14, { name: 'n', parent_provider_uuid: 123 })).toMatch(
      /: 123 is not valid under any of the given schemas {2}Failed validating 'anyOf' in schema\['properties'\]\['parent_provider_uuid'\]/,
    );
  });

  it('requires exactly one oneOf branch', () => {
    const schema: JsonSchema = { oneOf: [{ type: 'integer' }, { type: 'number' }] };
    expect(bodyError(schema, 1.5)).toBeUndefined();
    expect(bodyError(schema, 1)).toMatch(/: 1 is valid under each of \{'type': 'number'\}, \{'type': 'integer'\}/);
    expect(bodyError(schema, 'x')).toMatch(/: 'x' is not valid under any of the given schemas/);
  });

  it('picks the error upstream picks: shallowest first, then schema key order', () => {
    // The unexpected key (depth 0) wins over the bad name type (depth 1).
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 1, foo: 2 })).toMatch(/: Additional properties are not allowed/);
    // `required` comes before `additionalProperties` in the schema.
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { foo: 2 })).toMatch(/: 'name' is a required property/);
  });

  it("treats `$` as Python's re does (also before a final newline)", () => {
    expect(isValid(CUSTOM_TRAIT, 'CUSTOM_FOO\n')).toBe(true);
    expect(isValid(CUSTOM_TRAIT, 'CUSTOM_FOO\nX')).toBe(false);
    expect(isValid(CUSTOM_TRAIT, 'FOO')).toBe(false);
  });
});

describe('validateQuery', () => {
  it('uses the query-string prefix and rejects unknown parameters', () => {
    expect(queryError(LIST_RESOURCE_PROVIDERS_QUERY_1_0, { foo: 'x' })).toMatch(
      /^Invalid query string parameters: Additional properties are not allowed \('foo' was unexpected\)/,
    );
    expect(queryError(LIST_RESOURCE_PROVIDERS_QUERY_1_0, { name: 'x', uuid: UUID })).toBeUndefined();
  });

  it('checks required parameters, patterns and request-group names', () => {
    expect(queryError(LIST_ALLOCATION_CANDIDATES_QUERY_1_10, {})).toMatch(/: 'resources' is a required property/);
    const limit = queryError(LIST_ALLOCATION_CANDIDATES_QUERY_1_16, { resources: 'VCPU:1', limit: '0' });
    expect(limit).toMatch(/: '0' does not match '\^\[1-9\]\[0-9\]\*\$'/);
    expect(limit).toContain("Failed validating 'pattern' in schema['properties']['limit']");
    expect(queryError(LIST_ALLOCATION_CANDIDATES_QUERY_1_25, { resources01: 'VCPU:1' })).toMatch(
      /: 'resources01' does not match any of the regexes: '\^member_of\(\[1-9\]\[0-9\]\*\)\?\$', '\^required/,
    );
    expect(queryError(LIST_ALLOCATION_CANDIDATES_QUERY_1_25, { resources1: 'VCPU:1', group_policy: 'none' })).toBeUndefined();
    expect(queryError(LIST_ALLOCATION_CANDIDATES_QUERY_1_33, { resources_a: 'VCPU:1', in_tree_a: UUID })).toBeUndefined();
    expect(queryError(LIST_ALLOCATION_CANDIDATES_QUERY_1_33, { 'resources1@': 'VCPU:1' })).toMatch(/'resources1@' does not match any of the regexes/);
  });

  it('checks string lengths and the consumer_type filter', () => {
    expect(queryError(LIST_USAGES_QUERY_1_38, { project_id: '' })).toMatch(/: '' is too short/);
    expect(queryError(LIST_USAGES_QUERY_1_38, { project_id: 'p', consumer_type: 'all' })).toBeUndefined();
    expect(queryError(LIST_USAGES_QUERY_1_38, { project_id: 'p', consumer_type: 'x' })).toMatch(/: 'x' does not match '\^\[A-Z0-9_\]\+\$\|\^all\|\^unknown\$'/);
  });
});

describe('schemas', () => {
  it('POST /resource_providers: unknown fields are rejected, parent_provider_uuid only from 1.14', () => {
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 'n', uuid: UUID })).toBeUndefined();
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 'n', bogus: 1 })).toMatch(/'bogus' was unexpected/);
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 'n', parent_provider_uuid: UUID })).toMatch(/'parent_provider_uuid' was unexpected/);
    expect(bodyError(POST_RESOURCE_PROVIDER_1_14, { name: 'n', parent_provider_uuid: UUID })).toBeUndefined();
    expect(bodyError(POST_RESOURCE_PROVIDER_1_14, { name: 'n', parent_provider_uuid: null })).toBeUndefined();
    expect(bodyError(POST_RESOURCE_PROVIDER_1_0, { name: 'x'.repeat(201) })).toContain("Failed validating 'maxLength'");
  });

  it('PUT /resource_providers/{uuid} has no uuid field', () => {
    expect(bodyError(PUT_RESOURCE_PROVIDER_1_14, { name: 'n', uuid: UUID })).toMatch(/'uuid' was unexpected/);
    expect(bodyError(PUT_RESOURCE_PROVIDER_1_14, { name: 'n', parent_provider_uuid: UUID })).toBeUndefined();
  });

  it('PUT /allocations: consumer_generation from 1.28, consumer_type from 1.38', () => {
    const body = { allocations: { [UUID]: { resources: { VCPU: 1 } } }, project_id: 'p', user_id: 'u' };
    expect(bodyError(PUT_ALLOCATIONS_1_12, body)).toBeUndefined();
    expect(bodyError(PUT_ALLOCATIONS_1_28, body)).toMatch(/: 'consumer_generation' is a required property/);
    expect(bodyError(PUT_ALLOCATIONS_1_28, { ...body, consumer_generation: null })).toBeUndefined();
    expect(bodyError(PUT_ALLOCATIONS_1_28, { ...body, allocations: {}, consumer_generation: 3 })).toBeUndefined();
    expect(bodyError(PUT_ALLOCATIONS_1_38, { ...body, consumer_generation: 1 })).toMatch(/: 'consumer_type' is a required property/);
    expect(bodyError(PUT_ALLOCATIONS_1_38, { ...body, consumer_generation: 1, consumer_type: 'INSTANCE' })).toBeUndefined();
    expect(bodyError(PUT_ALLOCATIONS_1_38, { ...body, consumer_generation: 1, consumer_type: 'instance' })).toMatch(
      /: 'instance' does not match '\^\[A-Z0-9_\]\+\$'/,
    );
    expect(bodyError(PUT_ALLOCATIONS_1_28, { ...body, allocations: { [UUID]: { resources: { vcpu: 1 } } }, consumer_generation: 1 })).toMatch(
      /: 'vcpu' does not match any of the regexes: '\^\[A-Z0-9_\]\+\$'/,
    );
  });

  it('POST /allocations 1.34 checks mappings', () => {
    const consumer = { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null };
    expect(bodyError(POST_ALLOCATIONS_1_34, { [UUID]: { ...consumer, mappings: { '': [UUID] } } })).toBeUndefined();
    expect(bodyError(POST_ALLOCATIONS_1_34, { [UUID]: { ...consumer, mappings: { alpha: 'beta' } } })).toMatch(
      /^JSON does not validate: 'beta' is not of type 'array'/,
    );
    expect(bodyError(POST_ALLOCATIONS_1_34, { [UUID]: { ...consumer, mappings: {} } })).toMatch(/: \{\} does not have enough properties/);
    expect(bodyError(POST_ALLOCATIONS_1_34, {})).toMatch(/: \{\} does not have enough properties/);
  });

  it('POST /reshaper accepts empty allocations but needs inventories', () => {
    const inventories = { [UUID]: { resource_provider_generation: 1, inventories: { VCPU: { total: 4 } } } };
    expect(bodyError(POST_RESHAPER_1_30, { inventories, allocations: {} })).toBeUndefined();
    expect(bodyError(POST_RESHAPER_1_30, { inventories: {}, allocations: {} })).toMatch(/: \{\} does not have enough properties/);
  });

  it('resource class names must be CUSTOM_', () => {
    expect(bodyError(POST_RESOURCE_CLASS_1_2, { name: 'CUSTOM_GOLD' })).toBeUndefined();
    expect(bodyError(POST_RESOURCE_CLASS_1_2, { name: 'GOLD' })).toMatch(/: 'GOLD' does not match '\^CUSTOM_\[A-Z0-9_\]\+\$'/);
  });
});
