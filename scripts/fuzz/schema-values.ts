/**
 * JSON bodies from a route's JSON schema (shared/schemas): the schema is
 * walked (properties, patternProperties, required, items, anyOf/oneOf,
 * types, bounds, patterns, formats, enums) into values that fit it and name
 * the fixture, so that they pass validation and reach the handler, and, one
 * node in `odds` (none at 0), do not: a value of the wrong type, size, depth
 * or range, a bound crossed by one, a required member left out, a member no
 * schema knows, a prototype name as a key.
 */
import fc from 'fast-check';
import type { JsonSchema, JsonType } from '../../shared/api/json-schema.js';
import { FIXTURE, FIXTURE_CLASSES_OF, FIXTURE_PROVIDERS } from './fixture.js';
import { NEWEST_FORMAT } from '../../shared/storage/storage-format.js';
import { classNames, groupSuffixes, newProviderUuid, providerNames, providerUuid, respellings, traitNames, uuidText, type Texts } from './texts.js';
import { hostileJson, hostileText, num, obj, PROTOTYPE_KEYS, type Json } from './values.js';

/** Where in the document the walk is: the route's, the member's name, the provider or consumer an enclosing key named, and how hostile to be. */
export interface Place {
  odds: number;
  route?: string;
  name?: string;
  provider?: string;
  consumer?: string;
}

/** One in `odds` values is hostile (none when odds is 0). */
const mostly = (valid: fc.Arbitrary<Json>, place: Place): fc.Arbitrary<Json> =>
  place.odds === 0 ? valid : fc.oneof({ weight: place.odds, arbitrary: valid }, { weight: 1, arbitrary: hostileJson });

const pick = (texts: Texts, place: Place) => (place.odds === 0 ? texts.clean : texts.any);

function integers(schema: JsonSchema, place: Place): fc.Arbitrary<Json> {
  const low = schema.minimum ?? 0;
  const high = schema.maximum ?? 1000;
  const small = fc.integer({ min: low, max: Math.min(high, low + 8) }).map(num);
  if (place.odds === 0) return small;
  const edges = [low, high, low - 1, high + 1].filter(Number.isSafeInteger);
  return fc.oneof(
    { weight: 4, arbitrary: small },
    { weight: 2, arbitrary: fc.constantFrom(...edges).map(num) },
    { weight: 1, arbitrary: fc.constantFrom('1.0', '2.5', '1e2', '-0').map(num) },
  );
}

function numbers(schema: JsonSchema, place: Place): fc.Arbitrary<Json> {
  const clean = fc.constantFrom('1.0', '16.0', '0.5', '1').map(num);
  if (place.odds === 0) return clean;
  const high = schema.maximum ?? 1e6;
  return fc.oneof(
    clean,
    fc.double({ min: -10, max: 100, noNaN: true }).map((value) => num(JSON.stringify(value))),
    fc.constantFrom(String(high), String(high * 1.0001), '1e39', '-1', '5e-324', '0').map(num),
  );
}

/** A string for the member: the fixture's names where the member names one, else from the schema's pattern, format, enum and bounds. */
function strings(schema: JsonSchema, place: Place): fc.Arbitrary<Json> {
  if (schema.enum) return fc.constantFrom(...(schema.enum as string[]));
  const clean = place.odds === 0;
  switch (place.name) {
    case 'project_id':
      return clean ? fc.constantFrom(FIXTURE.project, 'fuzz-other-project') : fc.constantFrom(FIXTURE.project, 'p'.repeat(255), 'p'.repeat(256), '');
    case 'user_id':
      return clean ? fc.constant(FIXTURE.user) : fc.constantFrom(FIXTURE.user, 'u'.repeat(255), 'u'.repeat(256), '');
    case 'consumer_type':
      return clean
        ? fc.constantFrom('INSTANCE', 'MIGRATION')
        : fc.oneof(fc.constantFrom('INSTANCE', 'all', 'INSTANCE\n', ''), fc.stringMatching(new RegExp(schema.pattern ?? '.')));
    case 'resource_class':
      return pick(classNames, place);
  }
  // A new provider's uuid: one kept for the providers clean requests create and delete, mostly.
  if (place.name === 'uuid' && place.route === 'POST /resource_providers') return pick(newProviderUuid, place);
  // A provider a claim (1.0-1.11) or a new child names: the fixture's, mostly.
  if (place.name === 'parent_provider_uuid' || (place.name === 'uuid' && place.route === 'PUT /allocations/{consumer_uuid}')) return pick(providerUuid, place);
  if (schema.format === 'uuid') return pick(uuidText, place);
  if (place.name === 'name' && !schema.pattern) return pick(providerNames, place);
  if (schema.pattern) {
    // A class's name where the pattern takes it (a custom class's), else any string of the pattern.
    const pattern = new RegExp(schema.pattern);
    const names = place.odds === 0 ? fc.constantFrom('CUSTOM_FUZZ', 'CUSTOM_FUZZ_NEW', FIXTURE.spare, 'VCPU', 'DISK_GB') : classNames.any;
    return fc.oneof({ weight: 3, arbitrary: names.filter((name) => pattern.test(name)) }, { weight: 1, arbitrary: fc.stringMatching(pattern) });
  }
  if (clean) return pick(traitNames, place);
  const lengths = [schema.minLength, schema.maxLength, schema.maxLength === undefined ? undefined : schema.maxLength + 1].filter((n) => n !== undefined);
  return fc.oneof(hostileText, ...(lengths.length > 0 ? [fc.constantFrom(...lengths).map((n) => 'x'.repeat(n))] : []));
}

