/**
 * A small JSON-Schema validator for the keywords Placement's schemas use, reporting errors as
 * upstream does: Python jsonschema (4.10) collects every error, picks one with `best_match`, and
 * the 400 detail is that error's str() (message, failing keyword and schema, offending instance,
 * values as Python reprs laid out by pprint) with newlines flattened to spaces by webob.
 */
import { badRequest } from '../api/errors.js';
import { codePoints, pformat, pyRepr } from '../api/python-repr.js';
import type { JsonSchema, JsonType } from '../api/json-schema.js';
import { isUuidLike } from '../domain/uuid.js';

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
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    // Integers past a double's exact range arrive as BigInts (http/json-body.ts).
    case 'integer':
      return Number.isInteger(value) || typeof value === 'bigint';
    case 'number':
      return typeof value === 'number' || typeof value === 'bigint';
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
};
const isObject = (value: unknown): value is JsonObject => isType(value, 'object');
const typesOf = (schema: JsonSchema): JsonType[] => (schema.type === undefined ? [] : ([] as JsonType[]).concat(schema.type));
const canonical = (value: unknown): string =>
  isObject(value)
    ? `{${Object.keys(value)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
        .join(',')}}`
    : Array.isArray(value)
      ? `[${value.map(canonical).join(',')}]`
      : typeof value === 'bigint'
        ? String(value)
        : JSON.stringify(value);

const regexes = new Map<string, RegExp>();
/** Python's re.search, whose bare `$` also matches before a final newline. */
function search(pattern: string, text: string): boolean {
  let re = regexes.get(pattern);
  if (!re) regexes.set(pattern, (re = new RegExp(pattern.replace(/(?<!\\)\$/g, '(?=\\n?$)'), 'u')));
  return re.test(text);
}

// ---- validation -----------------------------------------------------------------

const propertyCount = (v: unknown) => (isObject(v) ? Object.keys(v).length : NaN);
const itemCount = (v: unknown) => (Array.isArray(v) ? v.length : NaN);
const stringLength = (v: unknown) => (typeof v === 'string' ? codePoints(v) : NaN);
const numberValue = (v: unknown) => (typeof v === 'number' || typeof v === 'bigint' ? v : NaN);
type Limit = 'minProperties' | 'maxProperties' | 'minItems' | 'maxItems' | 'minLength' | 'maxLength' | 'minimum' | 'maximum';
/** Bounds, each for one kind of instance (NaN measures the others): what is measured, whether it is a minimum, the message. */
const LIMITS: Record<Limit, [(v: unknown) => number | bigint, boolean, (repr: string, bound: string) => string]> = {
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
        if (!typesOf(schema).some((t) => isType(instance, t)))
          fail(
            `${repr()} is not of type ${typesOf(schema)
              .map((t) => pyRepr(t))
              .join(', ')}`,
          );
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
        const extras = Object.keys(instance).filter((name) => !Object.hasOwn(schema.properties ?? {}, name) && !patterns.some((p) => search(p, name)));
        const extra = schema.additionalProperties!;
        if (isObject(extra)) for (const name of extras) descend(instance[name], extra, [name], []);
        if (extra !== false || extras.length === 0) break;
        const names = extras
          .sort()
          .map((n) => pyRepr(n))
          .join(', ');
        if (!schema.patternProperties) fail(`Additional properties are not allowed (${names} ${extras.length === 1 ? 'was' : 'were'} unexpected)`);
        else
          fail(
            `${names} ${extras.length === 1 ? 'does' : 'do'} not match any of the regexes: ${patterns
              .sort()
              .map((p) => pyRepr(p))
              .join(', ')}`,
          );
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

/**
 * Longest error description returned. Upstream returns descriptions of any
 * length (a body of 40,000 unexpected keys names them all); a response must
 * stay far below Lambda's 6 MB.
 */
const MAX_DESCRIPTION = 65_536;

/** The error's str(), newlines flattened to spaces, cut at MAX_DESCRIPTION characters. */
function describe(e: SchemaError): string {
  const at = (word: string, path: Path) => (path.length ? `${word}[${path.map((p) => pyRepr(p)).join('][')}]` : word);
  const block = (value: unknown) => pformat(value).replaceAll('\n', '\n    ');
  const text =
    `${e.message}\n\nFailed validating ${pyRepr(e.keyword)} in ${at('schema', e.schemaPath.slice(0, -1))}:\n` +
    `    ${block(e.schema)}\n\nOn ${at('instance', e.path)}:\n    ${block(e.instance)}`;
  const flat = text.replaceAll('\n', ' ');
  if (flat.length <= MAX_DESCRIPTION) return flat;
  return `${flat.slice(0, MAX_DESCRIPTION)} ... (${flat.length - MAX_DESCRIPTION} more characters left out)`;
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
