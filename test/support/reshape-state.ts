/**
 * What the tests of multi-step changes check after a vGPU reshape
 * (scripts/lib/big-changes.ts) was interrupted, raced or faulted: whether it
 * is wholly there or wholly absent, and whether anything of a change is left
 * in the table.
 */
import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import type { PlacementClient } from '../../admin/placement-client.js';
import { dynamo, tableName } from '../../shared/storage/client.js';
import { FENCE_ATTRIBUTE } from '../../shared/storage/commit/journal.js';
import { STAGED_WRITE_TYPE } from '../../shared/storage/items/change.js';
import { TYPE_ATTRIBUTE } from '../../shared/storage/items/fields.js';

/**
 * Whether the vGPU reshape of this host is wholly there, wholly absent, or
 * (a failure) anything else; asserts on the way that each provider's usage
 * is the sum of what its consumers hold.
 */
export async function reshapeState(
  placement: PlacementClient,
  { root, child, consumers }: { root: string; child: string; consumers: string[] },
): Promise<string> {
  const get = async (path: string) => {
    const response = await placement.get(path, { version: '1.39' });
    expect(response.status, `${path}: ${response.text}`).toBe(200);
    return response.body;
  };
  const rootClasses = Object.keys((await get(`/resource_providers/${root}/inventories`)).inventories)
    .sort()
    .join(',');
  const childClasses = Object.keys((await get(`/resource_providers/${child}/inventories`)).inventories).join(',');
  const where = new Set<string>();
  for (const consumer of consumers) {
    const { allocations } = await get(`/allocations/${consumer}`);
    where.add(
      allocations[child]?.resources.VGPU === 1 && allocations[root]?.resources.VGPU === undefined
        ? 'child'
        : allocations[root]?.resources.VGPU === 1
          ? 'root'
          : 'lost',
    );
  }
  // Each provider's usage is the sum of what its consumers hold.
  for (const provider of [root, child]) {
    const held: Record<string, number> = {};
    for (const { resources } of Object.values((await get(`/resource_providers/${provider}/allocations`)).allocations) as {
      resources: Record<string, number>;
    }[]) {
      for (const [resourceClass, amount] of Object.entries(resources)) held[resourceClass] = (held[resourceClass] ?? 0) + amount;
    }
    expect((await get(`/resource_providers/${provider}/usages`)).usages).toEqual(expect.objectContaining(held));
  }
  const state = `root ${rootClasses}; child ${childClasses}; vGPUs on ${[...where].sort().join(' and ')}`;
  if (state === 'root MEMORY_MB,VCPU,VGPU; child ; vGPUs on root') return 'absent';
  if (state === 'root MEMORY_MB,VCPU; child VGPU; vGPUs on child') return 'there';
  return state;
}

/** Every item of the table, a page at a time, read straight from it (this process's DynamoDB endpoint). */
async function eachItem(visit: (item: Record<string, unknown>) => void): Promise<void> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo().send(new ScanCommand({ TableName: tableName(), ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) visit(item);
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Items still fenced, and changes not finished. */
export async function leftovers(): Promise<{ fenced: number; openChanges: number }> {
  let fenced = 0;
  let openChanges = 0;
  await eachItem((item) => {
    if (item[FENCE_ATTRIBUTE] !== undefined) fenced++;
    if (item.pk === 'CHANGES' && item.finished !== true) openChanges++;
  });
  return { fenced, openChanges };
}

/**
 * How many items holding state name `name` anywhere: a finished change's
 * staged writes stay until their TTL, the change's record and not the state.
 */
export async function stateItemsNaming(name: string): Promise<number> {
  let count = 0;
  await eachItem((item) => {
    if (item[TYPE_ATTRIBUTE] === STAGED_WRITE_TYPE) return;
    if (JSON.stringify(item, (_key, value) => (value instanceof Set ? [...value] : value)).includes(name)) count++;
  });
  return count;
}

/** Writes a consumer's allocations again as they read now (a claim that changes nothing but the consumer's generation). */
export async function rewriteConsumer(placement: PlacementClient, consumer: string) {
  const { allocations, project_id, user_id, consumer_generation } = (await placement.get(`/allocations/${consumer}`, { version: '1.28' })).body;
  const resources = Object.fromEntries(
    Object.entries(allocations as Record<string, { resources: unknown }>).map(([uuid, { resources }]) => [uuid, { resources }]),
  );
  return placement.put(`/allocations/${consumer}`, { allocations: resources, project_id, user_id, consumer_generation }, { version: '1.28' });
}

/**
 * After an interrupted reshape: a new instance on the host, then a write of an
 * instance the change holds, each refused (409) while the dead writer's lease
 * lasts and then taken (204). The seconds it took (at most a minute, else it fails).
 */
export async function claimsTakenAgain(placement: PlacementClient, plan: { root: string; consumers: string[] }): Promise<number> {
  const claiming = Date.now();
  const instance = randomUUID();
  const newInstance = () =>
    placement.put(
      `/allocations/${instance}`,
      { allocations: { [plan.root]: { resources: { VCPU: 1, MEMORY_MB: 512 } } }, project_id: 'crash', user_id: 'crash', consumer_generation: null },
      { version: '1.28' },
    );
  for (const claim of [newInstance, () => rewriteConsumer(placement, plan.consumers[0]!)]) {
    let status = 0;
    while (status !== 204 && Date.now() - claiming < 60_000) {
      status = (await claim()).status;
      if (status !== 204) expect(status).toBe(409);
    }
    expect(status).toBe(204);
  }
  return (Date.now() - claiming) / 1000;
}
