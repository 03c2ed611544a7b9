/**
 * The fuzzer's request model: one arbitrary request per route of the route
 * table (shared/http/routes.ts), its path parameters, query parameters and
 * JSON body drawn from what the route's schema (shared/schemas) and parsers
 * know, each wrong in the ways its type allows; a microversion; headers. A
 * generated request is a template (a body may ask for a generation as it is
 * when the request goes out); `materialize` makes it the bytes sent, and
 * `curlOf` the command that sends them again.
 */
import fc from 'fast-check';
import type { JsonSchema } from '../../shared/api/json-schema.js';
import { ROUTES, routeKey, type Route, type RouteKey } from '../../shared/http/routes.js';
import * as aggregate from '../../shared/schemas/aggregate.js';
import * as candidates from '../../shared/schemas/allocation-candidate.js';
import * as allocation from '../../shared/schemas/allocation.js';
import * as history from '../../shared/schemas/history.js';
import * as inventory from '../../shared/schemas/inventory.js';
import * as reshaper from '../../shared/schemas/reshaper.js';
import * as resourceClass from '../../shared/schemas/resource-class.js';
import * as provider from '../../shared/schemas/resource-provider.js';
import * as trait from '../../shared/schemas/trait.js';
import * as upgrade from '../../shared/schemas/upgrade.js';
import * as usage from '../../shared/schemas/usage.js';
import { FIXTURE, FIXTURE_CLASSES_OF, FIXTURE_INVENTORIES, FIXTURE_PROVIDERS, FIXTURE_TREE_CHILD_NAMES, NEW_PROVIDERS } from './fixture.js';
import { valueOf } from './schema-values.js';
import { classNames, consumerUuid, groupSuffixes, newProviderUuid, providerUuid, queryTexts, spareNames, traitNames, type Texts } from './texts.js';
import { fixedUuid, hostileJson, hostileUrlText, num, obj, percentEncode, PROTOTYPE_KEYS, writeJson, type Json, type LiveGenerations } from './values.js';

/** How a JSON body is broken after it is written: cut, padded, re-quoted, or encoded as something else than UTF-8. */
export type Damage =
  { cut: number } | { append: string } | { prepend: string } | { singleQuotes: true } | { rawControl: string } | { encoding: 'latin1' | 'utf16le' };

export type FuzzBody = { json: Json; damage?: Damage } | { bytes: number[] };

export interface FuzzRequest {
  /** The route key the request was made for (a broken path may reach another route, or none: the session asks the router). */
  route: string;
  mode: Mode;
  /** The body may commit in several steps or write ahead of its commit, and so write and then roll back: the session reads the state before and after. */
  mayRollBack: boolean;
  method: string;
  /** Path and query string exactly as sent. */
  target: string;
  headers: [string, string][];
  body?: FuzzBody;
}

