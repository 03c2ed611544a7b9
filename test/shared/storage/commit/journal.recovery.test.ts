/**
 * What requests and the sweeper make of a multi-step change whose writer
 * gave up half way (DynamoDB failing every write from one step on, through
 * the fault proxy), in this process, with a short lease: a pending change
 * reads as absent and is rolled back by the next writer once its lease
 * passed; a committed one reads as there at once and is rolled forward by
 * the sweeper; a fence whose change left no head is lifted by whoever meets
 * it. The same after a real SIGKILL is journal.crash.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { reshapeVgpuToChild } from '../../../../scripts/lib/big-changes.js';
import { PlacementClient } from '../../../../admin/placement-client.js';
import { getProvider } from '../../../../shared/storage/providers.js';
import { FENCE_ATTRIBUTE, resolveFences, sweepChanges } from '../../../../shared/storage/commit/journal.js';
import { handler as changeSweeper } from '../../../../functions/change-sweeper.js';
import { dynamo, tableName } from '../../../../shared/storage/client.js';
import { providerKey, providerPartition } from '../../../../shared/storage/items/provider.js';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Item } from '../../../../shared/storage/items/fields.js';
import { useServiceBehindFaultProxy } from '../../../support/fault-proxy-service.js';
import { isApply, isFence, nth } from '../../../support/journal-requests.js';
import { leftovers, reshapeState, rewriteConsumer } from '../../../support/reshape-state.js';

// Long enough that a reader or resolveFences, on a machine busy with other test files, still meets a committed change
// within its lease (at 1.5 s, a loaded run rolled it forward first: "expected 0 to be greater than 0").
const LEASE_MS = 6000;
const WRITES = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];

// Few and quick attempts, so that a writer facing a failing DynamoDB gives up soon; no periodic sweep by the service, so
// that the sweeps the tests count are theirs.
const { service, proxy } = useServiceBehindFaultProxy(
  { seed: 30 },
  { PLACEMENT_CHANGE_LEASE_MS: String(LEASE_MS), PLACEMENT_DYNAMODB_MAX_ATTEMPTS: '1', PLACEMENT_RETRIES: '2', PLACEMENT_LOCAL_SWEEP_SECONDS: '0' },
);

const placement = () => new PlacementClient(service.url, { timeoutMs: 300_000 });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A provider's partition (the provider and its allocations) as DynamoDB holds it, fences and all, in key order. */
async function rawPartition(provider: string): Promise<Item[]> {
  const { Items = [] } = await dynamo().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': providerPartition(provider) },
      ConsistentRead: true,
    }),
  );
  return Items;
}

async function preparedHost(instances: number) {
  const plan = reshapeVgpuToChild.plan(instances);
  await reshapeVgpuToChild.prepare(placement(), plan);
  return plan;
}

describe('a multi-step change whose writer gave up half way', () => {
  it('reads as absent while pending, and the next writer rolls it back once its lease passed', async () => {
    const plan = await preparedHost(120);
    const failing = proxy().faultFrom(nth(100, isFence), { serverError: 1 }, WRITES);
    const response = await reshapeVgpuToChild.change(placement(), plan);
    await failing;
    proxy().setRates({});
    expect(response.status).toBe(503);
    expect((await leftovers()).fenced).toBeGreaterThan(0);
    expect(await reshapeState(placement(), plan)).toBe('absent');

    // A write of a consumer the dead change holds: it waits out the lease, then rolls the change back and lands.
    await pause(LEASE_MS);
    expect((await rewriteConsumer(placement(), plan.consumers[0]!)).status).toBe(204);
    expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
    expect(await reshapeState(placement(), plan)).toBe('absent');
  }, 600_000);

  it('reads as there once committed, and the sweeper rolls it forward once its lease passed', async () => {
    const plan = await preparedHost(120);
    const failing = proxy().faultFrom(nth(1, isApply), { serverError: 1 }, WRITES);
    const response = await reshapeVgpuToChild.change(placement(), plan);
    await failing;
    proxy().setRates({});
    // The commit point was passed: the change stands, whatever its writer could not finish.
    expect(response.status).toBe(204);
    expect((await leftovers()).fenced).toBeGreaterThan(0);
    // A reader meeting the change within its lease writes only the item it reads.
    const { allocations } = (await placement().get(`/allocations/${plan.consumers[0]}`)).body;
    expect(allocations[plan.child].resources).toEqual({ VGPU: 1 });
    expect((await leftovers()).fenced).toBeGreaterThan(0);

    // The scheduled sweeper function, as the stack runs it every minute.
    await pause(LEASE_MS);
    expect(await changeSweeper()).toEqual({ finished: 1, entryCleanups: 0, countChanges: 0, backlogSeconds: 0 });
    expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
    expect(await reshapeState(placement(), plan)).toBe('there');
  }, 600_000);

  it('reads wholly as after a committed change a read that met some of its targets before they were fenced', async () => {
    const plan = await preparedHost(120);
    const unfenced = await rawPartition(plan.root);
    const failing = proxy().faultFrom(nth(1, isApply), { serverError: 1 }, WRITES);
    expect((await reshapeVgpuToChild.change(placement(), plan)).status).toBe(204);
    await failing;
    proxy().setRates({});
    // One read as fencing can leave it: the provider already fenced, its allocations not yet (fencing precedes the
    // commit point); by the time the read looks at the change's head, the change has committed.
    const [provider, ...allocations] = await rawPartition(plan.root);
    expect(provider![FENCE_ATTRIBUTE]).toBeDefined();
    const read = [provider!, ...unfenced.slice(1)];
    expect(read.length).toBe(allocations.length + 1);
    const resolved = await resolveFences(read, () => rawPartition(plan.root));

    await pause(LEASE_MS);
    expect(await sweepChanges()).toBe(1);
    expect(resolved).toEqual(await rawPartition(plan.root));
  }, 600_000);

  it('rolls back a pending change the sweeper finds with its lease passed', async () => {
    const plan = await preparedHost(120);
    const failing = proxy().faultFrom(nth(50, isFence), { serverError: 1 }, WRITES);
    expect((await reshapeVgpuToChild.change(placement(), plan)).status).toBe(503);
    await failing;
    proxy().setRates({});
    expect(await sweepChanges()).toBe(0);
    await pause(LEASE_MS);
    expect(await sweepChanges()).toBe(1);
    expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
    expect(await reshapeState(placement(), plan)).toBe('absent');
  }, 600_000);

  it('lifts a fence whose change left no head', async () => {
    const uuid = randomUUID();
    expect((await placement().post('/resource_providers', { uuid, name: `orphan-${uuid}` })).status).toBe(201);
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: providerKey(uuid),
        UpdateExpression: 'SET #fence = :change',
        ExpressionAttributeNames: { '#fence': FENCE_ATTRIBUTE },
        ExpressionAttributeValues: { ':change': randomUUID() },
      }),
    );
    expect((await placement().get(`/resource_providers/${uuid}`)).status).toBe(200);
    expect(await getProvider(uuid)).toMatchObject({ uuid, generation: 0 });
    expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
  }, 60_000);
});