/** A generation: the live one of the provider or consumer in question (so that a change can be accepted), one off, or any number. */
function generation(place: Place): fc.Arbitrary<Json> {
  const live = (kind: 'provider' | 'consumer', uuid: string, offsets: number[]): fc.Arbitrary<Json> =>
    fc.constantFrom(...offsets).map((offset): Json => ({ live: kind, uuid, offset }));
  const offsets = place.odds === 0 ? [0] : [0, 0, 0, 1, -1];
  if (place.name === 'consumer_generation') {
    const current = live('consumer', place.consumer ?? FIXTURE.consumer, offsets);
    return place.odds === 0 ? current : fc.oneof({ weight: 4, arbitrary: current }, fc.constant(null), fc.integer({ min: -1, max: 5 }).map(num));
  }
  const current = live('provider', place.provider ?? FIXTURE.root, offsets);
  return place.odds === 0 ? current : fc.oneof({ weight: 4, arbitrary: current }, fc.integer({ min: -1, max: 20 }).map(num));
}

function ofType(type: JsonType, schema: JsonSchema, place: Place): fc.Arbitrary<Json> {
  switch (type) {
    case 'object':
      return objects(schema, place);
    case 'array':
      return arrays(schema, place);
    case 'string':
      return strings(schema, place);
    case 'integer':
      if (place.name?.endsWith('generation')) return generation(place);
      // An amount keyed by its class: small, so that claims fit.
      if (place.name !== undefined && /^[A-Z0-9_]+$/.test(place.name) && place.odds === 0) return fc.integer({ min: 1, max: 2 }).map(num);
      return integers(schema, place);
    case 'number':
      return numbers(schema, place);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
  }
}

const UUID_KEY = /^\^\[0-9a-fA-F-\]\{36\}\$$/;
const FIXTURE_CLASSES = ['VCPU', 'MEMORY_MB', 'DISK_GB', 'IPV4_ADDRESS', FIXTURE.customClass];
const GROUP_KEYS = ['_a', '1', '2'];

/** What the keys of a patternProperties pattern name, told by the values they key: providers, consumers, or neither. */
function keyKind(sub: JsonSchema): 'providers' | 'consumers' | undefined {
  const members = Object.keys(sub.properties ?? {});
  if (members.includes('resources') || members.includes('inventories')) return 'providers';
  if (members.includes('allocations')) return 'consumers';
  return undefined;
}

/** Keys for a patternProperties pattern: the fixture's uuids or names where they fit it, and (not clean) any string it matches. */
function keysFor(pattern: string, sub: JsonSchema, place: Place): fc.Arbitrary<string> {
  const any = fc.stringMatching(new RegExp(pattern));
  if (UUID_KEY.test(pattern)) {
    // Clean claims name providers that have inventory.
    const claims = Object.keys(sub.properties ?? {}).includes('resources') && place.odds === 0;
    const uuids =
      keyKind(sub) === 'consumers' ? [FIXTURE.consumer] : claims ? FIXTURE_PROVIDERS.filter((uuid) => FIXTURE_CLASSES_OF.get(uuid)?.length) : FIXTURE_PROVIDERS;
    // Respelled now and then (a document may then name one provider or consumer twice).
    const known = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...uuids) }, { weight: 1, arbitrary: fc.constantFrom(...uuids.flatMap(respellings)) });
    return place.odds === 0
      ? fc.oneof({ weight: 10, arbitrary: known }, fc.uuid())
      : fc.oneof({ weight: 4, arbitrary: known }, fc.uuid(), fc.constantFrom(...FIXTURE_PROVIDERS, FIXTURE.consumer), any);
  }
  const matches = new RegExp(pattern, 'u');
  // The classes the provider in question has, else any class the fixture has, where the pattern takes classes (a
  // class's pattern also takes "1"); else group suffixes.
  const held = FIXTURE_CLASSES_OF.get(place.provider ?? '') ?? [];
  const classes = (held.length > 0 ? held : FIXTURE_CLASSES).filter((name) => matches.test(name));
  const known = classes.length > 0 ? classes : GROUP_KEYS.filter((name) => matches.test(name));
  if (known.length === 0) return any;
  return place.odds === 0 ? fc.constantFrom(...known) : fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, any);
}

