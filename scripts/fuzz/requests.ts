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
import { FIXTURE, FIXTURE_PROVIDERS } from './fixture.js';
import { valueOf } from './schema-values.js';
import { classNames, consumerUuid, groupSuffixes, providerUuid, queryTexts, traitNames, type Texts } from './texts.js';
import { hostileJson, hostileUrlText, num, obj, percentEncode, PROTOTYPE_KEYS, writeJson, type Json, type LiveGenerations } from './values.js';

/** How a JSON body is broken after it is written: cut, padded, re-quoted, or encoded as something else than UTF-8. */
export type Damage =
  { cut: number } | { append: string } | { prepend: string } | { singleQuotes: true } | { rawControl: string } | { encoding: 'latin1' | 'utf16le' };

export type FuzzBody = { json: Json; damage?: Damage } | { bytes: number[] };

export interface FuzzRequest {
  /** The route key the request was made for (a broken path may reach another route, or none). */
  route: string;
  method: string;
  /** Path and query string exactly as sent. */
  target: string;
  headers: [string, string][];
  body?: FuzzBody;
}

/** What goes on the wire. */
export interface SentRequest {
  route: string;
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** A body schema and the microversions it is the schema of (`until` excluded). */
interface Versioned {
  since: string;
  until?: string;
  schema: JsonSchema;
}

/** The newest query schema of each route that takes a query string, and the microversion it starts at. */
const QUERY_SCHEMAS = {
  'GET /resource_providers': { since: '1.18', schema: provider.LIST_RESOURCE_PROVIDERS_QUERY_1_18 },
  'GET /allocation_candidates': { since: '1.36', schema: candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_36 },
  'GET /explain/allocation_candidates': { since: '1.36', schema: candidates.LIST_ALLOCATION_CANDIDATES_QUERY_1_36 },
  'GET /traits': { since: '1.6', schema: trait.LIST_TRAITS_QUERY_1_6 },
  'GET /usages': { since: '1.38', schema: usage.LIST_USAGES_QUERY_1_38 },
  'GET /history/allocations/{consumer_uuid}': { since: '1.0', schema: history.LIST_HISTORY_QUERY },
  'GET /history/resource_providers/{uuid}/allocations': { since: '1.0', schema: history.LIST_HISTORY_QUERY },
  'GET /history/usages': { since: '1.0', schema: history.HISTORY_USAGES_QUERY },
  'GET /upgrade/entries': { since: '1.0', schema: upgrade.VERIFY_ENTRIES_QUERY },
} satisfies Partial<Record<RouteKey, Versioned>>;

/** The body schemas of each route that takes a body: the newest, and older ones whose shape differs. */
const BODY_SCHEMAS = {
  'POST /resource_providers': [{ since: '1.14', schema: provider.POST_RESOURCE_PROVIDER_1_14 }],
  'PUT /resource_providers/{uuid}': [{ since: '1.14', schema: provider.PUT_RESOURCE_PROVIDER_1_14 }],
  'POST /resource_providers/{uuid}/inventories': [{ since: '1.0', schema: inventory.POST_INVENTORY_1_0 }],
  'PUT /resource_providers/{uuid}/inventories': [{ since: '1.0', schema: inventory.PUT_INVENTORIES_1_0 }],
  'PUT /resource_providers/{uuid}/inventories/{resource_class}': [{ since: '1.0', schema: inventory.PUT_INVENTORY_1_0 }],
  'PUT /resource_providers/{uuid}/aggregates': [
    { since: '1.19', schema: aggregate.PUT_AGGREGATES_1_19 },
    { since: '1.1', until: '1.19', schema: aggregate.PUT_AGGREGATES_1_1 },
  ],
  'PUT /resource_providers/{uuid}/traits': [{ since: '1.6', schema: trait.PUT_RESOURCE_PROVIDER_TRAITS_1_6 }],
  'POST /resource_classes': [{ since: '1.2', schema: resourceClass.POST_RESOURCE_CLASS_1_2 }],
  'PUT /resource_classes/{name}': [{ since: '1.2', until: '1.7', schema: resourceClass.PUT_RESOURCE_CLASS_1_2 }],
  'PUT /allocations/{consumer_uuid}': [
    { since: '1.38', schema: allocation.PUT_ALLOCATIONS_1_38 },
    { since: '1.12', until: '1.28', schema: allocation.PUT_ALLOCATIONS_1_12 },
    { since: '1.0', until: '1.8', schema: allocation.PUT_ALLOCATIONS_1_0 },
  ],
  'POST /allocations': [
    { since: '1.38', schema: allocation.POST_ALLOCATIONS_1_38 },
    { since: '1.13', until: '1.28', schema: allocation.POST_ALLOCATIONS_1_13 },
  ],
  'POST /reshaper': [{ since: '1.38', schema: reshaper.POST_RESHAPER_1_38 }],
  'POST /upgrade/finalize': [{ since: '1.0', schema: upgrade.FINALIZE_UPGRADE }],
} satisfies Partial<Record<RouteKey, Versioned[]>>;

/**
 * How hostile a request is. Clean: every value fits its schema and names
 * what exists, so the request reaches the code behind the parsers (and
 * changes things). Mild: now and then a value that does not fit. Hostile:
 * often, and broken bodies, odd headers, microversions that are none.
 */
export type Mode = 'clean' | 'mild' | 'hostile';

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

const MODES: Record<Mode, ModeSettings> = {
  clean: { weight: 4, odds: 0, texts: 'clean', rawOdds: 0, oddHeaders: 0, oddVersions: 0, brokenBodies: 0 },
  mild: { weight: 4, odds: 40, texts: 'any', rawOdds: 40, oddHeaders: 1, oddVersions: 1, brokenBodies: 1 },
  hostile: { weight: 2, odds: 6, texts: 'any', rawOdds: 8, oddHeaders: 4, oddVersions: 3, brokenBodies: 4 },
};

const minor = (version: string) => Number(version.split('.')[1]);
const NEWEST_MINOR = 39;

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
  const texts =
    name === 'uuid' ? providerUuid : name === 'consumer_uuid' ? consumerUuid : name === 'name' && route.path.startsWith('/traits') ? traitNames : classNames;
  return encoded(texts[mode.texts], mode);
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

/** One parameter: given once, a few times, or (hostile) hundreds of times. */
function parameter(names: fc.Arbitrary<string>, route: string, mode: ModeSettings): fc.Arbitrary<Pairs> {
  return names.chain((name) => {
    const values = queryTexts(name, route)[mode.texts];
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
 * few groups, each with its resources and now and then its other parameters;
 * group_policy where several suffixed groups need it; same_subtree naming
 * groups there are.
 */
function requestGroups(schema: JsonSchema, route: string): fc.Arbitrary<Pairs> {
  const names = Object.keys(schema.patternProperties ?? {}).map((pattern) => GROUP_FORM.exec(pattern)![1]!);
  const value = (name: string) => queryTexts(name, route).clean;
  const group = (suffix: string) =>
    fc
      .tuple(
        ...names.map((name) => {
          const pair = value(name).map((text): Pairs => [[`${name}${suffix}`, text]]);
          return name === 'resources' ? pair : fc.oneof({ weight: 3, arbitrary: fc.constant<Pairs>([]) }, { weight: 1, arbitrary: pair });
        }),
      )
      .map((lists) => lists.flat());
  return fc.uniqueArray(fc.oneof(fc.constant(''), groupSuffixes.clean), { minLength: 1, maxLength: 3 }).chain((suffixes) => {
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

/** The query string of a request to the route: its schema's parameters, and (not clean) some no schema knows. */
function queryString(route: Route, mode: ModeSettings): fc.Arbitrary<string> {
  const key = routeKey(route);
  const schema = (QUERY_SCHEMAS as Partial<Record<string, Versioned>>)[key]?.schema;
  const grouped = Object.keys(schema?.patternProperties ?? {}).some((pattern) => GROUP_FORM.test(pattern));
  if (schema !== undefined && grouped && mode === MODES.clean) {
    return requestGroups(schema, key).map((pairs) => pairs.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join('&'));
  }
  const parts: fc.Arbitrary<Pairs>[] = [];
  const none = fc.constant<Pairs>([]);
  for (const name of Object.keys(schema?.properties ?? {})) {
    const required = schema?.required?.includes(name) ?? false;
    parts.push(
      fc.oneof({ weight: required ? 20 : 3, arbitrary: parameter(fc.constant(name), key, mode) }, { weight: required ? mode.oddHeaders : 4, arbitrary: none }),
    );
  }
  for (const pattern of Object.keys(schema?.patternProperties ?? {})) {
    // A request group's resources come first and at least once (unless hostile), so that the groups' other parameters count.
    const least = pattern.startsWith('^resources') && mode !== MODES.hostile ? 1 : 0;
    parts.push(fc.array(parameter(patternNames(pattern, mode), key, mode), { minLength: least, maxLength: 2 }).map((lists) => lists.flat()));
  }
  if (mode.oddHeaders > 0) parts.push(fc.oneof({ weight: 12, arbitrary: none }, { weight: mode.oddHeaders, arbitrary: parameter(unknownNames, key, mode) }));
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

/** The path with each parameter drawn, and the provider and consumer it names (a body's generations are theirs). */
function pathOf(route: Route, mode: ModeSettings): fc.Arbitrary<{ path: string; provider?: string; consumer?: string }> {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  return fc.tuple(...names.map((name) => pathValue(name, route, mode))).map((values) => {
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

/** New consumers' claims on the bulk provider, as many as make a change of several steps (over 100 writes). */
const bulkClaims: fc.Arbitrary<[string, Json][]> = fc.uniqueArray(fc.uuid(), { minLength: 40, maxLength: 90 }).map((consumers) =>
  consumers.map((consumer): [string, Json] => [
    consumer,
    obj([
      ['allocations', obj([[FIXTURE.bulk, obj([['resources', obj([['VCPU', num(1)]])]])]])],
      ['project_id', FIXTURE.project],
      ['user_id', FIXTURE.user],
      ['consumer_generation', null],
      ['consumer_type', 'INSTANCE'],
    ]),
  ]),
);

/** Bodies of many consumers for the routes that take them: POST /allocations and (with the bulk provider's inventory) POST /reshaper. */
const BULK_BODIES: Partial<Record<string, fc.Arbitrary<Json>>> = {
  'POST /allocations': bulkClaims.map(obj),
  'POST /reshaper': bulkClaims.map((claims) =>
    obj([
      [
        'inventories',
        obj([
          [
            FIXTURE.bulk,
            obj([
              ['resource_provider_generation', { live: 'provider', uuid: FIXTURE.bulk, offset: 0 }],
              [
                'inventories',
                obj([
                  ['VCPU', obj([['total', num(1_000_000)]])],
                  ['MEMORY_MB', obj([['total', num(100_000_000)]])],
                ]),
              ],
            ]),
          ],
        ]),
      ],
      ['allocations', obj(claims)],
    ]),
  ),
};

/** A body for a route that takes one: the schema's, or (not clean) a wrong value, broken JSON, bytes that are not UTF-8, none. */
function bodyOf(entry: Versioned, place: { provider?: string; consumer?: string }, mode: ModeSettings, route: string): fc.Arbitrary<FuzzBody | undefined> {
  const json = valueOf(entry.schema, { ...place, odds: mode.odds });
  const bulk = entry.until === undefined ? BULK_BODIES[route] : undefined;
  const fitting = (bulk === undefined ? json : fc.oneof({ weight: 15, arbitrary: json }, { weight: 1, arbitrary: bulk })).map(
    (value): FuzzBody | undefined => ({ json: value }),
  );
  if (mode.brokenBodies === 0) return fitting;
  return fc.oneof(
    { weight: 16, arbitrary: fitting },
    { weight: mode.brokenBodies, arbitrary: hostileJson.map((value): FuzzBody => ({ json: value })) },
    { weight: mode.brokenBodies, arbitrary: fc.tuple(json, damages).map(([value, damage]): FuzzBody => ({ json: value, damage })) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes): FuzzBody => ({ bytes: [...bytes] })) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** A route's requests in one mode. */
function requestsIn(route: Route, mode: ModeSettings): fc.Arbitrary<FuzzRequest> {
  const key = routeKey(route);
  const bodies: Versioned[] | undefined = (BODY_SCHEMAS as Partial<Record<string, Versioned[]>>)[key];
  const query: Versioned | undefined = (QUERY_SCHEMAS as Partial<Record<string, Versioned>>)[key];
  const entries: (Versioned | undefined)[] = bodies ?? [query];
  return fc.tuple(fc.constantFrom(...entries), pathOf(route, mode), queryString(route, mode)).chain(([entry, { path, provider: named, consumer }, query]) => {
    const noBody = fc.constant<FuzzBody | undefined>(undefined);
    const body: fc.Arbitrary<FuzzBody | undefined> =
      bodies === undefined
        ? mode.brokenBodies === 0
          ? noBody
          : fc.oneof({ weight: 12, arbitrary: noBody }, { weight: mode.brokenBodies, arbitrary: hostileJson.map((json): FuzzBody => ({ json })) })
        : bodyOf(entry!, { provider: named, consumer }, mode, key);
    // Now and then (not clean) another method on the route's path: HEAD of a GET, one no route has.
    const method =
      mode.oddHeaders === 0
        ? fc.constant(route.method)
        : fc.oneof(
            { weight: 40, arbitrary: fc.constant(route.method) },
            { weight: mode.oddHeaders, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PATCH', 'TRACE') },
          );
    return fc
      .tuple(versions(entry?.since ?? route.since, entry?.until, mode), body, headersOf(mode), method)
      .map(([microversion, sent, { fixed, contentType }, verb]): FuzzRequest => {
        const headers: [string, string][] = [...fixed];
        if (microversion !== null) headers.push(['openstack-api-version', `placement ${microversion}`]);
        // A body goes with application/json unless another type (or none) was drawn; no body, no type unless one was drawn.
        const type = contentType === undefined ? (sent === undefined ? null : 'application/json') : contentType;
        if (type !== null) headers.push(['content-type', type]);
        return { route: key, method: verb, target: query === '' ? path : `${path}?${query}`, headers, body: sent };
      });
  });
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

/** A route's requests: clean, mild and hostile ones. */
export const requestsFor = (route: Route): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(...Object.values(MODES).map((mode) => ({ weight: mode.weight, arbitrary: requestsIn(route, mode) })));

/** Every route's requests, the routes equally likely. */
export const fuzzRequests: fc.Arbitrary<FuzzRequest> = fc.oneof(...ROUTES.map(requestsFor));

/** The routes the fuzzer covers: all of the route table. */
export const ROUTE_KEYS: readonly string[] = ROUTES.map(routeKey);

/** The request as sent, generations filled in as they are now. */
export function materialize(request: FuzzRequest, live: LiveGenerations): SentRequest {
  const headers = Object.fromEntries(request.headers);
  const sent: SentRequest = { route: request.route, method: request.method, target: request.target, headers };
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
