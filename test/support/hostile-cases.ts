/**
 * Hostile and malformed requests, by class, for test/functions/hostile-input.test.ts.
 * Each case names the status this service answers and, where upstream
 * Placement 8.0 answers differently (its own 500s, mostly), upstream's
 * status and why we differ. Refused requests must leave the stored state as
 * it was; the few accepted ones say so (`writes`).
 */
import { randomUUID } from 'node:crypto';
import type { PlacementClient } from '../../admin/placement-client.js';

/** What the cases act on: created once, then (by every refused case) left alone. */
export interface Fixture {
  /** A root provider with VCPU, MEMORY_MB and CUSTOM_HOSTILE inventory, two traits and an aggregate. */
  root: string;
  rootGeneration: number;
  /** Its child, with DISK_GB inventory. */
  child: string;
  childGeneration: number;
  aggregate: string;
  /** A consumer holding resources on both. */
  consumer: string;
  project: string;
  user: string;
}

export interface HostileCase {
  name: string;
  method: string;
  path: string;
  /** The request's head exactly as written on the socket (with `path`), for what an HTTP client refuses to send. */
  head?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent exactly as given (with content-type application/json unless `headers` say otherwise). */
  raw?: string | Buffer;
  headers?: Record<string, string | null>;
  /** Microversion; 'latest' unless given (null: no header). */
  version?: string | null;
  status: number;
  /** What the error's detail must say. */
  detail?: string;
  /** Upstream's status where it differs from ours, and why we differ. */
  upstream?: { status: number; why: string };
  /** The request is accepted and changes stored state (upstream accepts it too). */
  writes?: true;
}

export type CaseClass = (fixture: Fixture) => HostileCase[];

const CUSTOM_CLASS = 'CUSTOM_HOSTILE';
const CUSTOM_TRAIT = 'CUSTOM_HOSTILE';

/** A new fixture's ids (the cases are built from them before it exists). */
export function newFixture(): Fixture {
  // Created, then given inventories, traits, aggregates and an allocation: four generations.
  return {
    root: randomUUID(),
    rootGeneration: 4,
    child: randomUUID(),
    // Created, then given inventory and the allocation.
    childGeneration: 2,
    aggregate: randomUUID(),
    consumer: randomUUID(),
    project: randomUUID(),
    user: randomUUID(),
  };
}

