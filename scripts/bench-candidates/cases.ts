/** The cases: candidate requests on clouds of each size, and the wide tree. */
import { batchWrite } from '../lib/batch-write.js';
import { usagesFromAllocations } from '../../admin/region-copy/region.js';
import { regionItems, traitHolders } from '../synthetic-region/items.js';
import { noteTraitHolders } from '../../shared/storage/trait-holders.js';
import { SyntheticRegion } from '../synthetic-region/region.js';
import { CLOUD_SHAPE, WIDE_CHILDREN, WIDE_TIMEOUT_MS, FLAVOR, LOAD_THROUGH_API, log } from './settings.js';
import { LoadedRegion } from '../synthetic-region/api-loader.js';
import { PlacementClient } from '../../admin/placement-client.js';
import { OurService, loadReference } from './services.js';
import { Measured, fail, api, get, measure } from './requests.js';

/** A custom class every service knows and no provider has. */
const UNHELD_CLASS = 'CUSTOM_NOBODY_HAS';

// ---------------------------------------------------------------- one size

export interface CaseRow {
  name: string;
  ours: Omit<Measured, 'body'>;
  reference: Omit<Measured, 'body'>;
  /** Ours: GET /explain/allocation_candidates with the same query, and the constraint it says emptied it. */
  explained: Omit<Measured, 'body'> & { emptiedBy: string };
}

export interface SizeResult {
  size: number;
  providers: number;
  consumers: number;
  ourItems: number;
  ourLoadSeconds: number;
  referenceRows: number;
  referenceLoadSeconds: number;
  cases: CaseRow[];
  /** The other questions that once read the whole region, beside upstream: GET /traits?associated=. */
  regionReads: Omit<CaseRow, 'explained'>[];
  checks: string[];
}

const withoutBody = ({ body: _body, ...rest }: Measured) => rest;
const seconds = (started: number) => (performance.now() - started) / 1000;
/** Candidates as comparable strings, whatever order a service lists providers and classes in. */
const candidateSet = (body: any) =>
  new Set<string>(
    body.allocation_requests.map((request: any) =>
      Object.entries(request.allocations as Record<string, { resources: Record<string, number> }>)
        .flatMap(([provider, { resources }]) => Object.entries(resources).map(([resourceClass, amount]) => `${provider}/${resourceClass}/${amount}`))
        .sort()
        .join(','),
    ),
  );

