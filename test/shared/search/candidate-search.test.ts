import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCandidateRequest } from '../../../shared/domain/candidate-request.js';
import { Microversion } from '../../../shared/api/microversion.js';
import { QueryString } from '../../../shared/api/query-string.js';
import { searchCandidates } from '../../../shared/search/candidate-search.js';
import { dynamo, tableName } from '../../../shared/storage/client.js';
import { aggregateMemberKey, encodeSearchEntry } from '../../../shared/storage/items/search-entry.js';
import { CAPACITY_SHARDS } from '../../../shared/storage/items/capacity-entry.js';
import { PROVIDER_SHARDS } from '../../../shared/storage/table-definition.js';
import { useLocalService } from '../../support/local-service.js';

const COMPUTES = 48;
const AGGREGATE = randomUUID();

const service = useLocalService();
const api = service.client({ token: 'admin', version: '1.39' });
const computes: string[] = [];

async function createProvider(name: string, inventories: Record<string, { total: number }>, parent?: string): Promise<string> {
  const uuid = randomUUID();
  const created = await api('POST', '/resource_providers', { name, uuid, ...(parent ? { parent_provider_uuid: parent } : {}) });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const stocked = await api('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories });
  expect(stocked.status, JSON.stringify(stocked.body)).toBe(200);
  return uuid;
}

beforeAll(async () => {
  for (let n = 0; n < COMPUTES; n++) {
    // Every fourth compute node is too small for the requests below.
    computes.push(await createProvider(`cn-${n}`, { VCPU: { total: n % 4 === 0 ? 1 : 16 }, MEMORY_MB: { total: 8192 } }));
  }
  for (const uuid of computes.slice(0, 6)) {
    const current = await api('GET', `/resource_providers/${uuid}`);
    await api('PUT', `/resource_providers/${uuid}/aggregates`, { aggregates: [AGGREGATE], resource_provider_generation: current.body.generation });
  }
});

const search = (query: string) =>
  searchCandidates(parseCandidateRequest(QueryString.parse(query), Microversion.parse('1.39')), {
    maxCandidates: 1000,
    maxSteps: 1_000_000,
    deadlineMs: 10_000,
  });

describe('GET /allocation_candidates on DynamoDB Local', () => {
  it('answers every fitting compute node, and only those', async () => {
    const response = await api('GET', '/allocation_candidates?resources=VCPU:2,MEMORY_MB:1024');
    expect(response.status).toBe(200);
    const chosen = response.body.allocation_requests.map((request: any) => Object.keys(request.allocations)[0]);
    expect(new Set(chosen)).toEqual(new Set(computes.filter((_, n) => n % 4 !== 0)));
    expect(Object.keys(response.body.provider_summaries)).toHaveLength(36);
  });

  it('stops reading once the limit is reached', async () => {
    const limited = await search('resources=VCPU:2&limit=5');
    expect(limited.candidates).toHaveLength(5);
    const everything = await search('resources=VCPU:2');
    expect(everything.candidates).toHaveLength(36);
    // One small round: about two items per wanted candidate, spread over the shards, not the whole cloud; and before it, one
    // capacity entry of each partition of VCPU (storage format 3) and one more to tell whether there are others: there are.
    expect(limited.itemsRead).toBeLessThanOrEqual(3 * PROVIDER_SHARDS + 2 * CAPACITY_SHARDS);
    expect(everything.itemsRead).toBeGreaterThanOrEqual(COMPUTES);
  });

  it('starts from the aggregate for member_of, reading its members rather than the cloud', async () => {
    const result = await search(`resources=VCPU:2&member_of=${AGGREGATE}`);
    const fitting = computes.slice(0, 6).filter((_, n) => n % 4 !== 0);
    expect(new Set(result.candidates.map((candidate) => candidate.anchor))).toEqual(new Set(fitting));
    expect(result.itemsRead).toBeLessThan(COMPUTES / 2);
  });

  it('leaves out a member whose provider was deleted between the read of its membership and its own', async () => {
    // What that race leaves to the search: a membership whose provider is no longer there.
    const gone = aggregateMemberKey(AGGREGATE, randomUUID());
    await dynamo().send(new PutCommand({ TableName: tableName(), Item: encodeSearchEntry(gone, gone.sk.slice('RP#'.length)) }));
    try {
      const response = await api('GET', `/allocation_candidates?resources=VCPU:2&member_of=${AGGREGATE}`);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const anchors = response.body.allocation_requests.map((request: any) => Object.keys(request.allocations)[0]);
      expect(new Set(anchors)).toEqual(new Set(computes.slice(0, 6).filter((_, n) => n % 4 !== 0)));
    } finally {
      await dynamo().send(new DeleteCommand({ TableName: tableName(), Key: gone }));
    }
  });

  it('takes disk from a sharing provider of the aggregate, and a claim of the candidate lands', async () => {
    const storage = await createProvider('shared-disk', { DISK_GB: { total: 1000 } });
    const current = await api('GET', `/resource_providers/${storage}`);
    await api('PUT', `/resource_providers/${storage}/aggregates`, { aggregates: [AGGREGATE], resource_provider_generation: current.body.generation });
    await api('PUT', `/resource_providers/${storage}/traits`, {
      traits: ['MISC_SHARES_VIA_AGGREGATE'],
      resource_provider_generation: current.body.generation + 1,
    });

    const response = await api('GET', '/allocation_candidates?resources=VCPU:2,DISK_GB:100&limit=2');
    expect(response.status).toBe(200);
    expect(response.body.allocation_requests).toHaveLength(2);
    const [first] = response.body.allocation_requests;
    expect(first.allocations[storage]).toEqual({ resources: { DISK_GB: 100 } });
    expect(first.mappings['']).toContain(storage);

    const consumer = randomUUID();
    const claim = await api('PUT', `/allocations/${consumer}`, {
      allocations: first.allocations,
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
    expect(claim.status, JSON.stringify(claim.body)).toBe(204);
    const usages = await api('GET', `/resource_providers/${storage}/usages`);
    expect(usages.body.usages).toEqual({ DISK_GB: 100 });

    // Seeded by member_of, the search knows the aggregate's sharing providers from its members.
    const seeded = await api('GET', `/allocation_candidates?resources=VCPU:2,DISK_GB:100&member_of=${AGGREGATE}`);
    const disks = seeded.body.allocation_requests.map((request: any) => request.allocations[storage]?.resources.DISK_GB);
    expect(disks).toEqual([100, 100, 100, 100]);
  });

  it('filters by root_required when sharing providers could hold every requested class', async () => {
    const addresses = await createProvider('shared-addresses', { IPV4_ADDRESS: { total: 8 } });
    const current = await api('GET', `/resource_providers/${addresses}`);
    await api('PUT', `/resource_providers/${addresses}/aggregates`, { aggregates: [AGGREGATE], resource_provider_generation: current.body.generation });
    await api('PUT', `/resource_providers/${addresses}/traits`, {
      traits: ['MISC_SHARES_VIA_AGGREGATE'],
      resource_provider_generation: current.body.generation + 1,
    });

    // Nothing is left for the walk's filter to require but the root traits (it once named an unused attribute: a 500).
    const response = await api('GET', '/allocation_candidates?resources=IPV4_ADDRESS:1&root_required=!COMPUTE_STATUS_DISABLED');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.allocation_requests).toEqual([{ allocations: { [addresses]: { resources: { IPV4_ADDRESS: 1 } } }, mappings: { '': [addresses] } }]);
    const refused = await api('GET', '/allocation_candidates?resources=IPV4_ADDRESS:1&root_required=COMPUTE_STATUS_DISABLED');
    expect(refused.body.allocation_requests).toEqual([]);
  });

  it("finds the sharing providers of a seeded tree's other aggregates", async () => {
    const [, node] = computes;
    const otherAggregate = randomUUID();
    const current = await api('GET', `/resource_providers/${node}/aggregates`);
    await api('PUT', `/resource_providers/${node}/aggregates`, {
      aggregates: [...current.body.aggregates, otherAggregate],
      resource_provider_generation: current.body.resource_provider_generation,
    });
    const storage = await createProvider('other-shared-disk', { DISK_GB: { total: 500 } });
    await api('PUT', `/resource_providers/${storage}/aggregates`, { aggregates: [otherAggregate], resource_provider_generation: 1 });
    await api('PUT', `/resource_providers/${storage}/traits`, { traits: ['MISC_SHARES_VIA_AGGREGATE'], resource_provider_generation: 2 });

    const response = await api('GET', `/allocation_candidates?resources1=VCPU:2&member_of1=${AGGREGATE}&resources=DISK_GB:100`);
    expect(response.status).toBe(200);
    const anchors = response.body.allocation_requests
      .filter((request: any) => request.allocations[storage] !== undefined)
      .map((request: any) => Object.keys(request.allocations).find((uuid) => uuid !== storage));
    expect(anchors).toEqual([node]);
  });

  it('reads the whole trees of many nested members', async () => {
    const aggregate = randomUUID();
    const trees = new Map<string, string>();
    for (let n = 0; n < 12; n++) {
      const root = await createProvider(`nested-${n}`, { VCPU: { total: 8 } });
      trees.set(root, await createProvider(`nested-${n}-pf`, { SRIOV_NET_VF: { total: 4 } }, root));
      await api('PUT', `/resource_providers/${root}/aggregates`, { aggregates: [aggregate], resource_provider_generation: 1 });
    }
    const response = await api('GET', `/allocation_candidates?resources=VCPU:1&resources1=SRIOV_NET_VF:1&member_of=${aggregate}`);
    expect(response.status).toBe(200);
    const used = response.body.allocation_requests.map((request: any) => Object.keys(request.allocations).sort().join());
    expect(new Set(used)).toEqual(new Set([...trees].map((pair) => pair.sort().join())));
    expect(Object.keys(response.body.provider_summaries).sort()).toEqual([...trees].flat().sort());
  });

  it('refuses unknown names the way upstream does', async () => {
    const badClass = await api('GET', '/allocation_candidates?resources=CUSTOM_NOPE:1');
    expect(badClass.status).toBe(400);
    expect(badClass.body.errors[0].detail).toContain('Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.');
    const badTrait = await api('GET', '/allocation_candidates?resources=VCPU:1&required=CUSTOM_NOPE');
    expect(badTrait.status).toBe(400);
    expect(badTrait.body.errors[0].detail).toContain('No such trait(s): CUSTOM_NOPE.');
  });
});