/** Creates the fixture through the API. */
export async function createFixture(api: PlacementClient, fixture: Fixture): Promise<void> {
  const ok = async (promise: ReturnType<PlacementClient['get']>) => {
    const response = await promise;
    if (response.status >= 300) throw new Error(`fixture: ${response.status} ${response.text}`);
    return response;
  };
  const { root, child, aggregate, consumer, project, user } = fixture;
  await ok(api.request('PUT', `/resource_classes/${CUSTOM_CLASS}`));
  await ok(api.request('PUT', `/traits/${CUSTOM_TRAIT}`));
  await ok(api.post('/resource_providers', { name: `hostile-root-${root}`, uuid: root }));
  await ok(api.post('/resource_providers', { name: `hostile-child-${child}`, uuid: child, parent_provider_uuid: root }));
  await ok(
    api.put(`/resource_providers/${root}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, [CUSTOM_CLASS]: { total: 4 } },
    }),
  );
  await ok(api.put(`/resource_providers/${child}/inventories`, { resource_provider_generation: 0, inventories: { DISK_GB: { total: 100 } } }));
  await ok(api.put(`/resource_providers/${root}/traits`, { resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX2', CUSTOM_TRAIT] }));
  await ok(api.put(`/resource_providers/${root}/aggregates`, { resource_provider_generation: 2, aggregates: [aggregate] }));
  await ok(
    api.put(`/allocations/${consumer}`, {
      allocations: { [root]: { resources: { VCPU: 1, MEMORY_MB: 64 } }, [child]: { resources: { DISK_GB: 10 } } },
      project_id: project,
      user_id: user,
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    }),
  );
  for (const [uuid, expected] of [
    [root, fixture.rootGeneration],
    [child, fixture.childGeneration],
  ] as const) {
    const generation = (await ok(api.get(`/resource_providers/${uuid}`))).body.generation as number;
    if (generation !== expected) throw new Error(`fixture: provider ${uuid} at generation ${generation}, not ${expected}`);
  }
}

/** The GETs whose answers must not change when a request is refused. */
export function snapshotPaths(f: Fixture): string[] {
  const providers = [f.root, f.child].flatMap((uuid) =>
    ['inventories', 'traits', 'aggregates', 'allocations', 'usages'].map((what) => `/resource_providers/${uuid}/${what}`),
  );
  return ['/resource_providers', ...providers, `/allocations/${f.consumer}`, `/usages?project_id=${f.project}`, '/resource_classes', '/traits'];
}

const PROTOTYPE_NAMES = ['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty'];
const upstream500 = (why: string) => ({ status: 500, why });
/** Upstream's uWSGI drops the connection of a request this large. */
const upstreamDrops = { status: 0, why: 'its uWSGI server closes the connection' };
const enc = encodeURIComponent;

/** GET /traits?name=... and the other name and list filters of query strings. */
const namePatterns: CaseClass = (f): HostileCase[] => [
  { name: '40 % signs then a letter (was catastrophic backtracking)', method: 'GET', path: `/traits?name=startswith:${'%25'.repeat(40)}X`, status: 200 },
  { name: '3000 % signs then a character no name has', method: 'GET', path: `/traits?name=startswith:${'%25'.repeat(3000)}!`, status: 200 },
  { name: '"_%" repeated 1500 times', method: 'GET', path: `/traits?name=startswith:${'_%25'.repeat(1500)}`, status: 200 },
  { name: '"%_" repeated 1500 times then Z', method: 'GET', path: `/traits?name=startswith:${'%25_'.repeat(1500)}Z`, status: 200 },
  { name: 'a prefix of 8000 letters', method: 'GET', path: `/traits?name=startswith:${'A'.repeat(8000)}`, status: 200 },
  { name: 'a prefix of 250 underscores and a %', method: 'GET', path: `/traits?name=startswith:${'_'.repeat(250)}%25`, status: 200 },
  { name: 'regex metacharacters in the prefix', method: 'GET', path: `/traits?name=startswith:${enc('(.*)+$[^a]{2,}\\')}`, status: 200 },
  { name: 'a NUL in the prefix', method: 'GET', path: '/traits?name=startswith:HW%00', status: 200 },
  { name: 'an emoji prefix', method: 'GET', path: `/traits?name=startswith:${enc('\u{1F600}%')}`, status: 200 },
  { name: 'in: with 1000 names', method: 'GET', path: `/traits?name=in:${Array.from({ length: 1000 }, (_, n) => `CUSTOM_T${n}`).join(',')}`, status: 200 },
  { name: 'in: with one name of 8000 characters', method: 'GET', path: `/traits?name=in:CUSTOM_${'X'.repeat(8000)}`, status: 200 },
  { name: 'in: with 3000 commas', method: 'GET', path: `/traits?name=in:${','.repeat(3000)}`, status: 200 },
  { name: 'a name filter without operator', method: 'GET', path: '/traits?name=HW_CPU', status: 400 },
  { name: 'an unknown operator', method: 'GET', path: `/traits?name=${enc('regex:.*')}`, status: 200 },
  { name: 'associated neither true nor false', method: 'GET', path: '/traits?associated=maybe', status: 400 },
  { name: 'the name filter 500 times', method: 'GET', path: `/traits?${'name=startswith:%25%25&'.repeat(500)}name=startswith:HW`, status: 200 },
  { name: 'required with 5000 leading "!"', method: 'GET', path: `/resource_providers?required=${'!'.repeat(5000)}HW_CPU_X86_AVX2`, status: 200 },
  { name: 'required=in: with 300 commas', method: 'GET', path: `/resource_providers?required=in:${','.repeat(300)}`, status: 400 },
  { name: 'resources with 3000 commas', method: 'GET', path: `/resource_providers?resources=${','.repeat(3000)}`, status: 400 },
  { name: 'resources with 2000 colons', method: 'GET', path: `/resource_providers?resources=VCPU${':'.repeat(2000)}1`, status: 400 },
  {
    name: 'member_of=in: with 250 aggregates',
    method: 'GET',
    path: `/resource_providers?member_of=in:${Array.from({ length: 250 }, () => randomUUID()).join(',')}`,
    status: 200,
  },
  {
    name: 'same_subtree with 2000 suffixes',
    method: 'GET',
    path: `/allocation_candidates?resources=VCPU:1&same_subtree=${Array.from({ length: 2000 }, (_, n) => `_${n}`).join(',')}`,
    status: 400,
  },
  {
    name: 'granular group suffixes of 65 characters',
    method: 'GET',
    path: `/allocation_candidates?resources_${'a'.repeat(64)}=VCPU:1&group_policy=none`,
    status: 400,
  },
  { name: 'a pattern in the in_tree filter', method: 'GET', path: `/resource_providers?in_tree=${enc('%%%%')}`, status: 400 },
  { name: 'a LIKE pattern as a provider name', method: 'GET', path: `/resource_providers?name=${enc(`hostile-root-%`)}`, status: 200 },
  { name: 'a LIKE pattern as a resource class', method: 'GET', path: `/resource_providers?resources=${enc('%:1')}`, status: 400 },
  { name: 'a LIKE pattern as a trait', method: 'GET', path: `/allocation_candidates?resources=VCPU:1&required=${enc('HW_%')}`, status: 400 },
  { name: 'root_required with a pattern', method: 'GET', path: `/allocation_candidates?resources=VCPU:1&root_required=${enc('%')}`, status: 400 },
  { name: 'a pattern as the project of GET /usages', method: 'GET', path: `/usages?project_id=${enc('%')}&user_id=${enc('_')}`, status: 200 },
  { name: 'an aggregate pattern', method: 'GET', path: `/resource_providers?member_of=${enc(`${f.aggregate.slice(0, 30)}%`)}`, status: 400 },
];

/** Names that are also properties of every JavaScript object, wherever a class or trait name is accepted. */
const prototypeNames: CaseClass = (f) =>
  PROTOTYPE_NAMES.flatMap((name): HostileCase[] => {
    const other = randomUUID();
    const consumerBody = {
      allocations: { [f.root]: { resources: { [name]: 1 } } },
      project_id: f.project,
      user_id: f.user,
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    return [
      { name: `GET an inventory of ${name}`, method: 'GET', path: `/resource_providers/${f.root}/inventories/${name}`, status: 404 },
      {
        name: `PUT an inventory of ${name}`,
        method: 'PUT',
        path: `/resource_providers/${f.root}/inventories/${name}`,
        json: { resource_provider_generation: f.rootGeneration, total: 1 },
        status: 404,
      },
      { name: `DELETE the inventory of ${name}`, method: 'DELETE', path: `/resource_providers/${f.root}/inventories/${name}`, status: 404 },
      {
        name: `PUT inventories with a ${name} key`,
        method: 'PUT',
        path: `/resource_providers/${f.root}/inventories`,
        raw: `{"resource_provider_generation": ${f.rootGeneration}, "inventories": {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}, "${CUSTOM_CLASS}": {"total": 4}, "${name}": {"total": 1}}}`,
        status: 400,
      },
      {
        name: `PUT inventories with only a ${name} key`,
        method: 'PUT',
        path: `/resource_providers/${f.root}/inventories`,
        raw: `{"resource_provider_generation": ${f.rootGeneration}, "inventories": {"${name}": {"total": 1}}}`,
        status: 400,
      },
      {
        name: `POST an inventory of ${name}`,
        method: 'POST',
        path: `/resource_providers/${f.root}/inventories`,
        json: { resource_class: name, total: 1 },
        status: 400,
      },
      { name: `GET resource class ${name}`, method: 'GET', path: `/resource_classes/${name}`, status: 404 },
      { name: `PUT resource class ${name}`, method: 'PUT', path: `/resource_classes/${name}`, status: 400 },
      { name: `DELETE resource class ${name}`, method: 'DELETE', path: `/resource_classes/${name}`, status: 404 },
      { name: `POST resource class ${name}`, method: 'POST', path: '/resource_classes', json: { name }, status: 400 },
      { name: `GET trait ${name}`, method: 'GET', path: `/traits/${name}`, status: 404 },
      { name: `PUT trait ${name}`, method: 'PUT', path: `/traits/${name}`, status: 400 },
      { name: `DELETE trait ${name}`, method: 'DELETE', path: `/traits/${name}`, status: 404 },
      {
        name: `PUT provider traits with ${name}`,
        method: 'PUT',
        path: `/resource_providers/${f.root}/traits`,
        json: { resource_provider_generation: f.rootGeneration, traits: [name] },
        status: 400,
      },
      { name: `GET /traits?name=in:${name}`, method: 'GET', path: `/traits?name=in:${name}`, status: 200 },
      { name: `providers with resources ${name}:1`, method: 'GET', path: `/resource_providers?resources=${name}:1`, status: 400 },
      { name: `providers with required ${name}`, method: 'GET', path: `/resource_providers?required=${name}`, status: 400 },
      { name: `candidates for ${name}:1`, method: 'GET', path: `/allocation_candidates?resources=${name}:1`, status: 400 },
      { name: `candidates requiring ${name}`, method: 'GET', path: `/allocation_candidates?resources=VCPU:1&required=${name}`, status: 400 },
      {
        name: `candidates for a request group named ${name}`,
        method: 'GET',
        path: `/allocation_candidates?resources${name}=VCPU:1&resources=MEMORY_MB:1&group_policy=none`,
        status: 200,
      },
      { name: `candidates with root_required ${name}`, method: 'GET', path: `/allocation_candidates?resources=VCPU:1&root_required=${name}`, status: 400 },
      { name: `PUT allocations of ${name}`, method: 'PUT', path: `/allocations/${other}`, json: consumerBody, status: 400 },
      { name: `POST allocations keyed ${name}`, method: 'POST', path: '/allocations', raw: `{"${name}": ${JSON.stringify(consumerBody)}}`, status: 400 },
      {
        name: `reshape into inventory of ${name}`,
        method: 'POST',
        path: '/reshaper',
        raw: `{"inventories": {"${f.root}": {"resource_provider_generation": ${f.rootGeneration}, "inventories": {"${name}": {"total": 1}}}}, "allocations": {}}`,
        status: 400,
      },
      { name: `GET provider ${name}`, method: 'GET', path: `/resource_providers/${name}`, status: 404 },
      { name: `GET providers named ${name}`, method: 'GET', path: `/resource_providers?name=${name}`, status: 200 },
      { name: `GET allocations of consumer ${name}`, method: 'GET', path: `/allocations/${name}`, status: 200 },
      { name: `DELETE allocations of consumer ${name}`, method: 'DELETE', path: `/allocations/${name}`, status: 404 },
      { name: `GET usages of project ${name}`, method: 'GET', path: `/usages?project_id=${name}&user_id=${name}`, status: 200 },
      { name: `GET usages of consumer type ${name}`, method: 'GET', path: `/usages?project_id=${f.project}&consumer_type=${name}`, status: 400 },
    ];
  });

const LONG = 'a'.repeat(3000);
/** uuid-like for upstream (any number of "urn:" prefixes), and longer than any DynamoDB key. */
const urnUuid = (uuid: string) => `${'urn:'.repeat(600)}${uuid}`;
const EMOJI_255 = '\u{1F600}'.repeat(255);

/** Path uuids and names, and ids in bodies and queries, too long or malformed for a key. */
const keys: CaseClass = (f) => {
  const longClass = `CUSTOM_${'X'.repeat(3000)}`;
  return [
    ...['', '/inventories', '/traits', '/aggregates', '/usages', '/allocations', '/inventories/VCPU'].map((tail): HostileCase => ({
      name: `GET a provider${tail} by a 3000-character uuid`,
      method: 'GET',
      path: `/resource_providers/${LONG}${tail}`,
      status: 404,
    })),
    { name: 'GET a provider by a 2400-character uuid-like string', method: 'GET', path: `/resource_providers/${urnUuid(f.root)}`, status: 404 },
    { name: 'PUT a provider with a 3000-character uuid', method: 'PUT', path: `/resource_providers/${LONG}`, json: { name: 'x' }, status: 404 },
    { name: 'DELETE a provider with a 3000-character uuid', method: 'DELETE', path: `/resource_providers/${LONG}`, status: 404 },
    {
      name: 'PUT inventories of a 3000-character uuid',
      method: 'PUT',
      path: `/resource_providers/${LONG}/inventories`,
      json: { resource_provider_generation: 0, inventories: {} },
      status: 404,
    },
    {
      name: 'PUT traits of a 3000-character uuid',
      method: 'PUT',
      path: `/resource_providers/${LONG}/traits`,
      json: { resource_provider_generation: 0, traits: [] },
      status: 404,
    },
    {
      name: 'PUT aggregates of a 3000-character uuid',
      method: 'PUT',
      path: `/resource_providers/${LONG}/aggregates`,
      json: { resource_provider_generation: 0, aggregates: [] },
      status: 404,
    },
    { name: 'DELETE traits of a 3000-character uuid', method: 'DELETE', path: `/resource_providers/${LONG}/traits`, status: 404 },
    { name: 'GET allocations of a 3000-character consumer', method: 'GET', path: `/allocations/${LONG}`, status: 200 },
    {
      name: 'PUT allocations of a 3000-character consumer',
      method: 'PUT',
      path: `/allocations/${LONG}`,
      json: { allocations: {}, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE' },
      status: 400,
    },
    { name: 'DELETE allocations of a 3000-character consumer', method: 'DELETE', path: `/allocations/${LONG}`, status: 404 },
    { name: 'GET allocations of a uuid-like 2400-character consumer', method: 'GET', path: `/allocations/${urnUuid(f.consumer)}`, status: 200 },
    { name: 'DELETE allocations of a uuid-like 2400-character consumer', method: 'DELETE', path: `/allocations/${urnUuid(randomUUID())}`, status: 404 },
    { name: 'GET a 3000-character resource class', method: 'GET', path: `/resource_classes/${longClass}`, status: 404 },
    { name: 'PUT a 3000-character resource class', method: 'PUT', path: `/resource_classes/${longClass}`, status: 400 },
    { name: 'PUT a 256-character resource class', method: 'PUT', path: `/resource_classes/CUSTOM_${'X'.repeat(249)}`, status: 400 },
    { name: 'DELETE a 3000-character resource class', method: 'DELETE', path: `/resource_classes/${longClass}`, status: 404 },
    { name: 'POST a 3000-character resource class', method: 'POST', path: '/resource_classes', json: { name: longClass }, status: 400 },
    { name: 'GET a 3000-character trait', method: 'GET', path: `/traits/${longClass}`, status: 404 },
    { name: 'PUT a 3000-character trait', method: 'PUT', path: `/traits/${longClass}`, status: 400 },
    { name: 'PUT a 256-character trait', method: 'PUT', path: `/traits/CUSTOM_${'X'.repeat(249)}`, status: 400 },
    { name: 'DELETE a 3000-character trait', method: 'DELETE', path: `/traits/${longClass}`, status: 404 },
    { name: 'GET the inventory of a 3000-character class', method: 'GET', path: `/resource_providers/${f.root}/inventories/${longClass}`, status: 404 },
    {
      name: 'PUT the inventory of a 3000-character class',
      method: 'PUT',
      path: `/resource_providers/${f.root}/inventories/${longClass}`,
      json: { resource_provider_generation: f.rootGeneration, total: 1 },
      status: 404,
    },
    { name: 'DELETE the inventory of a 3000-character class', method: 'DELETE', path: `/resource_providers/${f.root}/inventories/${longClass}`, status: 404 },
    { name: 'providers with resources of a 3000-character class', method: 'GET', path: `/resource_providers?resources=${longClass}:1`, status: 400 },
    { name: 'providers requiring a 3000-character trait', method: 'GET', path: `/resource_providers?required=${longClass}`, status: 400 },
    { name: 'candidates for a 3000-character class', method: 'GET', path: `/allocation_candidates?resources=${longClass}:1`, status: 400 },
    {
      name: 'PUT provider traits with a 3000-character trait',
      method: 'PUT',
      path: `/resource_providers/${f.root}/traits`,
      json: { resource_provider_generation: f.rootGeneration, traits: [longClass] },
      status: 400,
    },
    { name: 'providers named with 9000 characters', method: 'GET', path: `/resource_providers?name=${'x'.repeat(9000)}`, status: 200 },
    { name: 'providers named with 200 emoji', method: 'GET', path: `/resource_providers?name=${enc('\u{1F600}'.repeat(200))}`, status: 200 },
    { name: 'providers by a uuid-like 2400-character uuid', method: 'GET', path: `/resource_providers?uuid=${urnUuid(f.root)}`, status: 200 },
    { name: 'providers in a uuid-like 2400-character aggregate', method: 'GET', path: `/resource_providers?member_of=${urnUuid(f.aggregate)}`, status: 200 },
    { name: 'providers in a uuid-like 2400-character tree', method: 'GET', path: `/resource_providers?in_tree=${urnUuid(f.root)}`, status: 200 },
    {
      name: 'candidates in a uuid-like 2400-character aggregate',
      method: 'GET',
      path: `/allocation_candidates?resources=VCPU:1&member_of=${urnUuid(f.aggregate)}`,
      status: 200,
    },
    {
      name: 'candidates in a uuid-like 2400-character tree',
      method: 'GET',
      path: `/allocation_candidates?resources=VCPU:1&in_tree=${urnUuid(f.root)}`,
      status: 200,
    },
    { name: 'usages of a 255-emoji project and user', method: 'GET', path: `/usages?project_id=${enc(EMOJI_255)}&user_id=${enc(EMOJI_255)}`, status: 200 },
    { name: 'usages of a 3000-character project', method: 'GET', path: `/usages?project_id=${LONG}`, status: 400 },
    { name: 'a provider named with 201 characters', method: 'POST', path: '/resource_providers', json: { name: 'x'.repeat(201) }, status: 400 },
    { name: 'a provider whose uuid is not a uuid', method: 'POST', path: '/resource_providers', json: { name: 'x', uuid: LONG }, status: 400 },
    {
      name: 'a child of a 3000-character parent',
      method: 'POST',
      path: '/resource_providers',
      json: { name: `x-${randomUUID()}`, parent_provider_uuid: LONG },
      status: 400,
    },
    {
      name: 'a project id of 256 characters',
      method: 'PUT',
      path: `/allocations/${randomUUID()}`,
      json: {
        allocations: { [f.root]: { resources: { VCPU: 1 } } },
        project_id: 'p'.repeat(256),
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      },
      status: 400,
    },
    {
      name: 'a consumer type of 256 characters',
      method: 'PUT',
      path: `/allocations/${randomUUID()}`,
      json: { allocations: { [f.root]: { resources: { VCPU: 1 } } }, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'X'.repeat(256) },
      status: 400,
    },
    {
      name: 'allocations on a provider keyed by 36 dashes',
      method: 'PUT',
      path: `/allocations/${randomUUID()}`,
      json: {
        allocations: { ['-'.repeat(36)]: { resources: { VCPU: 1 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      },
      status: 400,
    },
    { name: 'a NUL as provider uuid', method: 'GET', path: '/resource_providers/%00', status: 404 },
    { name: 'a NUL as trait', method: 'GET', path: '/traits/%00', status: 404 },
    { name: 'a NUL as new trait', method: 'PUT', path: '/traits/CUSTOM_%00', status: 400 },
    { name: 'a NUL as resource class', method: 'GET', path: '/resource_classes/%00', status: 404 },
    { name: 'a NUL as consumer', method: 'DELETE', path: '/allocations/%00', status: 404 },
  ];
};

/** JSON's NaN as an allocation_ratio: upstream's schema lets it through (no comparison fails on it), then upstream fails. */
const nanRatios = (f: Fixture): HostileCase[] => {
  const why = upstream500('it cannot turn the capacity into an integer');
  const inventoryPath = `/resource_providers/${f.root}/inventories`;
  return [
    {
      name: 'a NaN ratio in PUT inventories',
      method: 'PUT',
      path: inventoryPath,
      raw: `{"resource_provider_generation": ${f.rootGeneration}, "inventories": {"VCPU": {"total": 8, "allocation_ratio": NaN}}}`,
      status: 400,
      upstream: why,
    },
    {
      name: 'a NaN ratio in PUT of one inventory',
      method: 'PUT',
      path: `${inventoryPath}/VCPU`,
      raw: `{"resource_provider_generation": ${f.rootGeneration}, "total": 8, "allocation_ratio": NaN}`,
      status: 400,
      upstream: why,
    },
    {
      name: 'a NaN ratio in POST inventories',
      method: 'POST',
      path: inventoryPath,
      raw: '{"resource_class": "DISK_GB", "total": 8, "allocation_ratio": NaN}',
      status: 400,
      upstream: why,
    },
    {
      name: 'a NaN ratio in a reshape',
      method: 'POST',
      path: '/reshaper',
      raw: `{"inventories": {"${f.root}": {"resource_provider_generation": ${f.rootGeneration}, "inventories": {"VCPU": {"total": 8, "allocation_ratio": NaN}}}}, "allocations": {}}`,
      status: 400,
      upstream: upstream500('its database refuses the NaN'),
    },
  ];
};

/** JSON bodies: nesting, size, encoding. */
const bodies: CaseClass = (f): HostileCase[] => [
  {
    name: '100,000 nested arrays',
    method: 'POST',
    path: '/resource_providers',
    raw: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    status: 400,
    upstream: upstream500('its JSON decoder exceeds the recursion limit'),
  },
  {
    name: '3,000 nested arrays',
    method: 'POST',
    path: '/resource_providers',
    raw: `${'['.repeat(3000)}${']'.repeat(3000)}`,
    status: 400,
    upstream: upstream500('its JSON decoder exceeds the recursion limit'),
  },
  {
    name: '5,000 nested objects',
    method: 'PUT',
    path: `/resource_providers/${f.root}/inventories`,
    raw: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
    status: 400,
    upstream: upstream500('its JSON decoder exceeds the recursion limit'),
  },
  {
    name: '600 nested arrays where a trait list belongs',
    method: 'PUT',
    path: `/resource_providers/${f.root}/traits`,
    raw: `{"traits": ${'['.repeat(600)}${']'.repeat(600)}, "resource_provider_generation": ${f.rootGeneration}}`,
    status: 400,
    upstream: upstream500('formatting the validation error exceeds the recursion limit'),
  },
  {
    name: '30 nested arrays where a trait list belongs',
    method: 'PUT',
    path: `/resource_providers/${f.root}/traits`,
    raw: `{"traits": ${'['.repeat(30)}${']'.repeat(30)}, "resource_provider_generation": ${f.rootGeneration}}`,
    status: 400,
  },
  {
    name: 'nesting inside a string is not nesting',
    method: 'PUT',
    path: `/resource_providers/${f.root}/traits`,
    raw: `{"traits": ["${'['.repeat(5000)}"], "resource_provider_generation": ${f.rootGeneration}}`,
    status: 400,
  },
  {
    name: 'a 2 MB body',
    method: 'POST',
    path: '/resource_providers',
    raw: `{"name": "x", "pad": "${'x'.repeat(2_000_000)}"}`,
    status: 413,
    upstream: upstreamDrops,
  },
  {
    name: 'a 2 MB body of whitespace',
    method: 'PUT',
    path: `/resource_providers/${f.root}/traits`,
    raw: `${' '.repeat(2_000_000)}{}`,
    status: 413,
    upstream: upstreamDrops,
  },
  {
    name: 'an object of 10,000 keys',
    method: 'POST',
    path: '/resource_providers',
    raw: `{${Array.from({ length: 10_000 }, (_, n) => `"k${n}": ${n}`).join(', ')}}`,
    status: 400,
  },
  {
    name: 'a list of 10,000 numbers as traits',
    method: 'PUT',
    path: `/resource_providers/${f.root}/traits`,
    raw: `{"traits": [${Array.from({ length: 10_000 }, (_, n) => n).join(', ')}], "resource_provider_generation": ${f.rootGeneration}}`,
    status: 400,
  },
  {
    name: 'a lone surrogate in a name',
    method: 'POST',
    path: '/resource_providers',
    raw: '{"name": "x\\ud800y"}',
    status: 400,
    upstream: upstream500('its database driver cannot encode the name'),
  },
  {
    name: 'a lone surrogate in a project id',
    method: 'PUT',
    path: `/allocations/${randomUUID()}`,
    raw: `{"allocations": {"${f.root}": {"resources": {"VCPU": 1}}}, "project_id": "\\udfff", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE"}`,
    status: 400,
    upstream: upstream500('its database driver cannot encode the id'),
  },
  ...nanRatios(f),
  { name: 'a byte-order mark', method: 'POST', path: '/resource_providers', raw: `\ufeff{"name": "bom-${randomUUID()}"}`, status: 400 },
  {
    name: 'bytes that are not UTF-8',
    method: 'PUT',
    path: `/resource_providers/${f.root}/traits`,
    raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    status: 400,
  },
  { name: 'an empty body', method: 'POST', path: '/resource_providers', raw: '', status: 400 },
  { name: 'null', method: 'POST', path: '/resource_providers', raw: 'null', status: 400 },
  { name: 'a number too large for a double', method: 'PUT', path: `/resource_providers/${f.root}/traits`, raw: '1e999999', status: 400 },
  { name: 'trailing garbage', method: 'POST', path: '/resource_providers', raw: '{"name": "x"} x', status: 400 },
  {
    name: 'a duplicated key',
    method: 'PUT',
    path: `/resource_providers/${f.root}/traits`,
    raw: `{"traits": [], "traits": [1], "resource_provider_generation": ${f.rootGeneration}}`,
    status: 400,
  },
  {
    name: 'a UTF-16 content type',
    method: 'POST',
    path: '/resource_providers',
    raw: '{"name": 1}',
    headers: { 'content-type': 'application/json; charset=utf-16' },
    status: 400,
  },
  { name: 'a text/plain body', method: 'POST', path: '/resource_providers', raw: '{"name": "x"}', headers: { 'content-type': 'text/plain' }, status: 415 },
  {
    name: 'a content type of 8000 characters',
    method: 'POST',
    path: '/resource_providers',
    raw: '{"name": 1}',
    headers: { 'content-type': `application/json; ${'x'.repeat(8000)}` },
    status: 400,
  },
];

/** Numbers out of any column's range, fractions, exponents. */
const numbers: CaseClass = (f) => {
  const inventory = (fields: string) => `{"resource_provider_generation": ${f.rootGeneration}, ${fields}}`;
  const claim = (amount: string) =>
    `{"allocations": {"${f.root}": {"resources": {"VCPU": ${amount}}}}, "project_id": "p", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE"}`;
  const path = `/resource_providers/${f.root}/inventories/VCPU`;
  return [
    { name: 'a total of 400 digits', method: 'PUT', path, raw: inventory(`"total": ${'9'.repeat(400)}`), status: 400 },
    { name: 'a fractional total', method: 'PUT', path, raw: inventory('"total": 8.5'), status: 400 },
    { name: 'a total of 2^31', method: 'PUT', path, raw: inventory('"total": 2147483648'), status: 400 },
    { name: 'an allocation ratio of 1e400', method: 'PUT', path, raw: inventory('"total": 8, "allocation_ratio": 1e400'), status: 400 },
    { name: 'an allocation ratio of -1', method: 'PUT', path, raw: inventory('"total": 8, "allocation_ratio": -1'), status: 400 },
    { name: 'an allocation ratio as a string', method: 'PUT', path, raw: inventory('"total": 8, "allocation_ratio": "1.0"'), status: 400 },
    { name: 'a reserved of 400 digits', method: 'PUT', path, raw: inventory(`"total": 8, "reserved": ${'9'.repeat(400)}`), status: 400 },
    { name: 'a generation of 400 digits', method: 'PUT', path, raw: `{"resource_provider_generation": ${'9'.repeat(400)}, "total": 8}`, status: 409 },
    { name: 'a generation of 1e30', method: 'PUT', path, raw: '{"resource_provider_generation": 1e30, "total": 8}', status: 409 },
    { name: 'a fractional generation', method: 'PUT', path, raw: '{"resource_provider_generation": 1.5, "total": 8}', status: 400 },
    { name: 'an amount of 400 digits', method: 'PUT', path: `/allocations/${randomUUID()}`, raw: claim('9'.repeat(400)), status: 409 },
    { name: 'an amount of 2^53 + 1', method: 'PUT', path: `/allocations/${randomUUID()}`, raw: claim('9007199254740993'), status: 409 },
    { name: 'a fractional amount', method: 'PUT', path: `/allocations/${randomUUID()}`, raw: claim('1.5'), status: 400 },
    { name: 'an amount of 0', method: 'PUT', path: `/allocations/${randomUUID()}`, raw: claim('0'), status: 400 },
    {
      name: 'a consumer generation of 400 digits',
      method: 'PUT',
      path: `/allocations/${f.consumer}`,
      raw: claim('1').replace('null', '9'.repeat(400)),
      status: 409,
    },
    {
      name: 'resources VCPU of 400 digits (providers)',
      method: 'GET',
      path: `/resource_providers?resources=VCPU:${'9'.repeat(400)}`,
      status: 200,
      upstream: upstream500('SQLite cannot bind an integer that large'),
    },
    {
      name: 'resources VCPU of 400 digits (candidates)',
      method: 'GET',
      path: `/allocation_candidates?resources=VCPU:${'9'.repeat(400)}`,
      status: 200,
      upstream: upstream500('SQLite cannot bind an integer that large'),
    },
    { name: 'resources VCPU of 2^53 + 1 (candidates)', method: 'GET', path: '/allocation_candidates?resources=VCPU:9007199254740993', status: 200 },
    { name: 'resources VCPU of 2^31 (candidates)', method: 'GET', path: '/allocation_candidates?resources=VCPU:2147483648', status: 200 },
    {
      name: 'two groups of 2^62 VCPU (candidates)',
      method: 'GET',
      path: `/allocation_candidates?resources1=VCPU:${2 ** 62}&resources2=VCPU:${2 ** 62}&group_policy=none`,
      status: 200,
    },
    { name: 'a fractional amount in resources', method: 'GET', path: '/allocation_candidates?resources=VCPU:1.5', status: 400 },
    { name: 'an exponent in resources', method: 'GET', path: '/allocation_candidates?resources=VCPU:1e3', status: 400 },
    { name: 'a hexadecimal amount in resources', method: 'GET', path: '/resource_providers?resources=VCPU:0x10', status: 400 },
    { name: 'an amount of -0 in resources', method: 'GET', path: '/resource_providers?resources=VCPU:-0', status: 400 },
    { name: 'a limit of 400 digits', method: 'GET', path: `/allocation_candidates?resources=VCPU:1&limit=${'9'.repeat(400)}`, status: 200 },
    { name: 'a limit of 0', method: 'GET', path: '/allocation_candidates?resources=VCPU:1&limit=0', status: 400 },
    { name: 'a limit of -1', method: 'GET', path: '/allocation_candidates?resources=VCPU:1&limit=-1', status: 400 },
    { name: 'a fractional limit', method: 'GET', path: '/allocation_candidates?resources=VCPU:1&limit=1.5', status: 400 },
  ];
};

const STANDARD_TRAITS_SAMPLE = (count: number) =>
  // The CPU feature traits os-traits ships, enough of them for a long list.
  [
    'HW_CPU_X86_AVX',
    'HW_CPU_X86_AVX2',
    'HW_CPU_X86_SSE',
    'HW_CPU_X86_SSE2',
    'HW_CPU_X86_SSE3',
    'HW_CPU_X86_SSSE3',
    'HW_CPU_X86_SSE41',
    'HW_CPU_X86_SSE42',
    'HW_CPU_X86_MMX',
    'HW_CPU_X86_FMA3',
    'HW_CPU_X86_AESNI',
    'HW_CPU_X86_BMI',
    'HW_CPU_X86_BMI2',
    'HW_CPU_X86_F16C',
    'HW_CPU_X86_SHA',
    'HW_CPU_X86_VMX',
    'HW_CPU_X86_SVM',
    'HW_CPU_X86_AVX512F',
    'HW_CPU_X86_AVX512CD',
    'HW_CPU_X86_AVX512PF',
    'HW_CPU_X86_AVX512ER',
    'HW_CPU_X86_AVX512VL',
    'HW_CPU_X86_AVX512BW',
    'HW_CPU_X86_AVX512DQ',
    'HW_CPU_X86_ABM',
    'HW_CPU_X86_TBM',
    'HW_CPU_X86_FMA4',
    'HW_CPU_X86_XOP',
    'HW_CPU_X86_CLMUL',
    'HW_CPU_X86_MPX',
  ].slice(0, count);

/** Requests whose filters would not fit one DynamoDB expression (4 KB, 300 operators). */
const filterExpressions: CaseClass = (f) => {
  const traits = STANDARD_TRAITS_SAMPLE(30);
  // Repeating names is allowed; the parsers keep each once, but 300 distinct custom names would need setup writes.
  const many = (prefix: string) => Array.from({ length: 10 }, () => traits.map((trait) => `${prefix}${trait}`)).flat();
  return [
    { name: 'root_required with 300 traits', method: 'GET', path: `/allocation_candidates?resources=VCPU:1&root_required=${many('').join(',')}`, status: 200 },
    {
      name: 'root_required forbidding 300 traits',
      method: 'GET',
      path: `/allocation_candidates?resources=VCPU:1&root_required=${many('!').join(',')}`,
      status: 200,
    },
    { name: 'required with 300 traits', method: 'GET', path: `/allocation_candidates?resources=VCPU:1&required=${many('').join(',')}`, status: 200 },
    { name: 'required=in: with 300 traits', method: 'GET', path: `/allocation_candidates?resources=VCPU:1&required=in:${many('').join(',')}`, status: 200 },
    { name: 'required repeated 300 times', method: 'GET', path: `/allocation_candidates?resources=VCPU:1&${many('required=').join('&')}`, status: 200 },
    {
      name: 'providers requiring 300 traits',
      method: 'GET',
      path: `/resource_providers?required=${many('').join(',')}`,
      status: 200,
      upstream: upstream500('SQLite allows at most 200 tables in one query'),
    },
    {
      name: 'every standard class in one group',
      method: 'GET',
      path: `/allocation_candidates?resources=VCPU:1,MEMORY_MB:1,DISK_GB:1,PCI_DEVICE:1,SRIOV_NET_VF:1,NUMA_SOCKET:1,NUMA_CORE:1,NUMA_THREAD:1,NUMA_MEMORY_MB:1,IPV4_ADDRESS:1,VGPU:1,VGPU_DISPLAY_HEAD:1,NET_BW_EGR_KILOBIT_PER_SEC:1,NET_BW_IGR_KILOBIT_PER_SEC:1,PCPU:1,MEM_ENCRYPTION_CONTEXT:1,FPGA:1,PGPU:1,${CUSTOM_CLASS}:1`,
      status: 200,
    },
    {
      name: '60 granular groups',
      method: 'GET',
      path: `/allocation_candidates?${Array.from({ length: 60 }, (_, n) => `resources${n + 1}=VCPU:1`).join('&')}&group_policy=none`,
      status: 200,
    },
    {
      name: 'member_of with 100 aggregates (candidates)',
      method: 'GET',
      path: `/allocation_candidates?resources=VCPU:1&member_of=in:${[f.aggregate, ...Array.from({ length: 99 }, () => randomUUID())].join(',')}`,
      status: 200,
    },
    {
      name: 'member_of repeated 200 times (candidates)',
      method: 'GET',
      path: `/allocation_candidates?resources=VCPU:1&${Array.from({ length: 200 }, () => `member_of=!${randomUUID()}`).join('&')}`,
      status: 200,
    },
  ];
};

/** HTTP oddities: query strings, paths, headers, microversions, methods. */
const http: CaseClass = (f): HostileCase[] => [
  {
    name: '2000 unknown query parameters',
    method: 'GET',
    path: `/resource_providers?${Array.from({ length: 2000 }, (_, n) => `p${n}=1`).join('&')}`,
    status: 400,
  },
  { name: 'one parameter repeated 2000 times', method: 'GET', path: `/resource_providers?${'name=x&'.repeat(2000)}`, status: 200 },
  { name: 'a query value of 9000 characters', method: 'GET', path: `/resource_providers?member_of=${'x'.repeat(9000)}`, status: 400 },
  { name: 'a query key of 9000 characters', method: 'GET', path: `/resource_providers?${'k'.repeat(9000)}=1`, status: 400 },
  { name: 'a unicode query key', method: 'GET', path: `/resource_providers?${enc('n\u0430me')}=x`, status: 400 },
  { name: 'a lone % in the query', method: 'GET', path: '/resource_providers?name=%', status: 200 },
  { name: 'a query of "&" only', method: 'GET', path: `/resource_providers?${'&'.repeat(3000)}`, status: 200 },
  { name: 'an empty key', method: 'GET', path: '/resource_providers?=x', status: 400 },
  { name: 'a NUL in the query', method: 'GET', path: '/resource_providers?name=%00', status: 200 },
  {
    name: 'invalid UTF-8 in the query',
    method: 'GET',
    path: '/usages?project_id=p%ED%A0%80',
    status: 200,
    upstream: upstream500('it cannot decode the query string'),
  },
  { name: 'invalid UTF-8 in a trait name', method: 'GET', path: '/traits/CUSTOM_%FF', status: 404 },
  {
    name: 'an encoded slash in a uuid segment',
    method: 'GET',
    path: `/resource_providers/${f.root}%2Finventories`,
    status: 404,
    upstream: { status: 200, why: 'its WSGI server decodes the path before routing' },
  },
  { name: 'a double-encoded uuid', method: 'GET', path: `/resource_providers/${enc(enc(`${f.root}/`))}`, status: 404 },
  { name: 'a malformed escape in the path', method: 'GET', path: '/resource_providers/%zz', status: 404 },
  { name: 'an overlong UTF-8 slash', method: 'GET', path: '/resource_providers/%c0%af', status: 404 },

  { name: 'a trailing slash', method: 'GET', path: '/resource_providers/', status: 404 },
  {
    name: 'a percent-encoded route',
    method: 'GET',
    path: '/%72esource_providers',
    status: 404,
    upstream: { status: 200, why: 'its WSGI server decodes the path before routing' },
  },
  { name: 'a path of 8000 characters', method: 'GET', path: `/${'x/'.repeat(4000)}`, status: 404 },
  { name: 'a microversion of 30 digits', method: 'GET', path: '/resource_providers', version: `1.${'9'.repeat(30)}`, status: 406 },
  { name: 'a microversion with leading zeros', method: 'GET', path: '/resource_providers', version: '01.039', status: 200 },
  { name: 'a microversion with three parts', method: 'GET', path: '/resource_providers', version: '1.3.9', status: 400 },
  { name: 'a negative microversion', method: 'GET', path: '/resource_providers', version: '-1.0', status: 406 },
  { name: 'an exponent as microversion', method: 'GET', path: '/resource_providers', version: '1e1', status: 400 },
  // Header bytes arrive as Latin-1 characters.
  {
    name: 'arabic-indic digits as microversion',
    method: 'GET',
    path: '/resource_providers',
    headers: { 'openstack-api-version': Buffer.from('placement \u0661.\u0663').toString('latin1') },
    status: 400,
  },
  {
    name: 'two placement versions',
    method: 'GET',
    path: '/resource_providers',
    headers: { 'openstack-api-version': 'placement 1.39, placement 1.2' },
    status: 200,
  },
  {
    name: '500 services in the version header',
    method: 'GET',
    path: '/resource_providers',
    headers: { 'openstack-api-version': `${Array.from({ length: 500 }, (_, n) => `svc${n} 1.0`).join(', ')}, placement 1.39` },
    status: 200,
  },
  {
    name: 'a version of 8000 digits (Python reads at most 4300)',
    method: 'GET',
    path: '/resource_providers',
    headers: { 'openstack-api-version': `placement 1.${'0'.repeat(8000)}` },
    status: 400,
  },
  {
    name: 'a version of 4000 digits',
    method: 'GET',
    path: '/resource_providers',
    headers: { 'openstack-api-version': `placement 1.${'0'.repeat(3998)}39` },
    status: 200,
  },
  { name: '"latest latest"', method: 'GET', path: '/resource_providers', version: 'latest latest', status: 400 },
  {
    name: 'an Accept header of 400 media ranges',
    method: 'GET',
    path: '/resource_providers',
    headers: { accept: Array.from({ length: 400 }, (_, n) => `text/x${n};q=0.${n % 10}`).join(', ') },
    status: 406,
  },
  {
    name: 'a header of 20,000 characters (API Gateway allows 10 KB of headers)',
    method: 'GET',
    path: '/resource_providers',
    headers: { 'x-padding': 'x'.repeat(20_000) },
    status: 431,
  },
  { name: 'an Accept header refusing JSON', method: 'GET', path: '/resource_providers', headers: { accept: 'application/json;q=0' }, status: 406 },
  {
    name: 'an x-roles header of 1000 roles',
    method: 'GET',
    path: '/resource_providers',
    headers: { 'x-auth-token': 'user', 'x-roles': Array.from({ length: 1000 }, (_, n) => `r${n}`).join(',') },
    status: 403,
  },
  { name: 'a token of 8000 characters', method: 'GET', path: '/resource_providers', headers: { 'x-auth-token': 't'.repeat(8000) }, status: 403 },
  {
    name: 'a forwarded proto with spaces',
    method: 'POST',
    path: '/resource_providers',
    json: { name: 1 },
    headers: { 'x-forwarded-proto': 'a b c' },
    status: 400,
  },
  { name: 'a content-length with underscores', method: 'POST', path: '/resource_providers', raw: '{}', headers: { 'content-type': null }, status: 400 },
  { name: 'PATCH', method: 'PATCH', path: '/resource_providers', status: 405 },
  { name: 'OPTIONS without CORS', method: 'OPTIONS', path: `/resource_providers/${f.root}`, status: 405 },
  { name: 'an unknown method', method: 'PROPFIND', path: '/resource_providers', status: 405 },
];

/**
 * What an HTTP client will not send: written on the socket as it is. The
 * local server answers for API Gateway where API Gateway itself would.
 */
const rawHttp: CaseClass = (f): HostileCase[] => {
  const head = (requestLine: string, ...headers: string[]) =>
    [requestLine, 'host: 127.0.0.1', 'x-auth-token: admin', 'openstack-api-version: placement latest', 'connection: close', ...headers, '', ''].join('\r\n');
  return [
    {
      name: 'an encoded dot-dot segment',
      method: 'GET',
      path: '/resource_providers/%2e%2e',
      head: head('GET /resource_providers/%2e%2e HTTP/1.1'),
      status: 404,
      upstream: { status: 200, why: 'its WSGI server decodes and resolves the path before routing' },
    },
    {
      name: 'a dot-dot segment',
      method: 'GET',
      path: '/resource_providers/../traits',
      head: head('GET /resource_providers/../traits HTTP/1.1'),
      status: 404,
      upstream: { status: 200, why: 'its WSGI server resolves the path before routing' },
    },
    { name: 'a doubled slash', method: 'GET', path: '//resource_providers', head: head('GET //resource_providers HTTP/1.1'), status: 404 },
    {
      name: 'an absolute request target',
      method: 'GET',
      path: 'http://evil.example/resource_providers',
      head: head(`GET http://evil.example/resource_providers/${f.root} HTTP/1.1`),
      status: 200,
    },
    {
      name: 'a body announced as 11 MB (API Gateway takes 10 MB)',
      method: 'POST',
      path: '/resource_providers',
      head: head('POST /resource_providers HTTP/1.1', 'content-type: application/json', 'content-length: 11000000'),
      status: 413,
      upstream: upstreamDrops,
    },
    {
      name: 'a content-length that is not a number',
      method: 'POST',
      path: '/resource_providers',
      head: head('POST /resource_providers HTTP/1.1', 'content-type: application/json', 'content-length: 1x'),
      status: 400,
    },
    {
      name: 'two content-lengths',
      method: 'POST',
      path: '/resource_providers',
      head: head('POST /resource_providers HTTP/1.1', 'content-type: application/json', 'content-length: 2', 'content-length: 3'),
      status: 400,
    },
    { name: 'a header without a colon', method: 'GET', path: '/resource_providers', head: head('GET /resource_providers HTTP/1.1', 'x-injected'), status: 400 },
    {
      name: 'a header value with a bare CR',
      method: 'GET',
      path: '/resource_providers',
      head: head('GET /resource_providers HTTP/1.1', 'x-roles: admin\rx-other: 1'),
      status: 400,
    },
    {
      name: 'a NUL in a header value',
      method: 'GET',
      path: '/resource_providers',
      head: head('GET /resource_providers HTTP/1.1', 'x-roles: ad\u0000min'),
      status: 400,
    },
    { name: 'a lower-case method', method: 'get', path: '/resource_providers', head: head('get /resource_providers HTTP/1.1'), status: 400 },
  ];
};

/**
 * The times this service's own routes take (`since`, `until`; shared/api/time.ts): each a 400 that names the parameter,
 * on every route that takes one. Upstream has no such routes. Before issue 46, the first three were 500s (a RangeError).
 */
const times: CaseClass = (f) => {
  const routes = [`/history/allocations/${f.consumer}`, `/history/resource_providers/${f.root}/allocations`, `/history/usages?project_id=${f.project}`];
  const values = [
    ['month 13', '2026-13-01T00:00:00Z'],
    ['month 00', '2026-00-10T00:00:00Z'],
    ['an offset past 24 hours', '2026-11-01T00:00:00-25:00'],
    ['November 31st', '2026-11-31T00:00:00Z'],
    ['hour 25', '2026-11-01T25:00:00Z'],
    ['second 60', '2026-11-01T00:00:60Z'],
    ['February 29th of 2026', '2026-02-29T00:00:00Z'],
    ['no offset', '2026-11-01T00:00:00'],
    ['a year past what a Date holds', '+275761-01-01T00:00:00Z'],
    ['a year before what a Date holds, left open at its start', '-271821-04-20T00:00:00Z'],
  ];
  return routes.flatMap((route) =>
    values.flatMap(([what, value]): HostileCase[] =>
      ['since', 'until'].map((name) => ({
        name: `${name}=${what} on ${route.split('?')[0]!.replace(/[0-9a-f-]{36}/g, '{uuid}')}`,
        method: 'GET',
        path: `${route}${route.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value!)}`,
        version: '1.39',
        status: 400,
        detail: `Invalid ${name}: ${value}`,
      })),
    ),
  );
};

/**
 * What `npm run fuzz` found (docs/testing/hostile-input.md, the fuzzer), each
 * answered as it is now. Uuids in either case name one provider or consumer
 * here (foldUuidCase), so a body keyed by both spellings of one names it
 * twice: the last spelling counts, as of a key given twice. Before, the plan
 * held two changes of one item: a 500 (a TypeError, or DynamoDB refusing two
 * operations on one item in a transaction, after the change had gone into
 * steps and written some), or a 409 after every retry. Upstream's SQLite
 * compares uuids case-sensitively: there the two spellings are two objects.
 * In order: each case's writes move the generations the next ones name.
 */
const foundByTheFuzzer: CaseClass = (f) => {
  const upper = (uuid: string) => uuid.toUpperCase();
  const consumer = (allocations: Record<string, unknown>, generation: number | null = null) => ({
    allocations,
    project_id: f.project,
    user_id: f.user,
    consumer_generation: generation,
    consumer_type: 'INSTANCE',
  });
  const onChild = (amount: number) => ({ [f.child]: { resources: { DISK_GB: amount } } });
  const inventories = { VCPU: { total: 8 }, MEMORY_MB: { total: 4096 }, [CUSTOM_CLASS]: { total: 4 } };
  const fresh = () => randomUUID();
  const [first, second, third, fourth] = [fresh(), fresh(), fresh(), fresh()];
  return [
    {
      name: 'a reshape of one provider named in both cases',
      method: 'POST',
      path: '/reshaper',
      json: {
        inventories: {
          [f.root]: { resource_provider_generation: f.rootGeneration, inventories },
          [upper(f.root)]: { resource_provider_generation: f.rootGeneration, inventories },
        },
        allocations: {},
      },
      status: 204,
      writes: true,
      upstream: { status: 400, why: 'the upper-case spelling names no provider there' },
    },
    {
      name: 'a reshape moving a new consumer named in both cases',
      method: 'POST',
      path: '/reshaper',
      json: {
        inventories: { [f.child]: { resource_provider_generation: f.childGeneration, inventories: { DISK_GB: { total: 100 } } } },
        allocations: { [first]: consumer(onChild(1)), [upper(first)]: consumer(onChild(2)) },
      },
      status: 204,
      writes: true,
    },
    {
      name: 'POST /allocations of a new consumer named in both cases, the first holding (1.14)',
      method: 'POST',
      path: '/allocations',
      json: {
        [second]: { allocations: onChild(1), project_id: f.project, user_id: f.user },
        [upper(second)]: { allocations: {}, project_id: f.project, user_id: f.user },
      },
      version: '1.14',
      status: 204,
      writes: true,
    },
    {
      name: 'POST /allocations of a new consumer named in both cases, each holding',
      method: 'POST',
      path: '/allocations',
      json: { [third]: consumer(onChild(1)), [upper(third)]: consumer(onChild(2)) },
      status: 204,
      writes: true,
    },
    {
      name: 'POST /allocations of a consumer holding resources, named in both cases',
      method: 'POST',
      path: '/allocations',
      json: {
        [f.consumer]: consumer({ [f.root]: { resources: { VCPU: 1, MEMORY_MB: 64 } }, ...onChild(10) }, 1),
        [upper(f.consumer)]: consumer({ [f.root]: { resources: { VCPU: 1, MEMORY_MB: 64 } }, ...onChild(10) }, 1),
      },
      status: 204,
      writes: true,
      upstream: { status: 409, why: 'the upper-case spelling is a new consumer there, for which a generation is a conflict' },
    },
    {
      name: 'POST /allocations of a new consumer named in both cases, the first empty',
      method: 'POST',
      path: '/allocations',
      json: { [fourth]: consumer({}), [upper(fourth)]: consumer(onChild(1)) },
      status: 204,
      writes: true,
    },
  ];
};

export const CASE_CLASSES: Record<string, CaseClass> = {
  'name patterns': namePatterns,
  'prototype names': prototypeNames,
  'keys from client strings': keys,
  'JSON bodies': bodies,
  'numbers out of range': numbers,
  'filter expressions': filterExpressions,
  'HTTP oddities': http,
  'raw HTTP': rawHttp,
  times,
  'found by the fuzzer': foundByTheFuzzer,
};