/** What goes on the wire, with what the request was drawn as. */
export interface SentRequest {
  route: string;
  mode: Mode;
  mayRollBack: boolean;
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** A schema and the microversions it is the schema of (`until` excluded); no schema: no body (or query) at those. */
interface Versioned {
  since: string;
  until?: string;
  schema?: JsonSchema;
}

/** A route's schemas, oldest first: each one's from its microversion until the next one's. */
const byVersion = (...shapes: [string, JsonSchema | undefined][]): Versioned[] =>
  shapes.map(([since, schema], index) => ({ since, ...(index + 1 < shapes.length && { until: shapes[index + 1]![0] }), ...(schema && { schema }) }));

const CANDIDATE_QUERIES = byVersion(
  ['1.10', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_10],
  ['1.16', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_16],
  ['1.17', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_17],
  ['1.21', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_21],
  ['1.25', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_25],
  ['1.31', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_31],
  ['1.33', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_33],
  ['1.35', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_35],
  ['1.36', candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_36],
);

/** The query schemas of each route that takes a query string, every microversion's. */
const QUERY_SCHEMAS = {
  'GET /resource_providers': byVersion(
    ['1.0', provider.LIST_RESOURCE_PROVIDERS_QUERY_1_0],
    ['1.3', provider.LIST_RESOURCE_PROVIDERS_QUERY_1_3],
    ['1.4', provider.LIST_RESOURCE_PROVIDERS_QUERY_1_4],
    ['1.14', provider.LIST_RESOURCE_PROVIDERS_QUERY_1_14],
    ['1.18', provider.LIST_RESOURCE_PROVIDERS_QUERY_1_18],
  ),
  'GET /allocation_candidates': CANDIDATE_QUERIES,
  'GET /explain/allocation_candidates': CANDIDATE_QUERIES,
  'GET /traits': byVersion(['1.6', trait.LIST_TRAITS_QUERY_1_6]),
  'GET /usages': byVersion(['1.9', usage.LIST_USAGES_QUERY_1_9], ['1.38', usage.LIST_USAGES_QUERY_1_38]),
  'GET /history/allocations/{consumer_uuid}': byVersion(['1.0', history.LIST_HISTORY_QUERY]),
  'GET /history/resource_providers/{uuid}/allocations': byVersion(['1.0', history.LIST_HISTORY_QUERY]),
  'GET /history/usages': byVersion(['1.0', history.HISTORY_USAGES_QUERY]),
  'GET /upgrade/entries': byVersion(['1.0', upgrade.VERIFY_ENTRIES_QUERY]),
} satisfies Partial<Record<RouteKey, Versioned[]>>;

/** The body schemas of each route that takes a body, every microversion's (as the handlers choose them). */
const BODY_SCHEMAS = {
  'POST /resource_providers': byVersion(['1.0', provider.POST_RESOURCE_PROVIDER_1_0], ['1.14', provider.POST_RESOURCE_PROVIDER_1_14]),
  'PUT /resource_providers/{uuid}': byVersion(['1.0', provider.PUT_RESOURCE_PROVIDER_1_0], ['1.14', provider.PUT_RESOURCE_PROVIDER_1_14]),
  'POST /resource_providers/{uuid}/inventories': byVersion(['1.0', inventory.POST_INVENTORY_1_0]),
  'PUT /resource_providers/{uuid}/inventories': byVersion(['1.0', inventory.PUT_INVENTORIES_1_0]),
  'PUT /resource_providers/{uuid}/inventories/{resource_class}': byVersion(['1.0', inventory.PUT_INVENTORY_1_0]),
  'PUT /resource_providers/{uuid}/aggregates': byVersion(['1.1', aggregate.PUT_AGGREGATES_1_1], ['1.19', aggregate.PUT_AGGREGATES_1_19]),
  'PUT /resource_providers/{uuid}/traits': byVersion(['1.6', trait.PUT_RESOURCE_PROVIDER_TRAITS_1_6]),
  'POST /resource_classes': byVersion(['1.2', resourceClass.POST_RESOURCE_CLASS_1_2]),
  // From 1.7 the PUT creates the class and takes no body.
  'PUT /resource_classes/{name}': byVersion(['1.2', resourceClass.PUT_RESOURCE_CLASS_1_2], ['1.7', undefined]),
  'PUT /allocations/{consumer_uuid}': byVersion(
    ['1.0', allocation.PUT_ALLOCATIONS_1_0],
    ['1.8', allocation.PUT_ALLOCATIONS_1_8],
    ['1.12', allocation.PUT_ALLOCATIONS_1_12],
    ['1.28', allocation.PUT_ALLOCATIONS_1_28],
    ['1.34', allocation.PUT_ALLOCATIONS_1_34],
    ['1.38', allocation.PUT_ALLOCATIONS_1_38],
  ),
  'POST /allocations': byVersion(
    ['1.13', allocation.POST_ALLOCATIONS_1_13],
    ['1.28', allocation.POST_ALLOCATIONS_1_28],
    ['1.34', allocation.POST_ALLOCATIONS_1_34],
    ['1.38', allocation.POST_ALLOCATIONS_1_38],
  ),
  'POST /reshaper': byVersion(['1.30', reshaper.POST_RESHAPER_1_30], ['1.34', reshaper.POST_RESHAPER_1_34], ['1.38', reshaper.POST_RESHAPER_1_38]),
  'POST /upgrade/finalize': byVersion(['1.0', upgrade.FINALIZE_UPGRADE]),
} satisfies Partial<Record<RouteKey, Versioned[]>>;

/**
 * How hostile a request is. Clean: every value fits its schema (the
 * microversion's) and names what exists, so the request reaches the code
 * behind the parsers (and changes things). Mild: now and then a value that
 * does not fit. Hostile: often, and broken bodies, odd headers, microversions
 * that are none. Rollback: a clean body built to fail late, after a change of
 * several steps or writes ahead of its commit (ROLLBACK_BODIES).
 */
export type Mode = 'clean' | 'mild' | 'hostile' | 'rollback';

interface ModeSettings {
  weight: number;
  /** One body node in `odds` is hostile (0: none). */
  odds: number;
  /** Path and query values: the clean texts or any. */
  texts: keyof Texts;
  /** One value in `rawOdds` is raw escapes rather than encoded text (0: none). */
  rawOdds: number;
  /** Weights of an odd header, an odd microversion, a broken body. */
  oddHeaders: number;
  oddVersions: number;
  brokenBodies: number;
}

const MODES: Record<Exclude<Mode, 'rollback'>, ModeSettings> = {
  clean: { weight: 5, odds: 0, texts: 'clean', rawOdds: 0, oddHeaders: 0, oddVersions: 0, brokenBodies: 0 },
  mild: { weight: 3, odds: 40, texts: 'any', rawOdds: 40, oddHeaders: 1, oddVersions: 1, brokenBodies: 1 },
  hostile: { weight: 2, odds: 6, texts: 'any', rawOdds: 8, oddHeaders: 4, oddVersions: 3, brokenBodies: 4 },
};
/** The weight of rollback bodies beside the modes' (10 in all), on a route that has them. */
const ROLLBACK_WEIGHT = 1;

const minor = (version: string) => Number(version.split('.')[1]);
const NEWEST_MINOR = 39;

/** The minor version a drawn microversion asks for, as far as the texts that fit it go (latest, none or one that is none: the newest). */
const minorOf = (microversion: string | null): number => {
  const match = /^1\.(\d{1,2})$/.exec(microversion ?? '');
  return match === null || Number(match[1]) > NEWEST_MINOR ? NEWEST_MINOR : Number(match[1]);
};

/** Microversions: mostly one the route (and its schema) answers at, then any of 1.0 to 1.39, then what is no version (null: no header). */
function versions(since: string, until: string | undefined, mode: ModeSettings): fc.Arbitrary<string | null> {
  const low = minor(since);
  const high = until === undefined ? NEWEST_MINOR : minor(until) - 1;
  const fitting = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: low, max: high }).map((n) => `1.${n}`) },
    { weight: until === undefined ? 1 : 0, arbitrary: fc.constant('latest') },
  );
  if (mode.oddVersions === 0) return fitting;
  return fc.oneof(
    { weight: 12, arbitrary: fitting },
    { weight: 4, arbitrary: fc.integer({ min: 0, max: NEWEST_MINOR }).map((n) => `1.${n}`) },
    {
      weight: mode.oddVersions,
      arbitrary: fc.constantFrom(
        null,
        '1.40',
        '2.0',
        '0.9',
        '1',
        '1.',
        '.5',
        '1.3.9',
        ' 1.5 ',
        '01.005',
        'LATEST',
        '1.-1',
        `1.${'9'.repeat(30)}`,
        '1.1e1',
        '1_0.1_0',
      ),
    },
  );
}

