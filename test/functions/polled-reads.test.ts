/**
 * What nova's most frequent requests cost in DynamoDB, from the service's
 * own request records: the requests a compute node polls read only what they
 * answer with, and a claim rewrites one index entry per provider.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiResponse } from '../../admin/placement-client.js';
import { STANDARD_TRAITS } from '../../shared/domain/standard-catalog.js';
import { parseRequestRecord } from '../../shared/http/middleware/metrics.js';
import { consumerKey } from '../../shared/storage/items/consumer.js';
import { providerKey } from '../../shared/storage/items/provider.js';
import { getItem } from '../../shared/storage/reads.js';
import { BY_GROUP_INDEX, BY_SHARD_INDEX } from '../../shared/storage/table-definition.js';
import { useLocalService } from '../support/local-service.js';

interface Units {
  ReadCapacityUnits: number;
  WriteCapacityUnits: number;
  itemsRead: number;
}

const records = new Map<string, Units>();
const service = useLocalService(() => ({ PLACEMENT_REQUEST_RECORDS: 'true' }));
const api = service.client({ token: 'admin', version: '1.39' });
/** No microversion header, as nova-compute sends some of its calls. */
const unversioned = service.client({ token: 'admin' });

beforeAll(() => {
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: any[]) => {
    const record = parseRequestRecord(String(chunk));
    if (record?.requestId === undefined) return write(chunk, ...rest);
    records.set(record.requestId, record);
    return true;
  });
});
afterAll(() => vi.restoreAllMocks());

