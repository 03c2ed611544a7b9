/**
 * Crash safety of a PUT aggregates adding hundreds to a sharing provider,
 * whose search entries are written ahead of its commit
 * (shared/storage/entries/outside-commit.ts, addEntriesAhead), and of a PUT
 * traits adding hundreds (their holder entries, storage format 3): the service is killed with
 * SIGKILL at each step (the DynamoDB request of that step held back by a
 * proxy, so that the kill lands exactly there), then started again on the
 * same DynamoDB Local. The provider must list none of the aggregates and no
 * reader may find it through them; once the entries' hold has ended, one
 * sweep leaves no entry of theirs and no cleanup item, and the same PUT then
 * lands whole; and no entry disagrees with its provider at any point
 * (those written ahead are pending until then).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ENTRY_CLEANUPS_PK } from '../../../shared/storage/items/entry-cleanup.js';
import { aggregatePartition, sharingPartition } from '../../../shared/storage/items/search-entry.js';
import { sweepEntryCleanups } from '../../../shared/storage/entries/outside-commit.js';
import { queryAll } from '../../../shared/storage/reads.js';
import { nth } from '../../support/journal-requests.js';
import { useKillableService, useProxiedDynamoDbLocal } from '../../support/proxied-dynamodb-local.js';
import { verifyAllEntries } from '../../support/entries.js';

/** Each request's time in the killed service: entries and counts written ahead are held that long (not the local default's minute), so the test waits less for them. */
const REQUEST_SECONDS = 20;

const AGGREGATES = 300;

type Request = Record<string, any>;
const transactItems = (operation: string, request: Request): Request[] => (operation === 'TransactWriteItems' ? (request.TransactItems as Request[]) : []);
const isCleanupPut = (operation: string, request: Request) => operation === 'PutItem' && request.Item?.pk?.S === ENTRY_CLEANUPS_PK;
const isEntriesAhead = (operation: string, request: Request) => transactItems(operation, request).some((action) => action.Put?.Item?.heldUntil !== undefined);
const isCommit = (operation: string, request: Request) => transactItems(operation, request).some((action) => action.Delete?.Key?.pk?.S === ENTRY_CLEANUPS_PK);

const KILL_POINTS = [
  { step: 'writing the cleanup item (held back)', matches: nth(1, isCleanupPut) },
  { step: 'writing the entries (the third transaction held back)', matches: nth(3, isEntriesAhead) },
  { step: 'committing (the commit held back)', matches: nth(1, isCommit) },
];

describe('a PUT adding hundreds of aggregates killed at each step', () => {
  const { client, killedAt } = useKillableService(useProxiedDynamoDbLocal(), { PLACEMENT_LOCAL_REQUEST_SECONDS: String(REQUEST_SECONDS) });
  const killed: { pool: string; aggregates: string[] }[] = [];

  /** What readers and the provider say: the aggregates it lists, and the members and sharing providers of a few of them. */
  async function seen(pool: string, aggregates: string[]) {
    const placement = client();
    const listed = await placement.get(`/resource_providers/${pool}/aggregates`);
    const members = await placement.get(`/resource_providers?member_of=in:${aggregates.slice(0, 5).join(',')}`);
    const sharing = await placement.get(`/resource_providers?member_of=${aggregates.at(-1)}&required=MISC_SHARES_VIA_AGGREGATE`);
    return {
      listed: listed.body.aggregates.length,
      generation: listed.body.resource_provider_generation as number,
      members: members.body.resource_providers.length,
      sharing: sharing.body.resource_providers.length,
    };
  }

  const traitsKilled: { uuid: string; traits: string[] }[] = [];
  it('a PUT traits adding 150 custom traits, killed at its commit: none of it after a restart, its entries pending', async () => {
    const placement = client();
    const uuid = randomUUID();
    const traits = Array.from({ length: 150 }, (_, n) => `CUSTOM_AHEAD_${n}`);
    for (const trait of traits) expect([201, 204]).toContain((await placement.put(`/traits/${trait}`, undefined)).status);
    expect((await placement.post('/resource_providers', { uuid, name: `holder-${uuid}` })).status).toBe(200);
    await killedAt(nth(1, isCommit), () => placement.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits }));
    expect((await client().get(`/resource_providers/${uuid}/traits`)).body.traits).toEqual([]);
    expect(await verifyAllEntries()).toMatchObject({ disagreements: [], pending: traits.length });
    traitsKilled.push({ uuid, traits });
  }, 300_000);

  for (const point of KILL_POINTS) {
    it(`${point.step}: none of it after a restart`, async () => {
      const placement = client();
      const pool = randomUUID();
      const aggregates = Array.from({ length: AGGREGATES }, () => randomUUID());
      expect((await placement.post('/resource_providers', { uuid: pool, name: `pool-${pool}` })).status).toBe(200);
      expect(
        (await placement.put(`/resource_providers/${pool}/traits`, { resource_provider_generation: 0, traits: ['MISC_SHARES_VIA_AGGREGATE'] })).status,
      ).toBe(200);

      await killedAt(point.matches, () => placement.put(`/resource_providers/${pool}/aggregates`, { resource_provider_generation: 1, aggregates }));
      expect(await seen(pool, aggregates)).toEqual({ listed: 0, generation: 1, members: 0, sharing: 0 });
      killed.push({ pool, aggregates });
    }, 300_000);
  }

  it('once the hold has ended, one sweep leaves nothing of the killed changes, and each PUT sent again lands whole', async () => {
    expect(killed).toHaveLength(KILL_POINTS.length);
    const cleanups = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': ENTRY_CLEANUPS_PK }, ConsistentRead: true });
    // The first kill point died before its cleanup item and its entries were written; the traits' change after.
    expect(cleanups).toHaveLength(KILL_POINTS.length);
    await sleep(Math.max(0, Math.max(...cleanups.map((item) => item.due as number)) - Date.now() + 1_000));

    expect(await sweepEntryCleanups()).toBe(KILL_POINTS.length);
    expect(await verifyAllEntries()).toMatchObject({ disagreements: [], pending: 0 });
    for (const { uuid, traits } of traitsKilled) {
      expect((await client().put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits })).status).toBe(200);
    }
    for (const { pool, aggregates } of killed) {
      const partitions = [...aggregates.map(aggregatePartition), ...aggregates.map(sharingPartition)];
      const left = await Promise.all(partitions.map((pk) => queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } })));
      expect(left.flat().filter((item) => item.uuid === pool)).toEqual([]);

      expect((await client().put(`/resource_providers/${pool}/aggregates`, { resource_provider_generation: 1, aggregates })).status).toBe(200);
      expect(await seen(pool, aggregates)).toEqual({ listed: AGGREGATES, generation: 2, members: 1, sharing: 1 });
    }
    expect(await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': ENTRY_CLEANUPS_PK }, ConsistentRead: true })).toEqual([]);
    expect(await verifyAllEntries()).toMatchObject({ disagreements: [], pending: 0 });
  }, 300_000);
});
