/**
 * The reads sent without the SDK (shared/storage/direct-reads.ts) keep the
 * SDK client's contract: retried past DynamoDB's passing faults to the same
 * answer, given up after PLACEMENT_DYNAMODB_MAX_ATTEMPTS attempts as a 503,
 * an attempt whose answer never comes cut off at PLACEMENT_DYNAMODB_TIMEOUT_MS,
 * and the keys a batch read leaves unprocessed asked for again.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PlacementClient } from '../../../admin/placement-client.js';
import { useServiceBehindFaultProxy } from '../../support/fault-proxy-service.js';

const MAX_ATTEMPTS = 3;
const TIMEOUT_MS = 1500;
const { service, proxy } = useServiceBehindFaultProxy(
  { seed: 41 },
  { PLACEMENT_DYNAMODB_MAX_ATTEMPTS: String(MAX_ATTEMPTS), PLACEMENT_DYNAMODB_TIMEOUT_MS: String(TIMEOUT_MS) },
);

const placement = () => new PlacementClient(service.url, { token: 'admin', version: '1.28' });
const isOperation = (name: string) => (operation: string) => operation === name;

/** A consumer holding 2 VCPU and 1024 MB on each of `count` new nodes. */
async function consumerOnNodes(count = 1): Promise<{ nodes: string[]; consumer: string }> {
  const nodes = Array.from({ length: count }, () => randomUUID());
  const consumer = randomUUID();
  for (const node of nodes) {
    expect((await placement().post('/resource_providers', { uuid: node, name: `node-${node}` })).status).toBe(200);
    const inventories = { VCPU: { total: 8 }, MEMORY_MB: { total: 8192 } };
    expect((await placement().put(`/resource_providers/${node}/inventories`, { resource_provider_generation: 0, inventories })).status).toBe(200);
  }
  const allocations = Object.fromEntries(nodes.map((node) => [node, { resources: { VCPU: 2, MEMORY_MB: 1024 } }]));
  expect((await placement().put(`/allocations/${consumer}`, { allocations, project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(204);
  return { nodes, consumer };
}

describe('reads sent without the SDK', () => {
  it('are retried past throttling, a server error and a reset connection, to the answer without faults', async () => {
    const {
      nodes: [node],
      consumer,
    } = await consumerOnNodes();
    const expected = await placement().get(`/allocations/${consumer}`);
    const before = proxy().requests().GetItem ?? 0;
    const faulted = proxy().faultsInTurn(isOperation('GetItem'), ['throttle', 'serverError']);
    const answer = await placement().get(`/allocations/${consumer}`);
    await faulted;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(expected.body);
    expect(answer.body.allocations[node!].resources).toEqual({ VCPU: 2, MEMORY_MB: 1024 });
    // Two attempts failed, the third answered: a retry, not a different read.
    expect((proxy().requests().GetItem ?? 0) - before).toBe(3);

    const reset = proxy().faultsInTurn(isOperation('GetItem'), ['reset']);
    expect((await placement().get(`/allocations/${consumer}`)).body).toEqual(expected.body);
    await reset;
  }, 60_000);

  it('give up after PLACEMENT_DYNAMODB_MAX_ATTEMPTS attempts with a 503', async () => {
    const { consumer } = await consumerOnNodes();
    const before = proxy().requests().GetItem ?? 0;
    proxy().setRates({ serverError: 1 }, ['GetItem']);
    try {
      const answer = await placement().get(`/allocations/${consumer}`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
    } finally {
      proxy().setRates({});
    }
    expect((proxy().requests().GetItem ?? 0) - before).toBe(MAX_ATTEMPTS);
  }, 60_000);

  it('cut off an attempt whose answer never comes at PLACEMENT_DYNAMODB_TIMEOUT_MS and try again', async () => {
    const { consumer } = await consumerOnNodes();
    const held = proxy().holdNext(isOperation('GetItem'));
    const started = performance.now();
    const answer = await placement().get(`/allocations/${consumer}`);
    await held;
    expect(answer.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS * 3);
  }, 60_000);

  it('ask again for the keys a batch read left unprocessed', async () => {
    const { nodes, consumer } = await consumerOnNodes(4);
    const before = proxy().injected().unprocessed;
    const faulted = proxy().faultsInTurn(isOperation('BatchGetItem'), ['unprocessed']);
    const answer = await placement().get(`/allocations/${consumer}`);
    await faulted;
    expect(proxy().injected().unprocessed - before).toBe(1);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.allocations).sort()).toEqual([...nodes].sort());
  }, 60_000);
});