export async function runSize(size: number, service: OurService, referenceUrl: string): Promise<SizeResult> {
  const region = new SyntheticRegion(CLOUD_SHAPE);
  const cloud = region.build(size);
  log(`N=${size}: ${cloud.providers.length} providers, ${cloud.consumers.length} consumers`);

  let started = performance.now();
  // Through the API: each service writes what it writes for its clients (for ours, the entries of format 3 too).
  const items = LOAD_THROUGH_API ? [] : regionItems(cloud);
  if (LOAD_THROUGH_API) await new LoadedRegion(region, new PlacementClient(service.url)).resize(size);
  else {
    await batchWrite(items);
    await noteTraitHolders(traitHolders(cloud));
  }
  const ourLoadSeconds = seconds(started);
  log(`N=${size}: ours loaded, ${LOAD_THROUGH_API ? 'through its API' : `${items.length} items`} in ${ourLoadSeconds.toFixed(1)} s`);
  started = performance.now();
  let referenceRows = 0;
  if (LOAD_THROUGH_API) await new LoadedRegion(region, new PlacementClient(referenceUrl)).resize(size);
  else referenceRows = loadReference(cloud);
  const referenceLoadSeconds = seconds(started);
  log(`N=${size}: reference loaded, ${LOAD_THROUGH_API ? 'through its API' : `${referenceRows} rows`} in ${referenceLoadSeconds.toFixed(1)} s`);

  const checks: string[] = [];
  for (const [name, url] of [
    ['ours', service.url],
    ['reference', referenceUrl],
  ] as const) {
    // Compressed: at 10,000 nodes the listing is more than one uncompressed response of ours may carry.
    const listed = (await get(url, '/resource_providers', { 'accept-encoding': 'gzip' })).body.resource_providers.length;
    if (listed !== cloud.providers.length) fail(`${name} lists ${listed} providers, the cloud has ${cloud.providers.length}`);
    // A nested node, one of its PFs and a sharing provider: the usages the API reports are the cloud's.
    const child = cloud.providers.find((provider) => provider.parent_provider_uuid !== null)!;
    const samples = [cloud.providers.find((provider) => provider.uuid === child.parent_provider_uuid)!, child, cloud.providers[0]!];
    for (const provider of samples) {
      const reported = (await get(url, `/resource_providers/${provider.uuid}/usages`)).body.usages;
      const unused = Object.fromEntries(Object.keys(provider.inventories).map((resourceClass) => [resourceClass, 0]));
      const expected = { ...unused, ...usagesFromAllocations(provider, cloud.providerAllocations.get(provider.uuid)) };
      if (JSON.stringify(Object.entries(reported).sort()) !== JSON.stringify(Object.entries(expected).sort())) {
        fail(`${name}: usages of ${provider.name} are ${JSON.stringify(reported)}, expected ${JSON.stringify(expected)}`);
      }
    }
    checks.push(`N=${size} ${name}: GET /resource_providers lists all ${listed} providers; sampled usages match the cloud`);
  }

  // What every empty query below names that nobody has: a custom class, on both services.
  for (const url of [service.url, referenceUrl]) await api(url, 'PUT', `/resource_classes/${UNHELD_CLASS}`);
  // More memory than any node has free, less than its max_unit: capacity used up everywhere.
  const mostFree = Math.max(
    ...cloud.providers.map((provider) => {
      const memory = provider.inventories.MEMORY_MB;
      const used = usagesFromAllocations(provider, cloud.providerAllocations.get(provider.uuid)).MEMORY_MB ?? 0;
      return memory === undefined ? 0 : (memory.total - memory.reserved) * memory.allocation_ratio - used;
    }),
  );
  const nobody = '00000000-0000-4000-8000-00000000dead';
  const requests = [
    ['(a) nova-like', `${FLAVOR}&limit=1000`],
    [
      '(b) + required=AVX2 & member_of',
      `${FLAVOR}&required=HW_CPU_X86_AVX2&member_of=${cloud.providers.find((provider) => provider.aggregates.length > 0)!.aggregates[0]}&limit=1000`,
    ],
    ['(c) granular nested, isolate', `${FLAVOR}&resources1=SRIOV_NET_VF:1&resources2=SRIOV_NET_VF:1&group_policy=isolate&limit=1000`],
    // No valid host: every node is too small (the answer is empty, and ours logs its explanation).
    ['(d) no valid host', `resources=VCPU:1000,MEMORY_MB:4096&required=HW_CPU_X86_AVX2&limit=1000`],
    // The other empty queries of a region that is full, or asked for what it lacks.
    ['(e) capacity used up everywhere', `resources=VCPU:2,MEMORY_MB:${Math.floor(mostFree) + 1}&limit=1000`],
    ['(f) a class nobody has', `${FLAVOR}&resources1=${UNHELD_CLASS}:1&limit=1000`],
    ['(g) a trait nobody has', `${FLAVOR}&required=HW_CPU_X86_AVX512F&limit=1000`],
    ['(h) an aggregate nobody is in', `${FLAVOR}&member_of=${nobody}&limit=1000`],
    ['(i) an unknown in_tree', `${FLAVOR}&in_tree=${nobody}&limit=1000`],
  ] as const;
  const cases: CaseRow[] = [];
  for (const [name, query] of requests) {
    log(`N=${size}: ${name}`);
    const [ours, reference] = await measure([service, { url: referenceUrl }], `/allocation_candidates?${query}`);
    const [{ body: explanation, ...explained }] = await measure([service], `/explain/allocation_candidates?${query}`);
    const emptiedBy = explanation.emptiedBy === null ? '' : `${explanation.emptiedBy.constraint}`;
    cases.push({ name, ours: withoutBody(ours), reference: withoutBody(reference), explained: { ...explained, emptiedBy } });
    // The explanation counts what the answer holds (its last step is the limit).
    if (explained.count !== ours.count) fail(`N=${size} ${name}: the explanation counts ${explained.count} candidates, the answer holds ${ours.count}`);
    // Below the limit both must find the very same candidates.
    if (reference.count < 1000) {
      const same = JSON.stringify([...candidateSet(ours.body)].sort()) === JSON.stringify([...candidateSet(reference.body)].sort());
      checks.push(`N=${size} ${name}: ${same ? 'same' : 'DIFFERENT'} candidates on both (${ours.count} / ${reference.count})`);
    }
  }
  const regionReads: SizeResult['regionReads'] = [];
  // Ours ships a later os-traits than the reference's Debian package: the answers are compared on the traits both know.
  const referenceCatalog = new Set<string>((await get(referenceUrl, '/traits')).body.traits);
  const common = (traits: string[]) => JSON.stringify(traits.filter((trait) => referenceCatalog.has(trait)).sort());
  for (const associated of [true, false]) {
    const name = `GET /traits?associated=${associated}`;
    log(`N=${size}: ${name}`);
    const [ours, reference] = await measure([service, { url: referenceUrl }], `/traits?associated=${associated}`);
    regionReads.push({ name, ours: withoutBody(ours), reference: withoutBody(reference) });
    const same = common(ours.body.traits) === common(reference.body.traits);
    checks.push(
      `N=${size} ${name}: ${same ? 'same' : 'DIFFERENT'} traits on both among the ${referenceCatalog.size} both know (${ours.count} / ${reference.count})`,
    );
  }
  return {
    size,
    providers: cloud.providers.length,
    consumers: cloud.consumers.length,
    ourItems: items.length,
    ourLoadSeconds,
    referenceRows,
    referenceLoadSeconds,
    cases,
    regionReads,
    checks,
  };
}