/** Text as a path segment or query value: encoded as a client would, or now and then raw escapes. */
function encoded(text: fc.Arbitrary<string>, mode: ModeSettings): fc.Arbitrary<string> {
  const written = text.map(percentEncode);
  return mode.rawOdds === 0 ? written : fc.oneof({ weight: mode.rawOdds, arbitrary: written }, { weight: 1, arbitrary: hostileUrlText });
}

/** Path parameter values, by the parameter's name and the route it is in. */
function pathValue(name: string, route: Route, mode: ModeSettings): fc.Arbitrary<string> {
  return encoded(pathTexts(name, route)[mode.texts], mode);
}

/** What a path parameter names: a provider, a consumer, a trait or a class; those a PUT or DELETE creates or deletes, for it. */
function pathTexts(name: string, route: Route): Texts {
  const key = routeKey(route);
  if (name === 'uuid') return key === 'DELETE /resource_providers/{uuid}' ? newProviderUuid : providerUuid;
  if (name === 'consumer_uuid') return consumerUuid;
  if (name === 'name' && route.method !== 'GET') return spareNames;
  return name === 'name' && route.path.startsWith('/traits') ? traitNames : classNames;
}

/** The request-group form of a patternProperties pattern, `^name(suffix)?$`. */
const GROUP_FORM = /^\^(\w+)\((.*)\)\?\$$/;

/** Names a patternProperties pattern of a query schema lets through (and, not clean, some it does not). */
function patternNames(pattern: string, mode: ModeSettings): fc.Arbitrary<string> {
  const group = GROUP_FORM.exec(pattern);
  if (group === null) return fc.stringMatching(new RegExp(pattern));
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(group[1]!) },
    { weight: 1, arbitrary: groupSuffixes[mode.texts].map((suffix) => `${group[1]}${suffix}`) },
  );
}

type Pairs = [string, string][];

/** One parameter: given once, (not clean) a few times, or (hostile) hundreds of times. */
function parameter(names: fc.Arbitrary<string>, route: string, mode: ModeSettings, minorVersion: number): fc.Arbitrary<Pairs> {
  return names.chain((name) => {
    const values = queryTexts(name, route, minorVersion)[mode.texts];
    if (mode.oddHeaders === 0) return values.map((value): Pairs => [[name, value]]);
    return fc.oneof(
      { weight: 12, arbitrary: values.map((value): Pairs => [[name, value]]) },
      { weight: 1, arbitrary: fc.array(values, { minLength: 2, maxLength: 3 }).map((all) => all.map((value): [string, string] => [name, value])) },
      {
        weight: mode.oddHeaders === 0 ? 0 : 1,
        arbitrary: fc.tuple(values, fc.constantFrom(20, 300)).map(([value, times]) => Array.from({ length: times }, (): [string, string] => [name, value])),
      },
    );
  });
}

const unknownNames = fc.oneof(
  fc.constantFrom(...PROTOTYPE_KEYS, 'foo', '', 'RESOURCES', 'resources[]', 'limit ', 'n\u0430me'),
  fc.stringMatching(/^[a-z_]{1,12}$/),
);

/**
 * Clean request groups (the group patterns of GET /allocation_candidates): a
 * few groups, each with its resources and now and then its other parameters,
 * their suffixes those the microversion's pattern takes; group_policy where
 * several suffixed groups need it; same_subtree naming groups there are.
 */
