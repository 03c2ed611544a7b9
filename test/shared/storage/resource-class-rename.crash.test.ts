/**
 * Crash safety of renaming a custom class in use (shared/storage/resource-class-rename.ts),
 * a multi-step change over 40 providers and 120 consumers: the service is
 * killed with SIGKILL at each step of the journal (the DynamoDB request of
 * that step held back by the fault proxy), then started again on the same
 * DynamoDB Local, as the current code or as the previous release (which runs
 * beside it during an upgrade, on a table at its format). The rename must
 * read wholly there or wholly absent at once, the class take claims again
 * under the name it has, and once swept no item may name the other name
 * (nor, at format 3, any entry disagree with its provider).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { renameClassInUse } from '../../../scripts/lib/big-changes.js';
import { PlacementClient } from '../../../admin/placement-client.js';
import { isApply, isCommit, isFence, isFinish, isStaging, nth } from '../../support/journal-requests.js';
import { leftovers, stateItemsNaming } from '../../support/reshape-state.js';
import { previousReleaseSources } from '../../support/release.js';
import { verifyAllEntries } from '../../support/entries.js';
import { putItem, tableName } from '../../../shared/storage/dynamodb.js';
import { encodeStorageFormat } from '../../../shared/storage/items/storage-format.js';
import { startServiceProcess, type ServiceProcess } from '../../support/service-process.js';
import { useProxiedDynamoDbLocal } from '../../support/proxied-dynamodb-local.js';

const PROVIDERS = 40;

// A matcher counts the requests it has seen: each case takes a fresh one.
const KILL_POINTS = [
  { step: 'staging (second batch of staged writes)', matches: () => nth(2, isStaging), outcome: 'absent' },
  { step: 'fencing (100th fence)', matches: () => nth(100, isFence), outcome: 'absent' },
  { step: 'committing (the commit itself held back)', matches: () => nth(1, isCommit), outcome: 'absent' },
  { step: 'just committed (first write applied held back)', matches: () => nth(1, isApply), outcome: 'there' },
  { step: 'applying (200th write applied)', matches: () => nth(200, isApply), outcome: 'there' },
  { step: 'finishing (marking it finished held back)', matches: () => nth(1, isFinish), outcome: 'there' },
] as const;

type Plan = ReturnType<typeof renameClassInUse.plan>;

/** Whether the rename is wholly there, wholly absent, or (a failure) anything else, as the API shows it. */
async function renameState(placement: PlacementClient, plan: Plan): Promise<string> {
  const names = new Set<string>();
  for (const name of [plan.from, plan.to]) {
    if ((await placement.get(`/resource_classes/${name}`, { version: '1.6' })).status === 200) names.add(`class ${name}`);
  }
  for (const uuid of plan.providers) {
    const { inventories } = (await placement.get(`/resource_providers/${uuid}/inventories`, { version: '1.6' })).body;
    const { usages } = (await placement.get(`/resource_providers/${uuid}/usages`, { version: '1.6' })).body;
    for (const name of [...Object.keys(inventories), ...Object.keys(usages)]) if (name !== 'VCPU') names.add(`provider ${name}`);
  }
  for (const consumer of plan.consumers) {
    const { allocations } = (await placement.get(`/allocations/${consumer}`, { version: '1.28' })).body;
    for (const { resources } of Object.values(allocations) as { resources: Record<string, number> }[]) {
      for (const name of Object.keys(resources)) if (name !== 'VCPU') names.add(`consumer ${name}`);
    }
  }
  const only = (name: string) => [`class ${name}`, `consumer ${name}`, `provider ${name}`].join(', ');
  const state = [...names].sort().join(', ');
  if (state === only(plan.from)) return 'absent';
  if (state === only(plan.to)) return 'there';
  return state;
}

const release = previousReleaseSources();

describe('renaming a class held by 40 providers and 120 consumers, killed at each step', () => {
  const table = useProxiedDynamoDbLocal();
  let service: ServiceProcess | undefined;

  // A case that failed leaves its service running: its sweeps would reach the next case's proxy.
  afterEach(async () => {
    await service?.stop();
    service = undefined;
  });

  const restarts = [
    { by: 'the current code', entryPoint: undefined },
    { by: `release ${release.version} (${release.commit.slice(0, 7)})`, entryPoint: release.entryPoint },
  ];
  // The previous release takes over a change killed before its commit point and one killed after it, on a table at its
  // own format (2); the current code's cases run first, at format 3, whose entries must then agree with the providers.
  const cases = [
    ...KILL_POINTS.map((point) => ({ point, restart: restarts[0]!, format: 3 })),
    ...[KILL_POINTS[1], KILL_POINTS[4]].map((point) => ({ point, restart: restarts[1]!, format: 2 })),
  ];
  for (const { point, restart, format } of cases) {
    {
      it(`${point.step}, restarted as ${restart.by}: wholly ${point.outcome}, claims taken again, nothing of the other name left once swept`, async () => {
        // The table the first case's service created is at format 3; the release's cases come last, on it at the release's.
        if (format === 2) await putItem({ TableName: tableName(), Item: encodeStorageFormat({ format }) });
        // The services sweep every 2 s, so that what no request touches is finished within the test.
        const environment = { PLACEMENT_LOCAL_SWEEP_SECONDS: '2' };
        service = await startServiceProcess({ dynamoDbEndpoint: table.proxy.url, environment });
        let placement = new PlacementClient(service.url, { timeoutMs: 300_000 });
        const plan = renameClassInUse.plan(PROVIDERS);
        await renameClassInUse.prepare(placement, plan);
        expect(await renameState(placement, plan)).toBe('absent');

        const held = table.proxy.holdNext(point.matches());
        const rename = renameClassInUse.change(placement, plan).catch((error: Error) => error);
        await held;
        await service.kill();
        expect(await rename).toBeInstanceOf(Error);

        service = await startServiceProcess({ dynamoDbEndpoint: table.proxy.url, environment, entryPoint: restart.entryPoint });
        placement = new PlacementClient(service.url, { timeoutMs: 300_000 });
        expect(await renameState(placement, plan)).toBe(point.outcome);

        // A new consumer of the class under the name it has: refused (409) while the dead writer's lease lasts, then taken.
        const [name, other] = point.outcome === 'there' ? [plan.to, plan.from] : [plan.from, plan.to];
        const claim = () =>
          placement.put(
            `/allocations/${randomUUID()}`,
            { allocations: { [plan.providers[0]!]: { resources: { [name]: 1 } } }, project_id: 'crash', user_id: 'crash', consumer_generation: null },
            { version: '1.28' },
          );
        const claiming = Date.now();
        let status = 0;
        while (status !== 204 && Date.now() - claiming < 60_000) {
          status = (await claim()).status;
          if (status !== 204) expect(status).toBe(409);
        }
        expect(status).toBe(204);

        const deadline = Date.now() + 120_000;
        while ((await leftovers()).openChanges > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1000));
        expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
        expect(await stateItemsNaming(other)).toBe(0);
        expect(await renameState(placement, plan)).toBe(point.outcome);
        if (format === 3) expect(await verifyAllEntries()).toMatchObject({ disagreements: [], pending: 0 });
      }, 600_000);
    }
  }
});
