/**
 * GET /explain/allocation_candidates on a region built here: each empty query names the constraint that emptied
 * it, and a query with candidates counts exactly as many as GET /allocation_candidates answers.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { runAdmin } from '../support/admin.js';
import { useLocalService } from '../support/local-service.js';

// INFO: the search's own record (its items read) beside the explanation's.
const service = useLocalService(() => ({ PLACEMENT_LOG_LEVEL: 'INFO' }));
const placement = () => new PlacementClient(service.url, { version: '1.39' });
const [host, numa0, numa1, other, aggregate, elsewhere] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const TRAIT = `CUSTOM_EXPLAIN_${randomUUID().slice(0, 8).toUpperCase()}`;

async function provider(uuid: string, parent: string | null, inventories: Record<string, number>, traits: string[], aggregates: string[]) {
  const client = placement();
  expect((await client.post('/resource_providers', { name: `explain-${uuid}`, uuid, ...(parent ? { parent_provider_uuid: parent } : {}) })).status).toBe(200);
  const totals = Object.fromEntries(Object.entries(inventories).map(([name, total]) => [name, { total }]));
  let generation = (await client.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: totals })).body
    .resource_provider_generation;
  generation = (await client.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: generation, traits })).body.resource_provider_generation;
  await client.put(`/resource_providers/${uuid}/aggregates`, { resource_provider_generation: generation, aggregates });
}

/** The service's log records (it runs in this process). */
const logged: Record<string, any>[] = [];
beforeAll(() => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: any[]) => {
      const text = String(chunk);
      if (text.startsWith('{') && text.includes('"request_id"')) logged.push(JSON.parse(text));
      return write(chunk, ...rest);
    });
  }
});
afterAll(() => vi.restoreAllMocks());

beforeAll(async () => {
  await placement().put(`/traits/${TRAIT}`, undefined);
  await provider(host, null, { DISK_GB: 100 }, ['HW_NUMA_ROOT', 'COMPUTE_STATUS_DISABLED'], [aggregate]);
  await provider(numa0, host, { VCPU: 4, MEMORY_MB: 4096 }, ['HW_CPU_X86_AVX2'], []);
  await provider(numa1, host, { VCPU: 4, MEMORY_MB: 4096 }, [TRAIT], []);
  await provider(other, null, { VCPU: 2, MEMORY_MB: 2048 }, [], []);
});