function requestGroups(schema: JsonSchema, route: string, minorVersion: number): fc.Arbitrary<Pairs> {
  const patterns = Object.keys(schema.patternProperties ?? {});
  const names = patterns.map((pattern) => GROUP_FORM.exec(pattern)![1]!);
  const suffixPattern = new RegExp(`^(${GROUP_FORM.exec(patterns[0]!)![2]!})$`);
  const suffixes = groupSuffixes.clean.filter((suffix) => suffixPattern.test(suffix));
  const value = (name: string) => queryTexts(name, route, minorVersion).clean;
  const group = (suffix: string) =>
    fc
      .tuple(
        ...names.map((name) => {
          const pair = value(name).map((text): Pairs => [[`${name}${suffix}`, text]]);
          return name === 'resources' ? pair : fc.oneof({ weight: 3, arbitrary: fc.constant<Pairs>([]) }, { weight: 1, arbitrary: pair });
        }),
      )
      .map((lists) => lists.flat());
  return fc.uniqueArray(fc.oneof(fc.constant(''), suffixes), { minLength: 1, maxLength: 3 }).chain((suffixes) => {
    const suffixed = suffixes.filter((suffix) => suffix !== '');
    const policy = value('group_policy').map((text): Pairs => [['group_policy', text]]);
    const subtree = fc.subarray(suffixed, { minLength: Math.min(1, suffixed.length) }).map((some): Pairs => [['same_subtree', some.join(',')]]);
    const optional = (pairs: fc.Arbitrary<Pairs>) => fc.oneof({ weight: 2, arbitrary: fc.constant<Pairs>([]) }, { weight: 1, arbitrary: pairs });
    const others = Object.keys(schema.properties ?? {})
      .filter((name) => name !== 'group_policy' && name !== 'same_subtree')
      .map((name) => optional(value(name).map((text): Pairs => [[name, text]])));
    return fc
      .tuple(
        ...suffixes.map(group),
        suffixed.length > 1 ? policy : optional(policy),
        suffixed.length > 0 ? optional(subtree) : fc.constant<Pairs>([]),
        ...others,
      )
      .map((parts) => parts.flat());
  });
}

/** The query string of a request to the route: its schema's parameters (the microversion's), and (not clean) some no schema knows. */
function queryString(route: Route, schema: JsonSchema | undefined, mode: ModeSettings, minorVersion: number): fc.Arbitrary<string> {
  const key = routeKey(route);
  const grouped = Object.keys(schema?.patternProperties ?? {}).some((pattern) => GROUP_FORM.test(pattern));
  if (schema !== undefined && grouped && mode === MODES.clean) {
    return requestGroups(schema, key, minorVersion).map((pairs) => pairs.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join('&'));
  }
  const parts: fc.Arbitrary<Pairs>[] = [];
  const none = fc.constant<Pairs>([]);
  for (const name of Object.keys(schema?.properties ?? {})) {
    // A marker is what a listing's next link carries: a clean request has none of its own.
    if (name === 'marker' && mode === MODES.clean) continue;
    const required = schema?.required?.includes(name) ?? false;
    parts.push(
      fc.oneof(
        { weight: required ? 20 : 3, arbitrary: parameter(fc.constant(name), key, mode, minorVersion) },
        { weight: required ? mode.oddHeaders : 4, arbitrary: none },
      ),
    );
  }
  for (const pattern of Object.keys(schema?.patternProperties ?? {})) {
    // A request group's resources come first and at least once (unless hostile), so that the groups' other parameters count.
    const least = pattern.startsWith('^resources') && mode !== MODES.hostile ? 1 : 0;
    parts.push(fc.array(parameter(patternNames(pattern, mode), key, mode, minorVersion), { minLength: least, maxLength: 2 }).map((lists) => lists.flat()));
  }
  if (mode.oddHeaders > 0) {
    parts.push(fc.oneof({ weight: 12, arbitrary: none }, { weight: mode.oddHeaders, arbitrary: parameter(unknownNames, key, mode, minorVersion) }));
  }
  return fc.tuple(...parts).chain((lists) => fc.tuple(...lists.flat().map(([name, value]) => pairOf(name, value, mode))).map((written) => written.join('&')));
}

function pairOf(name: string, value: string, mode: ModeSettings): fc.Arbitrary<string> {
  const pair = fc.constant(`${percentEncode(name)}=${percentEncode(value)}`);
  if (mode.rawOdds === 0) return pair;
  return fc.oneof(
    { weight: mode.rawOdds, arbitrary: pair },
    { weight: 1, arbitrary: hostileUrlText.map((raw) => `${percentEncode(name)}=${raw}`) },
    { weight: 1, arbitrary: fc.constant(percentEncode(name)) },
  );
}

/** The fixture's providers that have inventory. */
const STOCKED = FIXTURE_PROVIDERS.filter((uuid) => (FIXTURE_CLASSES_OF.get(uuid) ?? []).length > 0);