/** What a key of the document says about the values below it. */
function placeOfKey(key: string, place: Place): Place {
  const hex = (uuid: string) => uuid.replaceAll('-', '').toLowerCase();
  const provider = FIXTURE_PROVIDERS.find((uuid) => hex(uuid) === hex(key));
  if (provider !== undefined) return { ...place, provider };
  if (/^[0-9a-fA-F-]{36}$/.test(key)) return { ...place, consumer: hex(key) === hex(FIXTURE.consumer) ? FIXTURE.consumer : key.toLowerCase() };
  return place;
}

type Entries = [string, Json][];

function objects(schema: JsonSchema, place: Place): fc.Arbitrary<Json> {
  const members: fc.Arbitrary<Entries>[] = [];
  const none = fc.constant<Entries>([]);
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    const required = schema.required?.includes(name) ?? false;
    const member = valueOf(sub, { ...place, name }).map((value): Entries => [[name, value]]);
    // A required member is left out now and then (never when clean); an optional one half the time.
    if (required && place.odds === 0) members.push(member);
    else members.push(fc.oneof({ weight: required ? place.odds : 1, arbitrary: member }, { weight: 1, arbitrary: none }));
  }
  for (const [pattern, sub] of Object.entries(schema.patternProperties ?? {})) {
    const entry = keysFor(pattern, sub, place).chain((key) =>
      valueOf(sub, { ...placeOfKey(key, place), name: key }).map((value): [string, Json] => [key, value]),
    );
    members.push(fc.array(entry, { minLength: Math.min(schema.minProperties ?? 0, 1), maxLength: 3 }));
  }
  if (place.odds > 0) {
    // Members no schema names: unknown, prototype names.
    const extra = fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS, 'unknown', ''), hostileJson).map(([key, value]): Entries => [[key, value]]);
    members.push(fc.oneof({ weight: place.odds, arbitrary: none }, { weight: 1, arbitrary: extra }));
  }
  return fc.tuple(...members).map((parts) => obj(parts.flat()));
}

function arrays(schema: JsonSchema, place: Place): fc.Arbitrary<Json> {
  const item = schema.items ? valueOf(schema.items, place) : hostileJson;
  const least = schema.minItems ?? 0;
  const fitting = fc.array(item, { minLength: least, maxLength: least + 3 }).map((items): Json => items);
  if (place.odds === 0) return fitting;
  // uniqueItems and minItems, each crossed.
  return fc.oneof(
    { weight: 6, arbitrary: fitting },
    { weight: 1, arbitrary: item.map((one): Json => [one, one]) },
    { weight: 1, arbitrary: fc.constant<Json>([]) },
  );
}

/** Values for a (sub)schema at a place in the document. */
export function valueOf(schema: JsonSchema, place: Place): fc.Arbitrary<Json> {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return mostly(fc.oneof(...branches.map((branch) => valueOf(branch, place))), place);
  if (place.name === 'traits' || place.name === 'aggregates') {
    // The traits and aggregates of a provider name the fixture's.
    const aggregate = fc.oneof({ weight: 3, arbitrary: fc.constant(FIXTURE.aggregate) }, fc.constantFrom(...respellings(FIXTURE.aggregate)));
    const item = place.name === 'traits' ? pick(traitNames, place) : fc.oneof({ weight: 3, arbitrary: aggregate }, pick(uuidText, place));
    const names = fc.uniqueArray(item, { maxLength: 4 }).map((items): Json => items);
    return mostly(place.odds === 0 ? names : fc.oneof({ weight: 4, arbitrary: names }, { weight: 1, arbitrary: arrays(schema, place) }), place);
  }
  // The storage format this release finalizes to, when clean.
  if (place.name === 'format') return place.odds === 0 ? fc.constant(num(NEWEST_FORMAT)) : mostly(fc.integer({ min: 0, max: NEWEST_FORMAT }).map(num), place);
  if (place.name === 'mappings') return mostly(mappings(place), place);
  const types: JsonType[] = schema.type === undefined ? ['object'] : ([] as JsonType[]).concat(schema.type);
  return mostly(fc.oneof(...types.map((type) => ofType(type, schema, place))), place);
}

/** 1.34's mappings: a group suffix to the providers that satisfied it. */
const mappings = (place: Place): fc.Arbitrary<Json> =>
  fc
    .array(fc.tuple(pick(groupSuffixes, place), fc.array(fc.constantFrom(...FIXTURE_PROVIDERS), { minLength: 1, maxLength: 2 })), { maxLength: 2 })
    .map((entries): Json => obj(entries.map(([suffix, uuids]) => [suffix, uuids])));
