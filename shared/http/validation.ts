/**
 * A small JSON-Schema validator covering the keywords Placement's schemas
 * use. It reports errors the way upstream does: Python jsonschema collects
 * every error, picks one with `best_match`, and the 400 detail carries that
 * error's text (message, failing keyword and schema, offending instance),
 * with values rendered as Python reprs and newlines flattened to spaces.
 */
import { badRequest } from './errors.js';

export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

/** The draft-4 keywords Placement's schemas use; they are checked in the object's key order, as upstream does. */
export interface JsonSchema {
  type?: JsonType | JsonType[];
  enum?: unknown[];
  format?: 'uuid';
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  // objects
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  minProperties?: number;
  maxProperties?: number;
  // arrays
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  // strings and numbers
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

type Path = (string | number)[];

interface SchemaError {
  message: string;
  keyword: string;
  /** Instance path, relative to the instance the enclosing anyOf/oneOf (or the root) saw. */
  path: Path;
  /** Schema path down to and including the keyword, relative in the same way. */
  schemaPath: Path;
  schema: JsonSchema;
  instance: unknown;
  context: SchemaError[];
}

type JsonObject = Record<string, unknown>;

const isType = (value: unknown, type: JsonType): boolean => {
  switch (type) {
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array': return Array.isArray(value);
    case 'integer': return Number.isInteger(value);
    case 'null': return value === null;
    default: return typeof value === type;
  }
};
const isObject = (value: unknown): value is JsonObject => isType(value, 'object');
const typesOf = (schema: JsonSchema): JsonType[] | undefined =>
  schema.type === undefined ? undefined : ([] as JsonType[]).concat(schema.type);
const codePoints = (s: string) => [...s].length;

/** oslo.utils' is_uuid_like: hex digits once "urn:", "uuid:", edge braces and dashes are dropped. */
export const isUuidLike = (value: unknown): boolean =>
  typeof value === 'string' &&
  /^[0-9a-fA-F]{32}$/.test(value.replaceAll('urn:', '').replaceAll('uuid:', '').replace(/^[{}]+|[{}]+$/g, '').replaceAll('-', ''));

const regexes = new Map<string, RegExp>();
/** Python's re.search, where a bare `$` also matches before a final newline. */
function search(pattern: string, text: string): boolean {
  let re = regexes.get(pattern);
  if (!re) regexes.set(pattern, (re = new RegExp(pattern.replace(/(?<!\\)\$/g, '(?=\\n?$)'), 'u')));
  return re.test(text);
}

const canonical = (value: unknown): string =>
  isObject(value)
    ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
    : Array.isArray(value) ? `[${value.map(canonical).join(',')}]` : JSON.stringify(value);

// ---- Python repr / pprint ----------------------------------------------------

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === quote) out += `\\${ch}`;
    else if (ESCAPES[ch]) out += ESCAPES[ch];
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      const [prefix, width] = code < 0x100 ? ['x', 2] : code < 0x10000 ? ['u', 4] : ['U', 8];
      out += `\\${prefix}${code.toString(16).padStart(width as number, '0')}`;
    } else out += ch;
  }
  return quote + out + quote;
}

function reprNumber(n: number): string {
  // JSON does not tell 1 from 1.0 once parsed: integral values below 1e16 print as ints.
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return String(n);
}

const sortedEntries = (o: JsonObject, sort: boolean) => {
  const entries = Object.entries(o);
  return sort ? entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : entries;
};

/** Python's repr() of a JSON value; `sortKeys` gives pprint's dict ordering. */
export function pyRepr(value: unknown, sortKeys = false): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return reprNumber(value);
  if (typeof value === 'string') return reprString(value);
  if (Array.isArray(value)) return `[${value.map((v) => pyRepr(v, sortKeys)).join(', ')}]`;
  const entries = sortedEntries(value as JsonObject, sortKeys);
  return `{${entries.map(([k, v]) => `${reprString(k)}: ${pyRepr(v, sortKeys)}`).join(', ')}}`;
}

const LINES = /[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])?/gu;

/** pprint's long-string layout: one repr per line, long lines cut after whitespace; parenthesised at top level. */
function pformatString(s: string, indent: number, allowance: number, top: boolean): string {
  if (top) [indent, allowance] = [indent + 1, allowance + 1];
  const lines = s.match(LINES)!.filter(Boolean);
  const chunks: string[] = [];
  lines.forEach((line, i) => {
    const lastLine = i === lines.length - 1;
    if (codePoints(reprString(line)) <= 72 - indent - (lastLine ? allowance : 0)) return void chunks.push(reprString(line));
    const parts = line.match(/\S*\s*/gu)!.filter(Boolean);
    let current = '';
    parts.forEach((part, j) => {
      const width = 72 - indent - (lastLine && j === parts.length - 1 ? allowance : 0);
      if (codePoints(reprString(current + part)) > width) {
        if (current) chunks.push(reprString(current));
        current = part;
      } else current += part;
    });
    if (current) chunks.push(reprString(current));
  });
  if (chunks.length <= 1) return reprString(s);
  const body = chunks.join(`\n${' '.repeat(indent)}`);
  return top ? `(${body})` : body;
}