/** The path with each parameter drawn, and the provider and consumer it names (a body's generations are theirs). */
function pathOf(route: Route, mode: ModeSettings): fc.Arbitrary<{ path: string; provider?: string; consumer?: string }> {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const drawn = fc.tuple(...names.map((name) => pathValue(name, route, mode)));
  // A clean inventory is one the fixture has: a provider that has inventory (as drawn, in whatever spelling, or another), and a class of it.
  const classAt = names.indexOf('resource_class');
  const uuidAt = names.indexOf('uuid');
  const values =
    classAt < 0 || mode !== MODES.clean
      ? drawn
      : drawn.chain((values) => {
          const drawnUuid = decoded(values[uuidAt]!).toLowerCase();
          const uuids = STOCKED.includes(drawnUuid) ? fc.constant(values[uuidAt]!) : fc.constantFrom(...STOCKED);
          return uuids.chain((uuid) =>
            fc
              .constantFrom(...FIXTURE_CLASSES_OF.get(decoded(uuid).toLowerCase())!)
              .map((name) => values.map((value, index) => (index === classAt ? name : index === uuidAt ? uuid : value))),
          );
        });
  return values.map((values) => {
    let path = route.path;
    names.forEach((name, index) => (path = path.replace(`{${name}}`, values[index]!)));
    const named = (name: string) => {
      const index = names.indexOf(name);
      return index < 0 ? undefined : decoded(values[index]!).toLowerCase();
    };
    const uuid = named('uuid');
    return { path, provider: uuid !== undefined && FIXTURE_PROVIDERS.includes(uuid) ? uuid : undefined, consumer: named('consumer_uuid') };
  });
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const CONTENT_TYPES = [
  'text/plain',
  'application/json; charset=utf-16',
  'application/json; charset=latin-1',
  'APPLICATION/JSON',
  'application/json-patch+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; x',
  '',
];

const damages: fc.Arbitrary<Damage> = fc.oneof(
  fc.double({ min: 0, max: 1, noNaN: true }).map((cut) => ({ cut })),
  fc.constantFrom(' x', '}', ',', ']', '\u0000', ' // comment', '{}').map((append) => ({ append })),
  fc.constantFrom('\ufeff', '[', ' ', 'x').map((prepend) => ({ prepend })),
  fc.constant({ singleQuotes: true as const }),
  fc.constantFrom('\u0000', '\t', '\n', '\u001f').map((rawControl) => ({ rawControl })),
  fc.constantFrom('latin1' as const, 'utf16le' as const).map((encoding) => ({ encoding })),
);

/** A consumer's claim in 1.38's shape: the amounts of each class on each provider. */
const claimOf = (amounts: [string, [string, number][]][], generation: Json): Json =>
  obj([
    ['allocations', obj(amounts.map(([uuid, resources]) => [uuid, obj([['resources', obj(resources.map(([name, n]) => [name, num(n)]))]])]))],
    ['project_id', FIXTURE.project],
    ['user_id', FIXTURE.user],
    ['consumer_generation', generation],
    ['consumer_type', 'INSTANCE'],
  ]);

/** New consumers' claims on the bulk provider, as many as make a change of several steps (over 100 writes). */
const bulkClaims: fc.Arbitrary<[string, Json][]> = fc
  .uniqueArray(fc.uuid(), { minLength: 40, maxLength: 90 })
  .map((consumers) => consumers.map((consumer): [string, Json] => [consumer, claimOf([[FIXTURE.bulk, [['VCPU', 1]]]], null)]));

/** A new consumer's claim that cannot be granted: more than the provider has, a class it has none of, a provider that does not exist. */
const refusedClaim: fc.Arbitrary<[string, Json]> = fc
  .tuple(
    fc.uuid(),
    fc.constantFrom<[string, [string, number][]]>(
      [FIXTURE.bulk, [['VCPU', 2_000_000]]],
      [FIXTURE.bulk, [['DISK_GB', 1]]],
      [FIXTURE.sharing, [['IPV4_ADDRESS', 17]]],
      [fixedUuid(0xdead), [['VCPU', 1]]],
    ),
  )
  .map(([consumer, amounts]): [string, Json] => [consumer, claimOf([amounts], null)]);

/** The bulk provider's inventory as a reshape sets it, with its generation as it is (offset 0) or stale. */
const bulkInventories = (offset: number): Json =>
  obj([
    [
      FIXTURE.bulk,
      obj([
        ['resource_provider_generation', { live: 'provider', uuid: FIXTURE.bulk, offset }],
        [
          'inventories',
          obj([
            ['VCPU', obj([['total', num(1_000_000)]])],
            ['MEMORY_MB', obj([['total', num(100_000_000)]])],
          ]),
        ],
      ]),
    ],
  ]);

/** Bodies of many consumers for the routes that take them: POST /allocations and (with the bulk provider's inventory) POST /reshaper. */
const BULK_BODIES: Partial<Record<string, fc.Arbitrary<Json>>> = {
  'POST /allocations': bulkClaims.map(obj),
  'POST /reshaper': bulkClaims.map((claims) =>
    obj([
      ['inventories', bulkInventories(0)],
      ['allocations', obj(claims)],
    ]),
  ),
};

/**
 * Clean bodies that name what the fixture holds as it is, for routes whose
 * schema-drawn bodies rarely fit it, in every microversion's shape: a
 * provider created under a uuid clean deletes name (NEW_PROVIDERS); a
 * class renamed (1.2-1.6) to a name no class has; a reshape of a fixture
 * provider to the inventory it has, moving no allocation.
 */
const KNOWN_BODIES: Partial<Record<string, fc.Arbitrary<Json>>> = {
  'PUT /resource_classes/{name}': fc.stringMatching(/^[A-Z]{4}$/).map((name) => obj([['name', `CUSTOM_FUZZ_${name}`]])),
  'POST /resource_providers': fc.tuple(fc.constantFrom(...NEW_PROVIDERS), fc.integer({ min: 0, max: 99 })).map(([uuid, n]) =>
    obj([
      ['name', `fuzz-new-${n}`],
      ['uuid', uuid],
    ]),
  ),
  'POST /reshaper': fc.constantFrom(FIXTURE.child, FIXTURE.sharing, FIXTURE.bulk).map((uuid) =>
    obj([
      [
        'inventories',
        obj([
          [
            uuid,
            obj([
              ['resource_provider_generation', { live: 'provider', uuid, offset: 0 }],
              ['inventories', obj(Object.entries(FIXTURE_INVENTORIES.get(uuid) ?? {}).map(([name, { total }]) => [name, obj([['total', num(total)]])]))],
            ]),
          ],
        ]),
      ],
      ['allocations', obj([])],
    ]),
  ),
};

/** A request built to fail late: its path, body and the microversions it is sent at. */
interface RollbackShape {
  since: string;
  until?: string;
  path: string;
  body: fc.Arbitrary<Json>;
}

/**
 * Clean requests that fail where a rollback is due, if anywhere: after a
 * change of several steps staged and fenced what it could, after writes
 * ahead of a commit, or (where the service checks first) before any write.
 * Each is judged by the stored state, read before and after.
 */
const ROLLBACK_BODIES: Partial<Record<RouteKey, RollbackShape>> = {
  // The tree's root moved under another root, which rewrites its 100 descendants' roots (a change in steps), under a name a
  // descendant has: the name's write is fenced after every provider, and fails.
  'PUT /resource_providers/{uuid}': {
    since: '1.14',
    path: `/resource_providers/${FIXTURE.tree}`,
    body: fc.tuple(fc.constantFrom(...FIXTURE_TREE_CHILD_NAMES), fc.constantFrom(FIXTURE.root, FIXTURE.sharing, FIXTURE.empty)).map(([name, parent]) =>
      obj([
        ['name', name],
        ['parent_provider_uuid', parent],
      ]),
    ),
  },
  // Claims of many consumers (a change in steps), the last of which cannot be granted.
  'POST /allocations': { since: '1.38', path: '/allocations', body: fc.tuple(bulkClaims, refusedClaim).map(([claims, refused]) => obj([...claims, refused])) },
  // The fixture's consumer over every provider that has room, and one more than the sharing provider has.
  'PUT /allocations/{consumer_uuid}': {
    since: '1.38',
    path: `/allocations/${FIXTURE.consumer}`,
    body: fc.constant(
      claimOf(
        [
          [FIXTURE.root, [['VCPU', 1]]],
          [FIXTURE.child, [['DISK_GB', 1]]],
          [FIXTURE.bulk, [['VCPU', 1]]],
          [FIXTURE.sharing, [['IPV4_ADDRESS', 17]]],
        ],
        { live: 'consumer', uuid: FIXTURE.consumer, offset: 0 },
      ),
    ),
  },
  // A reshape of many consumers with a stale generation, or whose last claim cannot be granted.
  'POST /reshaper': {
    since: '1.38',
    path: '/reshaper',
    body: fc.oneof(
      fc.tuple(bulkClaims, fc.constantFrom(1, -1)).map(([claims, offset]) =>
        obj([
          ['inventories', bulkInventories(offset)],
          ['allocations', obj(claims)],
        ]),
      ),
      fc.tuple(bulkClaims, refusedClaim).map(([claims, refused]) =>
        obj([
          ['inventories', bulkInventories(0)],
          ['allocations', obj([...claims, refused])],
        ]),
      ),
    ),
  },
  // Aggregates enough that their search entries are written ahead of the commit, with a stale generation.
  'PUT /resource_providers/{uuid}/aggregates': {
    since: '1.19',
    path: `/resource_providers/${FIXTURE.bulk}/aggregates`,
    body: fc.tuple(fc.uniqueArray(fc.uuid(), { minLength: 60, maxLength: 120 }), fc.constantFrom(1, -1)).map(([aggregates, offset]) =>
      obj([
        ['aggregates', aggregates],
        ['resource_provider_generation', { live: 'provider', uuid: FIXTURE.bulk, offset }],
      ]),
    ),
  },
  // The fixture's class, in use, renamed (1.2-1.6) to a name another class has.
  'PUT /resource_classes/{name}': {
    since: '1.2',
    until: '1.7',
    path: `/resource_classes/${FIXTURE.customClass}`,
    body: fc.constant(obj([['name', FIXTURE.otherClass]])),
  },
};

/**
 * A body for a route that takes one: the schema's, (clean) now and then a
 * known one, or one of many consumers (`bulk`); or (not clean) a wrong value,
 * broken JSON, bytes that are not UTF-8, none.
 */
function bodyOf(
  schema: JsonSchema,
  { bulk, known }: { bulk?: fc.Arbitrary<Json>; known?: fc.Arbitrary<Json> },
  place: { provider?: string; consumer?: string; route: string },
  mode: ModeSettings,
): fc.Arbitrary<{ body?: FuzzBody; mayRollBack: boolean }> {
  const json = valueOf(schema, { ...place, odds: mode.odds });
  const fitting = json.map((value) => ({ body: { json: value }, mayRollBack: false }));
  const many = bulk?.map((value) => ({ body: { json: value }, mayRollBack: true }));
  const fixed = mode === MODES.clean ? known?.map((value) => ({ body: { json: value }, mayRollBack: false })) : undefined;
  const schemas = fc.oneof(
    { weight: 15, arbitrary: fitting },
    ...(many === undefined ? [] : [{ weight: 1, arbitrary: many }]),
    ...(fixed === undefined ? [] : [{ weight: 10, arbitrary: fixed }]),
  );
  if (mode.brokenBodies === 0) return schemas;
  const broken = (body: fc.Arbitrary<FuzzBody | undefined>) => body.map((sent) => ({ ...(sent && { body: sent }), mayRollBack: false }));
  return fc.oneof(
    { weight: 16, arbitrary: schemas },
    { weight: mode.brokenBodies, arbitrary: broken(hostileJson.map((value): FuzzBody => ({ json: value }))) },
    { weight: mode.brokenBodies, arbitrary: broken(fc.tuple(json, damages).map(([value, damage]): FuzzBody => ({ json: value, damage }))) },
    { weight: 1, arbitrary: broken(fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes): FuzzBody => ({ bytes: [...bytes] }))) },
    { weight: 1, arbitrary: broken(fc.constant(undefined)) },
  );
}

