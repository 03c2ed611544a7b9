/**
 * The candidate search from format 3's entries (shared/search/candidate-search.ts,
 * askEntries), behind the fault proxy with a tree index that lags (every
 * index query answers items changed lately as they were, or not at all):
 * a provider whose room a moment ago came back is found at once, from its
 * entry, which its own commit wrote; an entry that says more than its
 * provider has proposes nothing; a class no provider has room for, or
 * more than any could take even empty, reads no provider at all.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../../admin/placement-client.js';
import { Microversion } from '../../../shared/api/microversion.js';
import { QueryString } from '../../../shared/api/query-string.js';
import { parseCandidateRequest } from '../../../shared/domain/candidate-request.js';
import { searchCandidates } from '../../../shared/search/candidate-search.js';
import { putItem, tableName } from '../../../shared/storage/dynamodb.js';
import { encodeCapacityEntry } from '../../../shared/storage/items/capacity-entry.js';
import { useServiceBehindFaultProxy } from '../../support/fault-proxy-service.js';

// The index lags for the whole file, an hour behind the first answer of each query.
const { service } = useServiceBehindFaultProxy({ rates: { staleIndex: 1 }, indexLagMs: 60 * 60_000, seed: 50 });
let api: PlacementClient;
const HOSTS = 12;
const hosts: string[] = [];
const holders = new Map<string, string>();

const search = (query: string) =>
  searchCandidates(parseCandidateRequest(QueryString.parse(query), Microversion.parse('1.39')), {
    maxCandidates: 1000,
    maxSteps: 1_000_000,
    deadlineMs: 10_000,
  });

const claim = (consumer: string, host: string) =>
  api.put(`/allocations/${consumer}`, {
    allocations: { [host]: { resources: { VCPU: 4 } } },
    project_id: 'p',
    user_id: 'u',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  });

beforeAll(async () => {
  api = new PlacementClient(service.url, { version: '1.39' });
  for (let n = 0; n < HOSTS; n++) {
    const uuid = randomUUID();
    expect((await api.post('/resource_providers', { uuid, name: `full-${uuid}` })).status).toBe(200);
    expect((await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 4 } } })).status).toBe(
      200,
    );
    const consumer = randomUUID();
    expect((await claim(consumer, uuid)).status).toBe(204);
    hosts.push(uuid);
    holders.set(uuid, consumer);
  }
  // The walk's first answers, which the lagging index shows from now on.
  expect((await search('resources=VCPU:2')).candidates).toEqual([]);
  expect((await search('resources=VCPU:2&limit=1')).candidates).toEqual([]);
}, 300_000);

describe('the candidate search from the entries, the tree index lagging', () => {
  it('finds a host whose room came back a moment ago, each time', async () => {
    const found: boolean[] = [];
    for (const host of hosts.slice(0, 6)) {
      expect((await api.delete(`/allocations/${holders.get(host)}`)).status).toBe(204);
      const result = await search('resources=VCPU:2');
      found.push(result.candidates.some((candidate) => candidate.anchor === host));
      expect((await claim(holders.get(host)!, host)).status).toBe(204);
    }
    expect(found).toEqual([true, true, true, true, true, true]);
  });

  it('proposes no host whose entry says more room than it has', async () => {
    const [stale] = hosts;
    await putItem({ TableName: tableName(), Item: encodeCapacityEntry({ resourceClass: 'VCPU', uuid: stale!, room: 100, minUnit: 1, stepSize: 1 }) });
    const result = await search('resources=VCPU:50');
    expect(result.candidates).toEqual([]);
    expect((await api.get('/allocation_candidates?resources=VCPU:50')).body.allocation_requests).toEqual([]);
  });

  it('reads no provider for a class no provider has room for', async () => {
    const result = await search('resources=VCPU:1000');
    expect(result.candidates).toEqual([]);
    expect(result.itemsRead).toBe(0);
  });

  it('reads no provider for more than any provider of the class could take even empty (the rounding stops at its size)', async () => {
    // 389,120 MB to hand out (384 GiB, 4 GiB reserved): rounded up to 1/16, its room would be keyed 393,216.
    const memoryHosts: string[] = [];
    for (let n = 0; n < 3; n++) {
      const uuid = randomUUID();
      expect((await api.post('/resource_providers', { uuid, name: `memory-${uuid}` })).status).toBe(200);
      const inventories = { MEMORY_MB: { total: 384 * 1024, reserved: 4096 } };
      expect((await api.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories })).status).toBe(200);
      memoryHosts.push(uuid);
    }
    const used = { allocations: { [memoryHosts[0]!]: { resources: { MEMORY_MB: 4096 } } }, project_id: 'p', user_id: 'u', consumer_generation: null };
    expect((await api.put(`/allocations/${randomUUID()}`, { ...used, consumer_type: 'INSTANCE' })).status).toBe(204);
    const tooMuch = await search('resources=MEMORY_MB:389121');
    expect(tooMuch.candidates).toEqual([]);
    expect(tooMuch.itemsRead).toBe(0);
    const whole = await search('resources=MEMORY_MB:389120');
    expect(whole.candidates.map((candidate) => candidate.anchor).sort()).toEqual(memoryHosts.slice(1).sort());
  });
});