async function unitsOf(response: ApiResponse): Promise<Units> {
  const id = response.headers.get('x-openstack-request-id')!;
  for (let waited = 0; !records.has(id) && waited < 2000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  return records.get(id)!;
}

async function ok(response: Promise<ApiResponse>): Promise<ApiResponse> {
  const answer = await response;
  expect(answer.status, answer.text).toBeLessThan(300);
  return answer;
}

async function provider(name: string, fields: { parent?: string; traits?: string[]; aggregates?: string[] } = {}): Promise<string> {
  const uuid = randomUUID();
  await ok(api('POST', '/resource_providers', { name, uuid, ...(fields.parent ? { parent_provider_uuid: fields.parent } : {}) }));
  await ok(
    api('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 64 }, DISK_GB: { total: 1000 } } }),
  );
  let generation = 1;
  if (fields.traits) await ok(api('PUT', `/resource_providers/${uuid}/traits`, { resource_provider_generation: generation++, traits: fields.traits }));
  if (fields.aggregates)
    await ok(api('PUT', `/resource_providers/${uuid}/aggregates`, { resource_provider_generation: generation, aggregates: fields.aggregates }));
  return uuid;
}

const aggregate = randomUUID();
const tree = { root: '', child: '', sharing: '' };
const others: string[] = [];

beforeAll(async () => {
  for (let n = 0; n < 20; n++) others.push(await provider(`elsewhere-${n}`));
  tree.root = await provider('member-root', { aggregates: [aggregate] });
  tree.child = await provider('member-child', { parent: tree.root });
  tree.sharing = await provider('member-sharing', { traits: ['MISC_SHARES_VIA_AGGREGATE'], aggregates: [aggregate] });
}, 120_000);

/** As many traits as libvirt reports for a compute node (about 60), of such names. */
const LIBVIRT_LIKE_TRAITS = STANDARD_TRAITS.filter((name) => name.startsWith('COMPUTE_') || name.startsWith('HW_CPU_X86_')).slice(0, 60);

const names = (response: ApiResponse) => response.body.resource_providers.map((one: { name: string }) => one.name).sort();

describe("the reads of nova-compute's association refresh", () => {
  it('lists the members of an aggregate from the aggregate, not from every provider', async () => {
    const members = await ok(api('GET', `/resource_providers?member_of=in:${aggregate}`, undefined, { 'openstack-api-version': 'placement 1.18' }));
    expect(names(members)).toEqual(['member-root', 'member-sharing']);
    const everything = await ok(api('GET', '/resource_providers'));
    expect(everything.body.resource_providers.length).toBeGreaterThanOrEqual(23);
    // The aggregate's two membership items and the two members: nowhere near every provider.
    expect((await unitsOf(members)).itemsRead).toBe(4);
    expect((await unitsOf(everything)).itemsRead).toBeGreaterThanOrEqual(23);
  });

  it("finds the sharing providers of an aggregate as nova asks for them, from the aggregate's sharing entries only", async () => {
    const query = `member_of=in:${aggregate}&required=MISC_SHARES_VIA_AGGREGATE`;
    const sharing = await ok(api('GET', `/resource_providers?${query}`, undefined, { 'openstack-api-version': 'placement 1.18' }));
    expect(names(sharing)).toEqual(['member-sharing']);
    // The aggregate's one sharing entry and that provider, each half a unit (eventually consistent): not its other members.
    expect(await unitsOf(sharing)).toMatchObject({ ReadCapacityUnits: 1, itemsRead: 2 });
    // Forbidding the trait reads every member of the aggregate.
    const others = await ok(
      api('GET', `/resource_providers?member_of=in:${aggregate}&required=!MISC_SHARES_VIA_AGGREGATE`, undefined, { 'openstack-api-version': 'placement 1.22' }),
    );
    expect(names(others)).toEqual(['member-root']);
  });

  it("lists a compute node's tree, as nova asks for it, with one query of the sharded index", async () => {
    const listed = await ok(api('GET', `/resource_providers?in_tree=${tree.root}`, undefined, { 'openstack-api-version': 'placement 1.14' }));
    expect(names(listed)).toEqual(['member-child', 'member-root']);
    // The tree's two index entries, under 4 KB together, eventually consistent: half a unit.
    expect(await unitsOf(listed)).toMatchObject({ ReadCapacityUnits: 0.5, itemsRead: 2 });
  });

  it('lists the tree of a child from its root', async () => {
    const listed = await ok(api('GET', `/resource_providers?in_tree=${tree.child}`, undefined, { 'openstack-api-version': 'placement 1.14' }));
    expect(names(listed)).toEqual(['member-child', 'member-root']);
    // The child read for its root (half a unit), then the tree (half a unit), after learning that no tree has the child as
    // root: DynamoDB bills that empty query half a unit, DynamoDB Local reports it as none.
    expect((await unitsOf(listed)).ReadCapacityUnits).toBeGreaterThanOrEqual(1);
    expect((await unitsOf(listed)).ReadCapacityUnits).toBeLessThanOrEqual(1.5);
    const unknown = await ok(api('GET', `/resource_providers?in_tree=${randomUUID()}`, undefined, { 'openstack-api-version': 'placement 1.14' }));
    expect(names(unknown)).toEqual([]);
  });
});

describe("nova-compute's check that its traits exist", () => {
  it('reads the named catalog entries, not the catalog', async () => {
    const custom = ['CUSTOM_POLLED_B', 'CUSTOM_POLLED_A'];
    for (const name of custom) await ok(api('PUT', `/traits/${name}`));
    // Two that exist, a standard one, one never created and one no catalog could hold, as nova asks (1.6).
    const query = `/traits?name=in:${[...custom, 'HW_CPU_X86_AVX2', 'CUSTOM_POLLED_NEVER', 'lower_case'].join(',')}`;
    const found = await ok(api('GET', query, undefined, { 'openstack-api-version': 'placement 1.6' }));
    expect(found.body.traits).toEqual(['CUSTOM_POLLED_A', 'CUSTOM_POLLED_B', 'HW_CPU_X86_AVX2']);
    // Four keys asked for, three found: not the hundreds of standard traits the whole catalog holds.
    expect((await unitsOf(found)).itemsRead).toBe(3);
    const everything = await ok(api('GET', '/traits', undefined, { 'openstack-api-version': 'placement 1.6' }));
    expect((await unitsOf(everything)).itemsRead).toBe(everything.body.traits.length);
    expect(everything.body.traits.filter((name: string) => found.body.traits.includes(name))).toEqual(found.body.traits);
  });
});

describe('the periodic allocation reads and the claim', () => {
  const consumer = randomUUID();

  it('rewrites one index entry per provider in a claim: providers are in the byShard index only', async () => {
    const claim = await ok(
      api('PUT', `/allocations/${consumer}`, {
        allocations: { [tree.root]: { resources: { VCPU: 2 } }, [tree.sharing]: { resources: { DISK_GB: 20 } } },
        project_id: 'polled-reads',
        user_id: 'polled-reads',
        consumer_generation: null,
        consumer_type: 'INSTANCE',
      }),
    );
    expect((await unitsOf(claim)).WriteCapacityUnits).toBeGreaterThan(0);
    // An index entry is rewritten whenever its item is: a provider in a second index would double its index writes.
    const providerItem = (await getItem(providerKey(tree.root)))!;
    expect(providerItem[BY_SHARD_INDEX.partitionKey]).toBeDefined();
    expect(providerItem[BY_GROUP_INDEX.partitionKey]).toBeUndefined();
    // The consumer keeps its project entry (GET /usages?project_id lists consumers by project).
    expect((await getItem(consumerKey(consumer)))![BY_GROUP_INDEX.partitionKey]).toBe('PROJECT#polled-reads');
  });

  it("reads a provider's allocations and the provider itself in one query", async () => {
    const held = await ok(unversioned('GET', `/resource_providers/${tree.root}/allocations`));
    expect(Object.keys(held.body.allocations)).toEqual([consumer]);
    expect(held.body.resource_provider_generation).toBe(3);
    // Both items are well under 4 KB: one strongly consistent read unit for the pair.
    expect((await unitsOf(held)).ReadCapacityUnits).toBe(1);
    const missing = await unversioned('GET', `/resource_providers/${randomUUID()}/allocations`);
    expect(missing.status).toBe(404);
  });

  it("reads a compute node's 30 allocations and the node in 2 units", async () => {
    const node = await provider('thirty-instances', { traits: LIBVIRT_LIKE_TRAITS });
    for (let n = 0; n < 30; n++) {
      await ok(
        api('PUT', `/allocations/${randomUUID()}`, {
          allocations: { [node]: { resources: { VCPU: 2, DISK_GB: 20 } } },
          project_id: 'polled-reads',
          user_id: 'polled-reads',
          consumer_generation: null,
          consumer_type: 'INSTANCE',
        }),
      );
    }
    const held = await ok(unversioned('GET', `/resource_providers/${node}/allocations`));
    expect(Object.keys(held.body.allocations)).toHaveLength(30);
    // The provider item (about 2 KB with 60 traits) and 30 allocation items of under 200 bytes: 5 to 8 KB, strongly consistent.
    expect(await unitsOf(held)).toMatchObject({ ReadCapacityUnits: 2, itemsRead: 31 });
  }, 60_000);

  it("reads the consumer strongly consistent and its providers' generations eventually consistent", async () => {
    const shown = await ok(api('GET', `/allocations/${consumer}`, undefined, { 'openstack-api-version': 'placement 1.28' }));
    expect(shown.body.consumer_generation).toBe(1);
    expect(shown.body.allocations[tree.root]).toEqual({ resources: { VCPU: 2 }, generation: 3 });
    expect(shown.body.allocations[tree.sharing]).toEqual({ resources: { DISK_GB: 20 }, generation: 4 });
    // 1 unit for the consumer, half a unit for each of the two providers.
    expect((await unitsOf(shown)).ReadCapacityUnits).toBe(1 + 2 * 0.5);
  });
});

describe('the questions about all providers, answered from their entries (format 3)', () => {
  const PROVIDERS = 60;
  beforeAll(async () => {
    for (let n = 0; n < PROVIDERS; n++) await provider(`all-${n}`);
  }, 120_000);

  it('GET /traits?associated= reads the listed traits and a holder of each held one, not every provider', async () => {
    await ok(api('PUT', '/traits/CUSTOM_ASSOCIATED_HELD'));
    await ok(api('PUT', '/traits/CUSTOM_ASSOCIATED_NOT'));
    await provider('associated-holder', { traits: ['CUSTOM_ASSOCIATED_HELD'] });
    const held = await ok(api('GET', '/traits?associated=true&name=in:CUSTOM_ASSOCIATED_HELD,CUSTOM_ASSOCIATED_NOT'));
    expect(held.body.traits).toEqual(['CUSTOM_ASSOCIATED_HELD']);
    // 2 catalog entries and the holder its entry names; before format 3, every provider.
    expect((await unitsOf(held)).itemsRead).toBe(3);
    // The whole catalog: its entries and at most one provider per held trait (the holder its entry names); before,
    // every provider too.
    const catalog = await ok(api('GET', '/traits'));
    const whole = await ok(api('GET', '/traits?associated=true'));
    expect(whole.body.traits).toContain('CUSTOM_ASSOCIATED_HELD');
    expect(whole.body.traits).not.toContain('CUSTOM_ASSOCIATED_NOT');
    const { itemsRead } = await unitsOf(whole);
    expect(itemsRead).toBeLessThanOrEqual(catalog.body.traits.length + whole.body.traits.length);
    expect(itemsRead).toBeLessThan(catalog.body.traits.length + PROVIDERS);
  });

  it("a rename of a custom class reads the class's holders, not every provider", async () => {
    await ok(api('PUT', '/resource_classes/CUSTOM_RENAMED_FROM'));
    const holders = [await provider('rename-holder-1'), await provider('rename-holder-2')];
    for (const uuid of holders) {
      const { body } = await ok(api('GET', `/resource_providers/${uuid}/inventories`));
      const inventories = { ...body.inventories, CUSTOM_RENAMED_FROM: { total: 4 } };
      await ok(api('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: body.resource_provider_generation, inventories }));
    }
    const renamed = await ok(api('PUT', '/resource_classes/CUSTOM_RENAMED_FROM', { name: 'CUSTOM_RENAMED_TO' }, { 'openstack-api-version': 'placement 1.6' }));
    expect(renamed.body.name).toBe('CUSTOM_RENAMED_TO');
    // The class's entries, use-count shards and catalog entries, and the two holders' partitions: a few dozen items
    // however many providers the region has; before format 3, every provider item of the byShard index (60 and more here).
    expect((await unitsOf(renamed)).itemsRead).toBeLessThan(PROVIDERS);
    const { body } = await ok(api('GET', `/resource_providers/${holders[0]}/inventories`));
    expect(Object.keys(body.inventories)).toContain('CUSTOM_RENAMED_TO');
  });
});