/** No body (where the route or its microversion takes none), or (not clean) now and then hostile JSON. */
function noBody(mode: ModeSettings): fc.Arbitrary<{ body?: FuzzBody; mayRollBack: boolean }> {
  const none = fc.constant({ mayRollBack: false });
  if (mode.brokenBodies === 0) return none;
  return fc.oneof(
    { weight: 12, arbitrary: none },
    { weight: mode.brokenBodies, arbitrary: hostileJson.map((json) => ({ body: { json }, mayRollBack: false })) },
  );
}

/** Request headers: the fixed ones, the microversion (none: null), the content type (none: null; the usual: undefined). */
function headerList(fixed: [string, string][], microversion: string | null, contentType: string | null | undefined, body: unknown): [string, string][] {
  const headers: [string, string][] = [...fixed];
  if (microversion !== null) headers.push(['openstack-api-version', `placement ${microversion}`]);
  // A body goes with application/json unless another type (or none) was drawn; no body, no type unless one was drawn.
  const type = contentType === undefined ? (body === undefined ? null : 'application/json') : contentType;
  if (type !== null) headers.push(['content-type', type]);
  return headers;
}

/** A route's requests in one mode: a microversion first, then the query or body schema of that microversion. */
function requestsIn(route: Route, name: keyof typeof MODES): fc.Arbitrary<FuzzRequest> {
  const mode = MODES[name];
  const key = routeKey(route);
  const bodies: Versioned[] | undefined = (BODY_SCHEMAS as Partial<Record<string, Versioned[]>>)[key];
  const queries: Versioned[] | undefined = (QUERY_SCHEMAS as Partial<Record<string, Versioned[]>>)[key];
  const entries: Versioned[] = bodies ?? queries ?? [{ since: route.since }];
  // Now and then (not clean) another method on the route's path: HEAD of a GET, one no route has.
  const method =
    mode.oddHeaders === 0
      ? fc.constant(route.method)
      : fc.oneof(
          { weight: 40, arbitrary: fc.constant(route.method) },
          { weight: mode.oddHeaders, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PATCH', 'TRACE') },
        );
  return fc.constantFrom(...entries).chain((entry) =>
    versions(entry.since, entry.until, mode).chain((microversion) => {
      const query = queryString(route, queries === undefined ? undefined : entry.schema, mode, minorOf(microversion));
      return fc.tuple(pathOf(route, mode), query, headersOf(mode), method).chain(([{ path, provider, consumer }, query, { fixed, contentType }, verb]) => {
        const bulk = entry.until === undefined ? BULK_BODIES[key] : undefined;
        const body =
          bodies === undefined || entry.schema === undefined
            ? noBody(mode)
            : bodyOf(entry.schema, { bulk, known: KNOWN_BODIES[key] }, { provider, consumer, route: key }, mode);
        return body.map(({ body: sent, mayRollBack }): FuzzRequest => ({
          route: key,
          mode: name,
          mayRollBack,
          method: verb,
          target: query === '' ? path : `${path}?${query}`,
          headers: headerList(fixed, microversion, contentType, sent),
          ...(sent && { body: sent }),
        }));
      });
    }),
  );
}

/** A route's rollback bodies, at the microversions they fit. */
function rollbackRequests(route: Route, shape: RollbackShape): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(versions(shape.since, shape.until, MODES.clean), shape.body).map(([microversion, json]): FuzzRequest => ({
    route: routeKey(route),
    mode: 'rollback',
    mayRollBack: true,
    method: route.method,
    target: shape.path,
    headers: headerList([['x-auth-token', 'admin']], microversion, undefined, json),
    body: { json },
  }));
}

