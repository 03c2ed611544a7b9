/**
 * The use counts of custom resource classes and traits (catalog.ts, in
 * use-count shards): many providers starting and stopping to use one class
 * at once while DynamoDB cancels transactions for conflicts, as it does on
 * an item several transactions write at the same moment (the fault proxy
 * injects it; DynamoDB Local never does); and an entry written before the
 * shards existed.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../../local/dynamodb-local.js';
import { startFaultProxy, type FaultProxy } from '../../../scripts/lib/dynamodb-fault-proxy.js';
import { PlacementClient } from '../../../scripts/lib/placement-client.js';
import { dynamo, tableName } from '../../../shared/storage/client.js';
import { catalogEntryKey, TRAITS_PK } from '../../../shared/storage/items/catalog-entry.js';
import { providerKey } from '../../../shared/storage/items/provider.js';
import { useLocalService } from '../../support/local-service.js';

let database: DynamoDbLocal | undefined;
let proxy: FaultProxy | undefined;
const service = useLocalService(async () => {
  database = await startDynamoDbLocal();
  proxy = await startFaultProxy({ target: database.endpoint, seed: 40 });
  return { PLACEMENT_DYNAMODB_ENDPOINT: proxy.url };
});
afterAll(async () => {
  await proxy?.stop();
  await database?.stop();
});

const placement = () => new PlacementClient(service.url, { version: '1.39', timeoutMs: 300_000 });

async function createProviders(count: number): Promise<string[]> {
  const uuids = Array.from({ length: count }, () => randomUUID());
  for (const uuid of uuids) expect((await placement().post('/resource_providers', { uuid, name: `node-${uuid}` })).status).toBe(200);
  return uuids;
}

async function setInventories(uuid: string, inventories: Record<string, { total: number }>): Promise<number> {
  const { resource_provider_generation } = (await placement().get(`/resource_providers/${uuid}/inventories`)).body;
  return (await placement().put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation, inventories })).status;
}

async function setTraits(uuid: string, traits: string[]): Promise<number> {
  const { generation } = (await placement().get(`/resource_providers/${uuid}`)).body;
  return (await placement().put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: generation, traits })).status;
}

describe('custom class and trait use counts', () => {
  it('count 40 providers starting and stopping to use one class at once, with transactions cancelled for conflicts, and no 5xx', async () => {
    const custom = `CUSTOM_BAREMETAL_${randomUUID().slice(0, 8).toUpperCase()}`;
    expect((await placement().put(`/resource_classes/${custom}`, undefined)).status).toBe(201);
    const nodes = await createProviders(40);
    proxy!.setRates({ transactionConflict: 0.3 }, ['TransactWriteItems']);
    let statuses: number[];
    try {
      statuses = await Promise.all(nodes.map((uuid) => setInventories(uuid, { [custom]: { total: 1 } })));
    } finally {
      proxy!.setRates({});
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(proxy!.injected().transactionConflict).toBeGreaterThan(0);
    expect((await placement().delete(`/resource_classes/${custom}`)).status).toBe(409);

    proxy!.setRates({ transactionConflict: 0.3 }, ['TransactWriteItems']);
    try {
      statuses = await Promise.all(nodes.slice(1).map((uuid) => setInventories(uuid, {})));
    } finally {
      proxy!.setRates({});
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    // One node still has it.
    expect((await placement().delete(`/resource_classes/${custom}`)).status).toBe(409);
    expect(await setInventories(nodes[0]!, {})).toBe(200);
    expect((await placement().delete(`/resource_classes/${custom}`)).status).toBe(204);
    expect((await placement().get(`/resource_classes/${custom}`)).status).toBe(404);
  }, 600_000);

  it('keep counting the uses of a trait written before use-count shards existed', async () => {
    const legacy = `CUSTOM_LEGACY_${randomUUID().slice(0, 8).toUpperCase()}`;
    const [old, recent] = await createProviders(2);
    // As an earlier version stored it: the count on the entry itself, one provider using it.
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: catalogEntryKey(TRAITS_PK, legacy),
        UpdateExpression: 'SET #name = :name, #standard = :false, #refs = :one, #created = :now, #updated = :now',
        ExpressionAttributeNames: { '#name': 'name', '#standard': 'standard', '#refs': 'refs', '#created': 'createdAt', '#updated': 'updatedAt' },
        ExpressionAttributeValues: { ':name': legacy, ':false': false, ':one': 1, ':now': '2025-01-01T00:00:00.000Z' },
      }),
    );
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: providerKey(old!),
        UpdateExpression: 'SET #traits = :traits',
        ExpressionAttributeNames: { '#traits': 'traits' },
        ExpressionAttributeValues: { ':traits': [legacy] },
      }),
    );
    expect(await setTraits(recent!, [legacy])).toBe(200);
    expect((await placement().delete(`/traits/${legacy}`)).status).toBe(409);
    expect(await setTraits(recent!, [])).toBe(200);
    expect((await placement().delete(`/traits/${legacy}`)).status).toBe(409);
    expect(await setTraits(old!, [])).toBe(200);
    expect((await placement().delete(`/traits/${legacy}`)).status).toBe(204);
  }, 120_000);
});