/** pprint.pformat(value, width=72), the layout of the schema and instance in the error text. */
function pformat(value: unknown, indent = 0, allowance = 0, top = true): string {
  const rep = pyRepr(value, true);
  if (codePoints(rep) <= 72 - indent - allowance) return rep;
  if (typeof value === 'string') return pformatString(value, indent, allowance, top);
  if (typeof value !== 'object' || value === null) return rep;
  const sep = `,\n${' '.repeat(indent + 1)}`;
  const last = (i: number, n: number) => (i === n - 1 ? allowance + 1 : 1);
  if (Array.isArray(value)) {
    return `[${value.map((v, i) => pformat(v, indent + 1, last(i, value.length), false)).join(sep)}]`;
  }
  const entries = sortedEntries(value as JsonObject, true);
  return `{${entries.map(([k, v], i) => {
    const key = reprString(k);
    return `${key}: ${pformat(v, indent + 1 + codePoints(key) + 2, last(i, entries.length), false)}`;
  }).join(sep)}}`;
}

// ---- validation ------------------------------------------------------------

/** Appends to `out` every error of `instance` against `schema`, in jsonschema's order. */
function collect(schema: JsonSchema, instance: unknown, path: Path, schemaPath: Path, out: SchemaError[]): void {
  for (const [keyword, value] of Object.entries(schema) as [keyof JsonSchema, never][]) {
    const fail = (message: string, context: SchemaError[] = []) =>
      out.push({ message, keyword, path, schemaPath: [...schemaPath, keyword], schema, instance, context });
    const descend = (child: unknown, sub: JsonSchema, key: Path, schemaKey: Path) =>
      collect(sub, child, [...path, ...key], [...schemaPath, keyword, ...schemaKey], out);
    const subErrors = (sub: JsonSchema, index: number) => {
      const errors: SchemaError[] = [];
      collect(sub, instance, [], [index], errors);
      return errors;
    };
    const repr = pyRepr(instance);
    const s = schema as Required<JsonSchema>;
    switch (keyword) {
      case 'type': {
        const types = typesOf(schema)!;
        if (!types.some((t) => isType(instance, t))) fail(`${repr} is not of type ${types.map((t) => pyRepr(t)).join(', ')}`);
        break;
      }
      case 'properties':
        if (isObject(instance)) {
          for (const [name, sub] of Object.entries(s.properties)) {
            if (Object.hasOwn(instance, name)) descend(instance[name], sub, [name], [name]);
          }
        }
        break;
      case 'patternProperties':
        if (isObject(instance)) {
          for (const [pattern, sub] of Object.entries(s.patternProperties)) {
            for (const [name, child] of Object.entries(instance)) if (search(pattern, name)) descend(child, sub, [name], [pattern]);
          }
        }
        break;
      case 'additionalProperties': {
        if (!isObject(instance)) break;
        const patterns = Object.keys(schema.patternProperties ?? {});
        const extras = Object.keys(instance).filter(
          (name) => !Object.hasOwn(schema.properties ?? {}, name) && !patterns.some((p) => search(p, name)));
        if (isObject(value)) {
          for (const name of extras) descend(instance[name], value, [name], []);
        } else if (value === false && extras.length > 0) {
          const names = extras.sort().map((n) => pyRepr(n)).join(', ');
          if (schema.patternProperties) {
            const regexList = patterns.sort().map((p) => pyRepr(p)).join(', ');
            fail(`${names} ${extras.length === 1 ? 'does' : 'do'} not match any of the regexes: ${regexList}`);
          } else fail(`Additional properties are not allowed (${names} ${extras.length === 1 ? 'was' : 'were'} unexpected)`);
        }
        break;
      }
      case 'required':
        if (isObject(instance)) for (const name of s.required) if (!Object.hasOwn(instance, name)) fail(`${pyRepr(name)} is a required property`);
        break;
      case 'minProperties':
        if (isObject(instance) && Object.keys(instance).length < value) fail(`${repr} does not have enough properties`);
        break;
      case 'maxProperties':
        if (isObject(instance) && Object.keys(instance).length > value) fail(`${repr} has too many properties`);
        break;
      case 'pattern':
        if (typeof instance === 'string' && !search(value, instance)) fail(`${repr} does not match ${pyRepr(value)}`);
        break;
      case 'minLength':
      case 'maxLength':
        if (typeof instance === 'string' && (keyword === 'minLength' ? codePoints(instance) < value : codePoints(instance) > value)) {
          fail(`${repr} is too ${keyword === 'minLength' ? 'short' : 'long'}`);
        }
        break;
      case 'minimum':
        if (typeof instance === 'number' && instance < value) fail(`${repr} is less than the minimum of ${pyRepr(value)}`);
        break;
      case 'maximum':
        if (typeof instance === 'number' && instance > value) fail(`${repr} is greater than the maximum of ${pyRepr(value)}`);
        break;
      case 'enum':
        if (!s.enum.some((v) => canonical(v) === canonical(instance))) fail(`${repr} is not one of ${pyRepr(value)}`);
        break;
      case 'items':
        if (Array.isArray(instance)) instance.forEach((item, i) => descend(item, value, [i], []));
        break;
      case 'minItems':
      case 'maxItems':
        if (Array.isArray(instance) && (keyword === 'minItems' ? instance.length < value : instance.length > value)) {
          fail(`${repr} is too ${keyword === 'minItems' ? 'short' : 'long'}`);
        }
        break;
      case 'uniqueItems':
        if (value && Array.isArray(instance) && new Set(instance.map(canonical)).size < instance.length) fail(`${repr} has non-unique elements`);
        break;
      case 'anyOf':
      case 'oneOf': {
        const all: SchemaError[] = [];
        const valid: JsonSchema[] = [];
        for (const [i, sub] of (value as JsonSchema[]).entries()) {
          const errors = subErrors(sub, i);
          if (errors.length === 0) valid.push(sub);
          else if (valid.length === 0) all.push(...errors);
          if (valid.length > 0 && keyword === 'anyOf') break;
        }
        if (valid.length === 0) fail(`${repr} is not valid under any of the given schemas`, all);
        else if (valid.length > 1) {
          fail(`${repr} is valid under each of ${[...valid.slice(1), valid[0]].map((v) => pyRepr(v)).join(', ')}`);
        }
        break;
      }
      case 'format':
        if (value === 'uuid' && !isUuidLike(instance)) fail(`${repr} is not a 'uuid'`);
        break;
    }
  }
}