/** The token (admin mostly), now and then an Accept or Accept-Encoding, and the content type: undefined for the usual, null for none. */
function headersOf(mode: ModeSettings): fc.Arbitrary<{ fixed: [string, string][]; contentType: string | null | undefined }> {
  const admin: [string, string][] = [['x-auth-token', 'admin']];
  if (mode.oddHeaders === 0) return fc.constant({ fixed: admin, contentType: undefined });
  const token = fc.oneof(
    { weight: 40, arbitrary: fc.constant(admin) },
    { weight: mode.oddHeaders, arbitrary: fc.constantFrom<[string, string][]>([], [['x-auth-token', 'user']], [['x-auth-token', 't'.repeat(9000)]]) },
  );
  const accept = fc.oneof(
    { weight: 40, arbitrary: fc.constant<[string, string][]>([]) },
    {
      weight: mode.oddHeaders,
      arbitrary: fc
        .constantFrom('application/json', '*/*', 'text/html', 'application/json;q=0', 'application/xml')
        .map((a): [string, string][] => [['accept', a]]),
    },
  );
  // Compressed answers (response-size.ts), asked for as nova asks, and oddly.
  const encoding = fc.oneof(
    { weight: 20, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 2, arbitrary: fc.constant<[string, string][]>([['accept-encoding', 'gzip, deflate']]) },
    {
      weight: mode.oddHeaders,
      arbitrary: fc.constantFrom('gzip;q=0', '*', 'br', 'identity;q=0, *;q=0', ' gzip ').map((e): [string, string][] => [['accept-encoding', e]]),
    },
  );
  const contentType = fc.oneof(
    { weight: 40, arbitrary: fc.constant(undefined) },
    { weight: mode.oddHeaders, arbitrary: fc.constantFrom<string | null>(...CONTENT_TYPES, null) },
  );
  return fc.tuple(token, accept, encoding, contentType).map(([a, b, e, c]) => ({ fixed: [...a, ...b, ...e], contentType: c }));
}

