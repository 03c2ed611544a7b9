/**
 * The history's stream reader killed mid-batch (SIGKILL, as a Lambda
 * instance dies) and started again: it reads the batch again from its last
 * checkpoint, and the events the killed one wrote are written again under
 * the same keys, so none is lost and none doubled.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { projectHistoryPk } from '../../shared/storage/items/allocation-event.js';
import { queryAll } from '../../shared/storage/reads.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { useDynamoDbLocalOfItsOwn } from '../support/tables.js';

const PROJECT = 'kill-project';
const CONSUMERS = 600;

describe('the stream reader killed mid-batch', () => {
  useDynamoDbLocalOfItsOwn();
  const services: ServiceProcess[] = [];
  afterAll(async () => {
    for (const service of services) await service.stop();
  });

  // Every service on the file's table, which the test reads directly.
  const start = async (historySeconds: string) => {
    const service = await startServiceProcess({
      dynamoDbEndpoint: process.env.PLACEMENT_DYNAMODB_ENDPOINT,
      environment: { PLACEMENT_LOCAL_HISTORY_SECONDS: historySeconds },
    });
    services.push(service);
    return service;
  };
  const recorded = async () => queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': projectHistoryPk(PROJECT) } });

  it('loses and doubles no event', async () => {
    // 1. A backlog in the stream that nobody has read: a service whose reader waits an hour makes it.
    const writer = await start('3600');
    const api = new PlacementClient(writer.url, { version: '1.39', timeoutMs: 300_000 });
    const node = randomUUID();
    expect((await api.post('/resource_providers', { uuid: node, name: `node-${node}` })).status).toBe(200);
    const inventories = { resource_provider_generation: 0, inventories: { VCPU: { total: 100_000 } } };
    expect((await api.put(`/resource_providers/${node}/inventories`, inventories)).status).toBe(200);
    const consumers = Array.from({ length: CONSUMERS }, () => randomUUID());
    const body = (uuids: string[], generation: number | null, vcpu: number) =>
      Object.fromEntries(
        uuids.map((uuid) => [
          uuid,
          {
            allocations: vcpu === 0 ? {} : { [node]: { resources: { VCPU: vcpu } } },
            project_id: PROJECT,
            user_id: 'u',
            consumer_generation: generation,
            consumer_type: 'INSTANCE',
          },
        ]),
      );
    // Each consumer claims 1 VCPU, then 2; the first half then frees it: 1,500 changes.
    expect((await api.post('/allocations', body(consumers, null, 1))).status).toBe(204);
    expect((await api.post('/allocations', body(consumers, 1, 2))).status).toBe(204);
    const freed = consumers.slice(0, CONSUMERS / 2);
    expect((await api.post('/allocations', body(freed, 2, 0))).status).toBe(204);
    const changes = CONSUMERS * 2 + freed.length;
    await writer.stop();
    expect(await recorded()).toHaveLength(0);

    // 2. A reader killed once it has written some of the events and not all.
    const killed = await start('1');
    let atKill = 0;
    for (const deadline = Date.now() + 300_000; Date.now() < deadline; await sleep(20)) {
      atKill = (await recorded()).length;
      if (atKill > 0) break;
    }
    await killed.kill();
    expect(atKill).toBeGreaterThan(0);
    expect(atKill, `events written when killed: ${atKill} of ${changes}`).toBeLessThan(changes);

    // 3. Started again: it goes on from its last checkpoint, writing what it had written again.
    await start('1');
    let events = await recorded();
    for (const deadline = Date.now() + 300_000; events.length < changes && Date.now() < deadline; await sleep(500)) events = await recorded();
    await sleep(3000);
    events = await recorded();
    expect(events).toHaveLength(changes);
    const perConsumer = new Map<string, number>();
    for (const event of events) perConsumer.set(event.consumer as string, (perConsumer.get(event.consumer as string) ?? 0) + 1);
    expect(consumers.map((uuid) => perConsumer.get(uuid))).toEqual(consumers.map((uuid) => (freed.includes(uuid) ? 3 : 2)));
  });
});
