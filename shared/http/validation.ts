/**
 * A small JSON-Schema (draft-4 subset) validator whose messages read like
 * Python jsonschema's, which upstream Placement's clients and tests expect.
 */
import { badRequest } from './errors.js';
import { isUuidLike } from '../domain/uuid.js';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  minProperties?: number;
  maxProperties?: number;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: 'uuid';
}

/** Python repr of a JSON value, as jsonschema prints instances. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'number') return Number.isInteger(value) && !Object.is(value, -0) ? String(value) : String(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(value as object).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(', ')}}`;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

const deepEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The first error message for `value`, or undefined when it validates. */
export function firstError(schema: JsonSchema, value: unknown): string | undefined {
  if (schema.type !== undefined) {
    const types = [schema.type].flat();
    if (!types.some((type) => matchesType(value, type))) {
      return `${pyRepr(value)} is not of type ${types.map((type) => pyRepr(type)).join(', ')}`;
    }
  }
  if (schema.enum && !schema.enum.some((option) => deepEqual(option, value))) {
    return `${pyRepr(value)} is not one of ${pyRepr(schema.enum)}`;
  }
  if (schema.anyOf && !schema.anyOf.some((option) => firstError(option, value) === undefined)) {
    return `${pyRepr(value)} is not valid under any of the given schemas`;
  }
  if (schema.oneOf) {
    const valid = schema.oneOf.filter((option) => firstError(option, value) === undefined).length;
    if (valid === 0) return `${pyRepr(value)} is not valid under any of the given schemas`;
    if (valid > 1) return `${pyRepr(value)} is valid under each of ${schema.oneOf.map((s) => pyRepr(s)).join(', ')}`;
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && [...value].length < schema.minLength) return `${pyRepr(value)} is too short`;
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) return `${pyRepr(value)} is too long`;
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
      return `${pyRepr(value)} does not match ${pyRepr(schema.pattern)}`;
    }
    if (schema.format === 'uuid' && !isUuidLike(value)) return `${pyRepr(value)} is not a 'uuid'`;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${pyRepr(value)} is less than the minimum of ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${pyRepr(value)} is greater than the maximum of ${schema.maximum}`;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return `${pyRepr(value)} is too short`;
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return `${pyRepr(value)} is too long`;
    if (schema.uniqueItems && new Set(value.map((item) => JSON.stringify(item))).size !== value.length) {
      return `${pyRepr(value)} has non-unique elements`;
    }
    if (schema.items) {
      for (const item of value) {
        const error = firstError(schema.items, item);
        if (error) return error;
      }
    }
  }
  if (typeOf(value) === 'object') return objectError(schema, value as Record<string, unknown>);
  return undefined;
}

function objectError(schema: JsonSchema, value: Record<string, unknown>): string | undefined {
  const keys = Object.keys(value);
  for (const name of schema.required ?? []) {
    if (!(name in value)) return `${pyRepr(name)} is a required property`;
  }
  if (schema.minProperties !== undefined && keys.length < schema.minProperties) return `${pyRepr(value)} does not have enough properties`;
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) return `${pyRepr(value)} has too many properties`;
  const extras: string[] = [];
  for (const key of keys) {
    const patterns = Object.entries(schema.patternProperties ?? {}).filter(([pattern]) => new RegExp(pattern, 'u').test(key));
    const declared = schema.properties?.[key];
    for (const child of [declared, ...patterns.map(([, child]) => child)]) {
      if (child === undefined) continue;
      const error = firstError(child, value[key]);
      if (error) return error;
    }
    if (declared === undefined && patterns.length === 0) {
      if (schema.additionalProperties === false) extras.push(key);
      else if (typeof schema.additionalProperties === 'object') {
        const error = firstError(schema.additionalProperties, value[key]);
        if (error) return error;
      }
    }
  }
  if (extras.length > 0) {
    const verb = extras.length === 1 ? 'was' : 'were';
    return `Additional properties are not allowed (${extras.map((key) => pyRepr(key)).join(', ')} ${verb} unexpected)`;
  }
  return undefined;
}

export function validateBody(schema: JsonSchema, body: unknown): void {
  const error = firstError(schema, body);
  if (error !== undefined) throw badRequest(`JSON does not validate: ${error}`);
}

export function validateQuery(schema: JsonSchema, params: Record<string, string>): void {
  const error = firstError(schema, params);
  if (error !== undefined) throw badRequest(`Invalid query string parameters: ${error}`);
}