/** A route's requests: clean, mild and hostile ones, and its rollback bodies. */
export function requestsFor(route: Route): fc.Arbitrary<FuzzRequest> {
  const rollback = ROLLBACK_BODIES[routeKey(route) as RouteKey];
  return fc.oneof(
    ...(Object.keys(MODES) as (keyof typeof MODES)[]).map((name) => ({ weight: MODES[name].weight, arbitrary: requestsIn(route, name) })),
    ...(rollback === undefined ? [] : [{ weight: ROLLBACK_WEIGHT, arbitrary: rollbackRequests(route, rollback) }]),
  );
}

/** Every route's requests, the routes equally likely. */
export const fuzzRequests: fc.Arbitrary<FuzzRequest> = fc.oneof(...ROUTES.map(requestsFor));

/** The routes the fuzzer covers: all of the route table. */
export const ROUTE_KEYS: readonly string[] = ROUTES.map(routeKey);

/** The request as sent, generations filled in as they are now. */
export function materialize(request: FuzzRequest, live: LiveGenerations): SentRequest {
  const headers = Object.fromEntries(request.headers);
  const sent: SentRequest = {
    route: request.route,
    mode: request.mode,
    mayRollBack: request.mayRollBack,
    method: request.method,
    target: request.target,
    headers,
  };
  if (request.body !== undefined) sent.body = bodyBytes(request.body, live);
  return sent;
}

function bodyBytes(body: FuzzBody, live: LiveGenerations): Buffer {
  if ('bytes' in body) return Buffer.from(body.bytes);
  const text = writeJson(body.json, live);
  const damage = body.damage;
  if (damage === undefined) return Buffer.from(text, 'utf8');
  if ('cut' in damage) return Buffer.from(text.slice(0, Math.floor(text.length * damage.cut)), 'utf8');
  if ('append' in damage) return Buffer.from(`${text}${damage.append}`, 'utf8');
  if ('prepend' in damage) return Buffer.from(`${damage.prepend}${text}`, 'utf8');
  if ('singleQuotes' in damage) return Buffer.from(text.replaceAll('"', "'"), 'utf8');
  if ('rawControl' in damage) return Buffer.from(text.replace('"', `"${damage.rawControl}`), 'utf8');
  return Buffer.from(text.replace(/"([^"]*)"/, '"$1\u00e9\u4e2d"'), damage.encoding);
}

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** The body as a printf format: printable ASCII as it is, every other byte (and %, \, ') as an octal escape. */
function printfFormat(body: Buffer): string {
  let out = '';
  for (const byte of body)
    out +=
      byte >= 0x20 && byte < 0x7f && byte !== 0x25 && byte !== 0x5c && byte !== 0x27 ? String.fromCharCode(byte) : `\\${byte.toString(8).padStart(3, '0')}`;
  return out;
}

/** A curl command that sends the same request (curl's own Accept and User-Agent left out; the path as is, unglobbed). */
export function curlOf(sent: SentRequest, baseUrl: string): string {
  const headers = Object.entries(sent.headers).map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`);
  if (!('accept' in sent.headers)) headers.push(`-H 'accept:'`);
  headers.push(`-H 'user-agent:'`);
  if (sent.body !== undefined && !('content-type' in sent.headers)) headers.push(`-H 'content-type:'`);
  const curl = ['curl', '-sS', '-i', '-g', '--path-as-is', '-X', sent.method, ...headers];
  if (sent.body === undefined) return [...curl, shellQuote(`${baseUrl}${sent.target}`)].join(' ');
  return `printf ${shellQuote(printfFormat(sent.body))} | ${[...curl, '--data-binary', '@-', shellQuote(`${baseUrl}${sent.target}`)].join(' ')}`;
}