const explain = async (query: string) => {
  const answer = await placement().get(`/explain/allocation_candidates?${query}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
};

describe('explain', () => {
  it.each([
    ['capacity used up', 'resources=VCPU:8', { suffix: '', constraint: 'resources=VCPU:8' }],
    ['a missing trait', 'resources=VCPU:2&required=HW_CPU_X86_AVX512F', { suffix: '', constraint: 'required=HW_CPU_X86_AVX512F' }],
    ['a forbidden trait', `resources1=VCPU:3&required1=!HW_CPU_X86_AVX2,!${TRAIT}`, { suffix: '1', constraint: `required1=!${TRAIT}` }],
    ['an aggregate', `resources=VCPU:2&member_of=${elsewhere}`, { suffix: '', constraint: `member_of=${elsewhere}` }],
    ['a numbered group', 'resources=VCPU:1&resources2=MEMORY_MB:5000', { suffix: '2', constraint: 'resources2=MEMORY_MB:5000' }],
    [
      'group_policy',
      'resources1=VCPU:3&resources2=MEMORY_MB:3000&required2=HW_CPU_X86_AVX2&group_policy=isolate&required1=HW_CPU_X86_AVX2',
      { suffix: null, constraint: 'group_policy=isolate' },
    ],
    ['root_required', 'resources=VCPU:3&root_required=!COMPUTE_STATUS_DISABLED', { suffix: null, constraint: 'root_required=!COMPUTE_STATUS_DISABLED' }],
    [
      'same_subtree',
      `resources_A=VCPU:3&required_A=HW_CPU_X86_AVX2&resources_B=MEMORY_MB:100&required_B=${TRAIT}&same_subtree=_A,_B&group_policy=none`,
      { suffix: null, constraint: 'same_subtree=_A,_B' },
    ],
    // Counted in the tree in_tree names, the only one the search reads: it has no 3 VCPU.
    ['in_tree', `resources=VCPU:3&in_tree=${other}`, { suffix: '', constraint: 'resources=VCPU:3' }],
    ['an unknown in_tree', `resources=VCPU:1&in_tree=${elsewhere}`, { suffix: '', constraint: `in_tree=${elsewhere}` }],
  ])('names what emptied a query: %s', async (_kind, query, emptiedBy) => {
    const explanation = await explain(query);
    expect((await placement().get(`/allocation_candidates?${query}`)).body.allocation_requests).toEqual([]);
    expect(explanation.candidates).toBe(0);
    expect(explanation.emptiedBy).toEqual(emptiedBy);
  });

  it.each([
    'resources=VCPU:2',
    'resources=VCPU:1&limit=2',
    'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:10',
    'resources1=VCPU:1&resources2=VCPU:1&group_policy=none',
  ])('counts as many candidates as the real answer holds: %s', async (query) => {
    const explanation = await explain(query);
    const real = (await placement().get(`/allocation_candidates?${query}`)).body.allocation_requests.length;
    expect(real).toBeGreaterThan(0);
    expect(explanation.candidates).toBe(real);
    expect(explanation.emptiedBy).toBeNull();
  });

  it('answers a bad query with the same 400 as the search', async () => {
    const query = 'resources=VCPU:x';
    const [explained, searched] = [await placement().get(`/explain/allocation_candidates?${query}`), await placement().get(`/allocation_candidates?${query}`)];
    expect(explained.status).toBe(400);
    expect(explained.body.errors[0].detail).toBe(searched.body.errors[0].detail);
  });

  it('logs why when GET /allocation_candidates answers nothing, with the request id, and only then', async () => {
    const recordsOf = async (query: string) => {
      const answer = await placement().get(`/allocation_candidates?${query}`);
      expect(answer.status).toBe(200);
      const id = answer.headers.get('x-openstack-request-id');
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { answer, records: logged.filter((record) => record.request_id === id && /^no allocation candidates/.test(record.message)) };
    };
    const empty = await recordsOf('resources=VCPU:8');
    expect(empty.answer.body.allocation_requests).toEqual([]);
    expect(empty.records).toHaveLength(1);
    expect(empty.records[0]!.query).toBe('resources=VCPU:8');
    expect(empty.records[0]!.explanation.emptiedBy).toEqual({ suffix: '', constraint: 'resources=VCPU:8' });
    expect(empty.records[0]!.explanation).toEqual(await explain('resources=VCPU:8'));
    // A non-empty answer explains nothing (no second search).
    expect((await recordsOf('resources=VCPU:2')).records).toEqual([]);
  });

  it('is what placement-admin explain prints: exactly the four fields with --json, a table without', async () => {
    const query = `resources=VCPU:2&required=HW_CPU_X86_AVX512F`;
    const json = await runAdmin(['explain', '--url', service.url, '--json', query]);
    expect(json.status, json.stderr).toBe(0);
    const { candidates, groups, combined, emptiedBy } = await explain(query);
    expect(JSON.parse(json.stdout)).toStrictEqual({ candidates, groups, combined, emptiedBy });
    const table = await runAdmin(['explain', '--url', service.url, '--microversion', '1.39', query]);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toContain('0 allocation candidates, emptied by required=HW_CPU_X86_AVX512F (the unsuffixed group)');
    // Nobody holds the trait: the entries answered before any provider was read, so no count starts anywhere.
    expect(table.stdout).toMatch(/required=HW_CPU_X86_AVX512F +\(start: -, end: 0\) {2}<- nothing remained/);
    expect(table.stdout).toMatch(/resources=VCPU:2 +\(start: -, end: -\)/);
    const missing = await runAdmin(['explain', '--url', service.url]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('give exactly one QUERY');
  });

  it.each([
    ['no valid host', 'resources=VCPU:1000'],
    ['capacity used up', 'resources=VCPU:8'],
    ['a class nobody has', 'resources=CUSTOM_NOBODY_HAS:1'],
    ['a trait nobody has', 'resources=VCPU:1&required=HW_CPU_X86_AVX512F'],
    ['an aggregate nobody is in', `resources=VCPU:1&member_of=${elsewhere}`],
    ['an unknown in_tree', `resources=VCPU:1&in_tree=${elsewhere}`],
  ])('logs an explanation that read no more than the search it explains: %s', async (_kind, query) => {
    await placement().put('/resource_classes/CUSTOM_NOBODY_HAS', undefined, { version: '1.7' });
    const answer = await placement().get(`/allocation_candidates?${query}`);
    expect(answer.body.allocation_requests).toEqual([]);
    const id = answer.headers.get('x-openstack-request-id');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const searched = logged.find((record) => record.request_id === id && record.message === 'allocation candidate search')!;
    const explained = logged.find((record) => record.request_id === id && record.message === 'no allocation candidates')!;
    expect(explained.explanation.emptiedBy).not.toBeNull();
    expect(explained.itemsRead).toBeLessThanOrEqual(searched.itemsRead);
  });
});
