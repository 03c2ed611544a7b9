/**
 * A small JSON-Schema validator for the keywords Placement's schemas use, reporting errors as
 * upstream does: Python jsonschema (4.10) collects every error, picks one with `best_match`, and
 * the 400 detail is that error's str() (message, failing keyword and schema, offending instance,
 * values as Python reprs laid out by pprint) with newlines flattened to spaces by webob.
 */
import { badRequest } from './errors.js';

export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

/** The draft-4 keywords in use; a schema's keywords are checked in its key order, as upstream's are. */
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
  minProperties?: number; maxProperties?: number;
  // arrays
  items?: JsonSchema;
  minItems?: number; maxItems?: number;
  uniqueItems?: boolean;
  // strings and numbers
  pattern?: string;
  minLength?: number; maxLength?: number;
  minimum?: number; maximum?: number;
}

type Path = (string | number)[];
type JsonObject = Record<string, unknown>;

/** One failure. Paths are relative to the enclosing anyOf/oneOf branch (or the root), as in jsonschema. */
interface SchemaError {
  message: string;
  keyword: string;
  path: Path;
  schemaPath: Path;
  schema: JsonSchema;
  instance: unknown;
  context: SchemaError[];
}

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
const typesOf = (schema: JsonSchema): JsonType[] => (schema.type === undefined ? [] : ([] as JsonType[]).concat(schema.type));
const codePoints = (s: string) => [...s].length;
const canonical = (value: unknown): string =>
  isObject(value)
    ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
    : Array.isArray(value) ? `[${value.map(canonical).join(',')}]` : JSON.stringify(value);

/** oslo.utils' is_uuid_like (upstream's "uuid" format): 32 hex digits once "urn:", "uuid:", outer braces and dashes are dropped. */
export const isUuidLike = (value: unknown): boolean =>
  typeof value === 'string' &&
  /^[0-9a-fA-F]{32}$/.test(value.replaceAll('urn:', '').replaceAll('uuid:', '').replace(/^[{}]+|[{}]+$/g, '').replaceAll('-', ''));

const regexes = new Map<string, RegExp>();
/** Python's re.search, whose bare `$` also matches before a final newline. */
function search(pattern: string, text: string): boolean {
  let re = regexes.get(pattern);
  if (!re) regexes.set(pattern, (re = new RegExp(pattern.replace(/(?<!\\)\$/g, '(?=\\n?$)'), 'u')));
  return re.test(text);
}

// ---- Python repr() and pprint.pformat(width=72) ----------------------------------

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const LINE = /[^\n\r\v\f\x1c-\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])?/gu;

function reprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === quote || ESCAPES[ch]) out += ESCAPES[ch] ?? `\\${ch}`;
    else if (ch === ' ' || !NON_PRINTABLE.test(ch)) out += ch;
    else if (code < 0x100) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += code < 0x10000 ? `\\u${code.toString(16).padStart(4, '0')}` : `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return quote + out + quote;
}

/** Integral values print as Python ints (JSON.parse cannot tell 1 from 1.0), others as Python floats. */
function reprNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return String(n);
  const [mantissa, exp] = n.toExponential().split('e') as [string, string];
  const e = Number(exp);
  return e < -4 || e >= 16 ? `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}` : String(n);
}

const entriesOf = (o: JsonObject, sorted: boolean) =>
  sorted ? Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : Object.entries(o);

/** Python's repr() of a JSON value; `sorted` orders dict keys as pprint does. */
export function pyRepr(value: unknown, sorted = false): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return reprNumber(value);
  if (typeof value === 'string') return reprString(value);
  if (Array.isArray(value)) return `[${value.map((v) => pyRepr(v, sorted)).join(', ')}]`;
  return `{${entriesOf(value as JsonObject, sorted).map(([k, v]) => `${reprString(k)}: ${pyRepr(v, sorted)}`).join(', ')}}`;
}

/** pprint's long string: a repr per line, long lines cut after whitespace, parenthesised at top level. */
function pformatString(s: string, indent: number, allowance: number, top: boolean): string {
  if (top) [indent, allowance] = [indent + 1, allowance + 1];
  const lines = s.match(LINE)!.filter(Boolean);
  const chunks: string[] = [];
  lines.forEach((line, i) => {
    const lastLine = i === lines.length - 1;
    if (codePoints(reprString(line)) <= 72 - indent - (lastLine ? allowance : 0)) return void chunks.push(reprString(line));
    const parts = line.match(/\S*\s*/gu)!.filter(Boolean);
    let current = '';
    for (const [j, part] of parts.entries()) {
      const width = 72 - indent - (lastLine && j === parts.length - 1 ? allowance : 0);
      if (codePoints(reprString(current + part)) <= width) {
        current += part;
        continue;
      }
      if (current) chunks.push(reprString(current));
      current = part;
    }
    if (current) chunks.push(reprString(current));
  });
  if (chunks.length <= 1) return reprString(s);
  const body = chunks.join(`\n${' '.repeat(indent)}`);
  return top ? `(${body})` : body;
}

function pformat(value: unknown, indent = 0, allowance = 0, top = true): string {
  const rep = pyRepr(value, true);
  if (codePoints(rep) <= 72 - indent - allowance) return rep;
  if (typeof value === 'string') return pformatString(value, indent, allowance, top);
  if (typeof value !== 'object' || value === null) return rep;
  const sep = `,\n${' '.repeat(indent + 1)}`;
  const last = (i: number, n: number) => (i === n - 1 ? allowance + 1 : 1);
  if (Array.isArray(value)) return `[${value.map((v, i) => pformat(v, indent + 1, last(i, value.length), false)).join(sep)}]`;
  const entries = entriesOf(value as JsonObject, true);
  return `{${entries.map(([k, v], i) => {
    const key = reprString(k);
    return `${key}: ${pformat(v, indent + 1 + codePoints(key) + 2, last(i, entries.length), false)}`;
  }).join(sep)}}`;
}

// ---- validation -----------------------------------------------------------------

const propertyCount = (v: unknown) => (isObject(v) ? Object.keys(v).length : NaN);
const itemCount = (v: unknown) => (Array.isArray(v) ? v.length : NaN);
const stringLength = (v: unknown) => (typeof v === 'string' ? codePoints(v) : NaN);
const numberValue = (v: unknown) => (typeof v === 'number' ? v : NaN);
type Limit = 'minProperties' | 'maxProperties' | 'minItems' | 'maxItems' | 'minLength' | 'maxLength' | 'minimum' | 'maximum';
/** Bounds, each for one kind of instance (NaN measures the others): what is measured, whether it is a minimum, the message. */
const LIMITS: Record<Limit, [(v: unknown) => number, boolean, (repr: string, bound: string) => string]> = {
  minProperties: [propertyCount, true, (r) => `${r} does not have enough properties`],
  maxProperties: [propertyCount, false, (r) => `${r} has too many properties`],
  minItems: [itemCount, true, (r) => `${r} is too short`],
  maxItems: [itemCount, false, (r) => `${r} is too long`],
  minLength: [stringLength, true, (r) => `${r} is too short`],
  maxLength: [stringLength, false, (r) => `${r} is too long`],
  minimum: [numberValue, true, (r, bound) => `${r} is less than the minimum of ${bound}`],
  maximum: [numberValue, false, (r, bound) => `${r} is greater than the maximum of ${bound}`],
};

/** Appends every error of `instance` against `schema` to `out`, in jsonschema's order. */
function collect(schema: JsonSchema, instance: unknown, path: Path, schemaPath: Path, out: SchemaError[]): void {
  let reprCache: string | undefined;
  const repr = () => (reprCache ??= pyRepr(instance));
  for (const keyword of Object.keys(schema) as (keyof JsonSchema)[]) {
    const fail = (message: string, context: SchemaError[] = []) =>
      out.push({ message, keyword, path, schemaPath: [...schemaPath, keyword], schema, instance, context });
    const descend = (child: unknown, sub: JsonSchema, key: Path, schemaKey: Path) =>
      collect(sub, child, [...path, ...key], [...schemaPath, keyword, ...schemaKey], out);
    switch (keyword) {
      case 'type':
        if (!typesOf(schema).some((t) => isType(instance, t))) fail(`${repr()} is not of type ${typesOf(schema).map((t) => pyRepr(t)).join(', ')}`);
        break;
      case 'enum':
        if (!schema.enum!.some((v) => canonical(v) === canonical(instance))) fail(`${repr()} is not one of ${pyRepr(schema.enum)}`);
        break;
      case 'format':
        if (schema.format === 'uuid' && !isUuidLike(instance)) fail(`${repr()} is not a 'uuid'`);
        break;
      case 'anyOf':
      case 'oneOf': {
        const branches = schema[keyword]!;
        const errors: SchemaError[] = [];
        const first = branches.findIndex((sub, i) => {
          const before = errors.length;
          collect(sub, instance, [], [i], errors);
          return errors.length === before;
        });
        if (first < 0) fail(`${repr()} is not valid under any of the given schemas`, errors);
        const more = keyword === 'oneOf' && first >= 0 ? branches.slice(first + 1).filter((sub) => isValid(sub, instance)) : [];
        if (more.length > 0) fail(`${repr()} is valid under each of ${[...more, branches[first]].map((v) => pyRepr(v)).join(', ')}`);
        break;
      }
      case 'properties':
        if (!isObject(instance)) break;
        for (const [name, sub] of Object.entries(schema.properties!)) {
          if (Object.hasOwn(instance, name)) descend(instance[name], sub, [name], [name]);
        }
        break;
      case 'patternProperties':
        if (!isObject(instance)) break;
        for (const [pattern, sub] of Object.entries(schema.patternProperties!)) {
          for (const [name, child] of Object.entries(instance)) if (search(pattern, name)) descend(child, sub, [name], [pattern]);
        }
        break;
      case 'additionalProperties': {
        if (!isObject(instance)) break;
        const patterns = Object.keys(schema.patternProperties ?? {});
        const extras = Object.keys(instance).filter(
          (name) => !Object.hasOwn(schema.properties ?? {}, name) && !patterns.some((p) => search(p, name)));
        const extra = schema.additionalProperties!;
        if (isObject(extra)) for (const name of extras) descend(instance[name], extra, [name], []);
        if (extra !== false || extras.length === 0) break;
        const names = extras.sort().map((n) => pyRepr(n)).join(', ');
        if (!schema.patternProperties) fail(`Additional properties are not allowed (${names} ${extras.length === 1 ? 'was' : 'were'} unexpected)`);
        else fail(`${names} ${extras.length === 1 ? 'does' : 'do'} not match any of the regexes: ${patterns.sort().map((p) => pyRepr(p)).join(', ')}`);
        break;
      }
      case 'required':
        if (!isObject(instance)) break;
        for (const name of schema.required!) if (!Object.hasOwn(instance, name)) fail(`${pyRepr(name)} is a required property`);
        break;
      case 'items':
        if (Array.isArray(instance)) instance.forEach((item, i) => descend(item, schema.items!, [i], []));
        break;
      case 'uniqueItems':
        if (schema.uniqueItems && Array.isArray(instance) && new Set(instance.map(canonical)).size < instance.length) fail(`${repr()} has non-unique elements`);
        break;
      case 'pattern':
        if (typeof instance === 'string' && !search(schema.pattern!, instance)) fail(`${repr()} does not match ${pyRepr(schema.pattern)}`);
        break;
      default: {
        if (!Object.hasOwn(LIMITS, keyword)) break; // unknown keywords are ignored
        const [measure, isMinimum, message] = LIMITS[keyword];
        const [actual, bound] = [measure(instance), schema[keyword] as number];
        if (isMinimum ? actual < bound : actual > bound) fail(message(repr(), pyRepr(bound)));
      }
    }
  }
}

/** jsonschema's `relevance` key as a number (higher wins): shallow path, then not anyOf/oneOf, then a type mismatch. */
const relevance = (e: SchemaError): number =>
  -e.path.length * 4 + (e.keyword === 'anyOf' || e.keyword === 'oneOf' ? 0 : 2) + (typesOf(e.schema).some((t) => isType(e.instance, t)) ? 0 : 1);

/** jsonschema's `best_match`: the first most relevant error, then down into anyOf/oneOf to the least relevant branch error. */
function bestMatch(errors: SchemaError[]): SchemaError | undefined {
  let best = errors.reduce<SchemaError | undefined>((b, e) => (b && relevance(e) <= relevance(b) ? b : e), undefined);
  while (best && best.context.length > 0) {
    const [first, second] = [...best.context].sort((a, b) => relevance(a) - relevance(b));
    if (second && relevance(first!) === relevance(second)) break;
    best = first;
  }
  return best;
}

/** The error's str(), newlines flattened to spaces. */
function describe(e: SchemaError): string {
  const at = (word: string, path: Path) => (path.length ? `${word}[${path.map((p) => pyRepr(p)).join('][')}]` : word);
  const block = (value: unknown) => pformat(value).replaceAll('\n', '\n    ');
  const text = `${e.message}\n\nFailed validating ${pyRepr(e.keyword)} in ${at('schema', e.schemaPath.slice(0, -1))}:\n` +
    `    ${block(e.schema)}\n\nOn ${at('instance', e.path)}:\n    ${block(e.instance)}`;
  return text.replaceAll('\n', ' ');
}

function firstError(schema: JsonSchema, instance: unknown): SchemaError | undefined {
  const errors: SchemaError[] = [];
  collect(schema, instance, [], [], errors);
  return bestMatch(errors);
}

export const isValid = (schema: JsonSchema, instance: unknown): boolean => firstError(schema, instance) === undefined;

/** Validates a parsed JSON body: 400 "JSON does not validate: …" on failure. */
export function validateBody(schema: JsonSchema, body: unknown): void {
  const error = firstError(schema, body);
  if (error) throw badRequest(`JSON does not validate: ${describe(error)}`);
}

/** Validates query parameters (one value per key, the last one given): 400 "Invalid query string parameters: …". */
export function validateQuery(schema: JsonSchema, params: Record<string, string>): void {
  const error = firstError(schema, params);
  if (error) throw badRequest(`Invalid query string parameters: ${describe(error)}`);
}
