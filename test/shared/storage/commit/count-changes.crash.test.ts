/**
 * Crash safety of the use counts a provider change moves outside its commit
 * (shared/storage/count-changes.ts): a PUT of 150 custom traits, whose
 * counts go ahead of its commit, and the deletion of one of them after the
 * deletion of a provider holding them, which lowers the counts that deletion
 * owes first. The service is killed with SIGKILL at each step (the DynamoDB
 * request of that step held back by a proxy, so that the kill lands exactly
 * there), then started again on the same DynamoDB Local. The provider must
 * be as before the PUT, and the trait still there; once the count changes
 * are due, one sweep leaves every count equal to the providers that list the
 * name, and no count change.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { totalUses, traits } from '../../../../shared/storage/catalog.js';
import { sweepCountChanges } from '../../../../shared/storage/commit/count-changes.js';
import { COUNT_CHANGES_PK } from '../../../../shared/storage/items/count-change.js';
import { queryAll } from '../../../../shared/storage/reads.js';
import { nth } from '../../../support/journal-requests.js';
import { useKillableService, useProxiedDynamoDbLocal } from '../../../support/proxied-dynamodb-local.js';

/** Each request's time in the killed service: entries and counts written ahead are held that long (not the local default's minute), so the test waits less for them. */
const REQUEST_SECONDS = 20;

const TRAITS = 150;

type Request = Record<string, any>;
const transactItems = (operation: string, request: Request): Request[] => (operation === 'TransactWriteItems' ? (request.TransactItems as Request[]) : []);
const isCountChangePut = (operation: string, request: Request) => operation === 'PutItem' && request.Item?.pk?.S === COUNT_CHANGES_PK;
const isPart = (operation: string, request: Request) =>
  transactItems(operation, request).some((action) => String(action.Put?.Item?.pk?.S ?? '').startsWith('COUNT_PARTS#'));
const isCommit = (operation: string, request: Request) => transactItems(operation, request).some((action) => action.Delete?.Key?.pk?.S === COUNT_CHANGES_PK);

const PUT_KILL_POINTS = [
  { step: 'writing the count change item (held back)', matches: nth(1, isCountChangePut) },
  { step: 'raising the counts (the second part held back)', matches: nth(2, isPart) },
  { step: 'committing (the commit held back)', matches: nth(1, isCommit) },
];

const openCountChanges = () => queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': COUNT_CHANGES_PK }, ConsistentRead: true });

describe('changes moving 150 use counts outside their commit, killed at each step', () => {
  const { client, killedAt } = useKillableService(useProxiedDynamoDbLocal(), { PLACEMENT_LOCAL_REQUEST_SECONDS: String(REQUEST_SECONDS) });
  const killed: { uuid: string; names: string[] }[] = [];

  /** A provider and new custom traits, none of them used yet. */
  async function providerAndTraits(): Promise<{ uuid: string; names: string[] }> {
    const placement = client();
    const uuid = randomUUID();
    expect((await placement.post('/resource_providers', { uuid, name: `node-${uuid}` })).status).toBe(200);
    const names = Array.from({ length: TRAITS }, () => `CUSTOM_${randomUUID().replaceAll('-', '_').toUpperCase()}`);
    for (let n = 0; n < names.length; n += 20) {
      await Promise.all(names.slice(n, n + 20).map(async (name) => expect((await placement.put(`/traits/${name}`, undefined)).status).toBe(201)));
    }
    return { uuid, names };
  }

  /** Each name's use count, summed over its shards; 20 names at a time. */
  async function uses(names: string[]): Promise<number[]> {
    const counts: number[] = [];
    for (let n = 0; n < names.length; n += 20) {
      counts.push(...(await Promise.all(names.slice(n, n + 20).map(async (name) => totalUses((await traits.useCount(name))!)))));
    }
    return counts;
  }

  for (const point of PUT_KILL_POINTS) {
    it(`PUT traits, ${point.step}: none of it after a restart`, async () => {
      const { uuid, names } = await providerAndTraits();
      await killedAt(point.matches, () => client().put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names }));
      const listed = await client().get(`/resource_providers/${uuid}/traits`);
      expect({ traits: listed.body.traits, generation: listed.body.resource_provider_generation }).toEqual({ traits: [], generation: 0 });
      killed.push({ uuid, names });
    }, 300_000);
  }

  it('DELETE of a trait a deleted provider held, lowering what that deletion owes (the second part held back): the trait is still there after a restart', async () => {
    const { uuid, names } = await providerAndTraits();
    expect((await client().put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names })).status).toBe(200);
    expect((await client().delete(`/resource_providers/${uuid}`)).status).toBe(204);
    expect(await uses(names)).toEqual(names.map(() => 1));
    await killedAt(nth(2, isPart), () => client().delete(`/traits/${names[0]}`));
    expect((await client().get(`/resource_providers/${uuid}`)).status).toBe(404);
    expect((await client().get(`/traits/${names[0]}`)).status).toBe(204);
    killed.push({ uuid, names });
  }, 300_000);

  it('once they are due, one sweep counts every name as used by nobody, and the PUTs sent again land whole', async () => {
    expect(killed).toHaveLength(PUT_KILL_POINTS.length + 1);
    const open = await openCountChanges();
    // The first PUT died before its count change item was written; the deletion left its own.
    expect(open).toHaveLength(PUT_KILL_POINTS.length - 1 + 1);
    await sleep(Math.max(0, Math.max(...open.map((item) => item.due as number)) - Date.now() + 1_000));

    expect(await sweepCountChanges()).toBe(open.length);
    expect(await openCountChanges()).toEqual([]);
    for (const { names } of killed) expect(await uses(names)).toEqual(names.map(() => 0));

    for (const { uuid, names } of killed.slice(0, PUT_KILL_POINTS.length)) {
      const put = await client().put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: names });
      expect(put.status).toBe(200);
      expect(put.body.traits).toHaveLength(TRAITS);
      expect(await uses(names)).toEqual(names.map(() => 1));
    }
    expect(await openCountChanges()).toEqual([]);
  }, 300_000);
});
