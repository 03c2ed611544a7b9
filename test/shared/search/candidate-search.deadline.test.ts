/**
 * The candidate search stops at PLACEMENT_SEARCH_DEADLINE_MS: eleven
 * single-unit groups over ten single-unit children have no placement, and a
 * depth-first search needs 10! steps to find that out.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { PlacementClient } from '../../../scripts/lib/placement-client.js';
import { useLocalService } from '../../support/local-service.js';

const service = useLocalService(() => ({ PLACEMENT_SEARCH_DEADLINE_MS: '300' }));
const CHILDREN = 10;
let api: PlacementClient;
const root = randomUUID();

beforeAll(async () => {
  api = new PlacementClient(service.url, { version: '1.39' });
  expect((await api.request('PUT', '/resource_classes/CUSTOM_UNIT')).status).toBeLessThan(300);
  expect((await api.post('/resource_providers', { name: `deadline-${root}`, uuid: root })).status).toBe(200);
  for (let n = 0; n < CHILDREN; n++) {
    const child = (await api.post('/resource_providers', { name: `deadline-child-${n}-${root}`, parent_provider_uuid: root })).body.uuid as string;
    const inventory = await api.put(`/resource_providers/${child}/inventories`, {
      resource_provider_generation: 0,
      inventories: { CUSTOM_UNIT: { total: 1 } },
    });
    expect(inventory.status).toBe(200);
  }
}, 120_000);

describe('the allocation candidate search', () => {
  it('answers within its deadline however many placements it would have to try', async () => {
    const groups = Array.from({ length: CHILDREN + 1 }, (_, n) => `resources${n + 1}=CUSTOM_UNIT:1`).join('&');
    const response = await api.get(`/allocation_candidates?${groups}&group_policy=isolate`);
    expect(response.status).toBe(200);
    expect(response.body.allocation_requests).toEqual([]);
    expect(response.ms).toBeLessThan(3000);
  });
});
