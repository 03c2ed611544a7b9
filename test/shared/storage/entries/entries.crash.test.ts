/**
 * Crash safety of format 3's entries: the service is killed with SIGKILL at
 * each DynamoDB request of a claim, an inventory change and the deletion of
 * a provider holding 150 traits (its commit, then the removal of its trait
 * entries after it), each held back by a proxy so that the kill lands
 * exactly there, then started again on the same table. The entries must
 * never disagree with the providers: at most entries a committed change
 * still has to remove, counted as pending, until one sweep after its lease.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { sweepEntryCleanups } from '../../../../shared/storage/entries/outside-commit.js';
import { verifyAllEntries } from '../../../support/entries.js';
import { nth } from '../../../support/journal-requests.js';
import { useKillableService, useProxiedDynamoDbLocal } from '../../../support/proxied-dynamodb-local.js';

type Request = Record<string, any>;
const actions = (operation: string, request: Request): Request[] => (operation === 'TransactWriteItems' ? (request.TransactItems as Request[]) : []);
const isClaim = (operation: string, request: Request) => actions(operation, request).some((action) => String(action.Put?.Item?.pk?.S).startsWith('CONSUMER#'));
const isProviderPut = (operation: string, request: Request) => actions(operation, request).some((action) => action.Put?.Item?.sk?.S === 'PROVIDER');
const isProviderDelete = (operation: string, request: Request) => actions(operation, request).some((action) => action.Delete?.Key?.sk?.S === 'PROVIDER');
const isTraitCleanup = (operation: string, request: Request) =>
  actions(operation, request).some((action) => action.ConditionCheck !== undefined) &&
  actions(operation, request).some((action) => String(action.Delete?.Key?.pk?.S).startsWith('TRAIT#'));

const TRAITS = Array.from({ length: 150 }, (_, n) => `CUSTOM_CRASH_${n}`);
const LEASE_MS = 1_000;

describe("format 3's entries, the service killed at each step of a change", () => {
  // A short lease, so that the sweeper may take over a dead request's cleanup a second after it.
  const { client, killedAt } = useKillableService(useProxiedDynamoDbLocal(), { PLACEMENT_CHANGE_LEASE_MS: String(LEASE_MS) });
  const rows: string[] = [];

  async function ok(response: Promise<{ status: number; body: any }>, status: number) {
    const answer = await response;
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    return answer.body;
  }

  /**
   * A compute node with 150 custom traits, set 30 more a change, each in its own commit: entries written ahead of a
   * bigger change would be held against every cleanup for a minute.
   */
  async function host(): Promise<string> {
    const placement = client();
    const uuid = randomUUID();
    await ok(placement.post('/resource_providers', { uuid, name: `host-${uuid}` }), 200);
    const inventories = { VCPU: { total: 8 }, MEMORY_MB: { total: 16384 } };
    await ok(placement.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories }), 200);
    for (const trait of TRAITS) expect([201, 204]).toContain((await placement.put(`/traits/${trait}`, undefined)).status);
    for (let count = 30, generation = 1; count <= TRAITS.length; count += 30, generation++) {
      await ok(placement.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: generation, traits: TRAITS.slice(0, count) }), 200);
    }
    return uuid;
  }

  async function verdict(step: string, pending: (count: number) => boolean) {
    const { disagreements, pending: left, providers, entries } = await verifyAllEntries();
    rows.push(`| ${step} | ${providers} | ${entries} | ${left} | ${disagreements.length} |`);
    expect(disagreements, step).toEqual([]);
    expect(pending(left), `${step}: ${left} pending`).toBe(true);
  }

  const claimBody = (uuid: string) => ({
    allocations: { [uuid]: { resources: { VCPU: 2, MEMORY_MB: 2048 } } },
    project_id: 'p',
    user_id: 'u',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  });

  it('a claim killed at its transaction: nothing of it, entries as before', async () => {
    const uuid = await host();
    await killedAt(nth(1, isClaim), () => client().put(`/allocations/${randomUUID()}`, claimBody(uuid)));
    await verdict('claim, its transaction', (count) => count === 0);
    await ok(client().put(`/allocations/${randomUUID()}`, claimBody(uuid)), 204);
    await verdict('claim, sent again', (count) => count === 0);
  }, 300_000);

  it('an inventory change killed at its transaction: nothing of it, entries as before', async () => {
    const uuid = await host();
    const inventories = { VCPU: { total: 16 }, DISK_GB: { total: 100 } };
    const generation = TRAITS.length / 30 + 1;
    await killedAt(nth(1, isProviderPut), () =>
      client().put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: generation, inventories }),
    );
    await verdict('inventories, their transaction', (count) => count === 0);
    await ok(client().put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: generation, inventories }), 200);
    await verdict('inventories, sent again', (count) => count === 0);
  }, 300_000);

  it('a deletion of a provider with 150 traits killed at its commit and after it: no disagreement, the trait entries pending until swept', async () => {
    const first = await host();
    await killedAt(nth(1, isProviderDelete), () => client().delete(`/resource_providers/${first}`));
    await verdict('deletion, its commit', (count) => count === 0);
    expect((await client().get(`/resource_providers/${first}`)).status).toBe(200);

    const second = await host();
    await killedAt(nth(1, isTraitCleanup), () => client().delete(`/resource_providers/${second}`));
    expect((await client().get(`/resource_providers/${second}`)).status).toBe(404);
    // Its entries are removed in two parts side by side: the one held back is left, the other may have gone before the kill.
    await verdict('deletion, the first removal of its entries after the commit', (count) => count > 0 && count <= TRAITS.length);
    await sleep(LEASE_MS * 2);
    expect(await sweepEntryCleanups()).toBe(1);
    await verdict('deletion, after one sweep', (count) => count === 0);
    console.log(['| killed at | providers | entries | pending | disagreements |', '|---|---|---|---|---|', ...rows].join('\n'));
  }, 300_000);
});