const WEAK = new Set(['anyOf', 'oneOf']);
/** jsonschema's `relevance` key, folded into a number (higher is more relevant). */
function relevance(e: SchemaError): number {
  const types = typesOf(e.schema);
  const matchesType = types !== undefined && types.some((t) => isType(e.instance, t));
  return -e.path.length * 4 + (WEAK.has(e.keyword) ? 0 : 2) + (matchesType ? 0 : 1);
}

/** jsonschema's `best_match`: the shallowest error, then the deepest inside anyOf/oneOf. */
function bestMatch(errors: SchemaError[]): SchemaError | undefined {
  let best = errors.reduce<SchemaError | undefined>((b, e) => (b === undefined || relevance(e) > relevance(b) ? e : b), undefined);
  while (best && best.context.length > 0) {
    const [first, second] = [...best.context].sort((a, b) => relevance(a) - relevance(b));
    if (second && relevance(first!) === relevance(second)) break;
    best = first;
  }
  return best;
}

/** The error's str(): message, failing keyword with its schema, and the instance. */
function describe(e: SchemaError): string {
  const at = (word: string, path: Path) => (path.length ? `${word}[${path.map((p) => pyRepr(p)).join('][')}]` : word);
  const block = (value: unknown) => pformat(value).replaceAll('\n', '\n    ');
  return [
    e.message,
    '',
    `Failed validating ${pyRepr(e.keyword)} in ${at('schema', e.schemaPath.slice(0, -1))}:\n    ${block(e.schema)}`,
    '',
    `On ${at('instance', e.path)}:\n    ${block(e.instance)}`,
  ].join('\n').replaceAll('\n', ' ');
}

function firstError(schema: JsonSchema, instance: unknown): SchemaError | undefined {
  const errors: SchemaError[] = [];
  collect(schema, instance, [], [], errors);
  return bestMatch(errors);
}

export const isValid = (schema: JsonSchema, instance: unknown): boolean => firstError(schema, instance) === undefined;

/** Validates a parsed JSON request body; 400 "JSON does not validate: …" on failure. */
export function validateBody(schema: JsonSchema, body: unknown): void {
  const error = firstError(schema, body);
  if (error) throw badRequest(`JSON does not validate: ${describe(error)}`);
}

/** Validates query parameters (last value of each key); 400 "Invalid query string parameters: …". */
export function validateQuery(schema: JsonSchema, params: Record<string, string>): void {
  const error = firstError(schema, params);
  if (error) throw badRequest(`Invalid query string parameters: ${describe(error)}`);
}