// ---------------------------------------------------------------- the wide tree

export interface WideResult {
  limited: Omit<Measured, 'body'> & { invalid: number; distinct: number };
  unlimited: { status: number; count: number; bytes: number; ms: number; items: number; invalid: number };
  reference: { status: number; count: number; ms: number } | 'timed out';
}

const WIDE_QUERY = `${Array.from({ length: WIDE_CHILDREN }, (_, n) => `resources${n + 1}=CUSTOM_WIDE:1`).join('&')}&group_policy=isolate`;

/** One root with WIDE_CHILDREN children of one CUSTOM_WIDE each, through the API; returns the children. */
async function createWideTree(url: string): Promise<Set<string>> {
  const expect = async (response: Promise<{ status: number; text: string; body: any }>, what: string) => {
    const { status, text, body } = await response;
    if (status >= 300) fail(`${what}: ${status} ${text.slice(0, 300)}`);
    return body;
  };
  await expect(api(url, 'PUT', '/resource_classes/CUSTOM_WIDE'), 'PUT /resource_classes/CUSTOM_WIDE');
  const root = (await expect(api(url, 'POST', '/resource_providers', { name: 'wide-root' }), 'POST root')).uuid as string;
  const children = new Set<string>();
  for (let n = 0; n < WIDE_CHILDREN; n++) {
    const child = await expect(api(url, 'POST', '/resource_providers', { name: `wide-${n}`, parent_provider_uuid: root }), 'POST child');
    const inventories = { resource_provider_generation: child.generation, inventories: { CUSTOM_WIDE: { total: 1 } } };
    await expect(api(url, 'PUT', `/resource_providers/${child.uuid}/inventories`, inventories), 'PUT inventories');
    children.add(child.uuid);
  }
  return children;
}

/** Valid: WIDE_CHILDREN distinct children, one unit each, each group mapped to its own one. */
function invalidWideCandidates(body: any, children: Set<string>): number {
  return body.allocation_requests.filter((request: any) => {
    const allocations = Object.entries(request.allocations) as [string, any][];
    const mapped = Object.values(request.mappings).flat();
    return (
      allocations.length !== WIDE_CHILDREN ||
      !allocations.every(([uuid, { resources }]) => children.has(uuid) && JSON.stringify(resources) === '{"CUSTOM_WIDE":1}') ||
      Object.keys(request.mappings).length !== WIDE_CHILDREN ||
      new Set(mapped).size !== WIDE_CHILDREN
    );
  }).length;
}

export async function runWide(service: OurService, referenceUrl: string): Promise<WideResult> {
  const children = await createWideTree(service.url);
  log('wide tree: ours, limit=1000');
  const [{ body, ...limited }] = await measure([service], `/allocation_candidates?${WIDE_QUERY}&limit=1000`);
  const distinct = new Set(body.allocation_requests.map((request: any) => JSON.stringify(request.mappings))).size;

  log('wide tree: ours, no limit');
  const whole = await api(service.url, 'GET', `/allocation_candidates?${WIDE_QUERY}`);
  const unlimited = {
    status: whole.status,
    count: whole.body?.allocation_requests?.length ?? 0,
    bytes: Buffer.byteLength(whole.text),
    ms: whole.ms,
    items: (await service.usage(whole.requestId)).items,
    invalid: whole.status === 200 ? invalidWideCandidates(whole.body, children) : 0,
  };

  log(`wide tree: reference, limit=1000 (gives up after ${WIDE_TIMEOUT_MS / 1000} s)`);
  await createWideTree(referenceUrl);
  let reference: WideResult['reference'];
  try {
    const answer = await api(referenceUrl, 'GET', `/allocation_candidates?${WIDE_QUERY}&limit=1000`, undefined, WIDE_TIMEOUT_MS);
    reference = { status: answer.status, count: answer.body?.allocation_requests?.length ?? 0, ms: answer.ms };
  } catch (error) {
    if (!/no answer within/.test((error as Error).message)) throw error;
    reference = 'timed out';
  }
  return { limited: { ...limited, invalid: invalidWideCandidates(body, children), distinct }, unlimited, reference };
}
