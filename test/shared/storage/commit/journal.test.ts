/**
 * Multi-step changes (shared/storage/journal.ts) while the rest of the
 * service goes on: readers polling a tree during a 200-instance reshape,
 * claims racing one on the same tree, and DynamoDB losing answers and
 * throttling during one (the fault proxy between the service and DynamoDB
 * Local). The crash test is journal.crash.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { reshapeVgpuToChild } from '../../../../scripts/lib/big-changes.js';
import { PlacementClient } from '../../../../admin/placement-client.js';
import { dynamo, tableName } from '../../../../shared/storage/client.js';
import { FENCE_ATTRIBUTE, sweepChanges } from '../../../../shared/storage/commit/journal.js';
import { useServiceBehindFaultProxy } from '../../../support/fault-proxy-service.js';
import { leftovers, reshapeState } from '../../../support/reshape-state.js';

const { service, proxy } = useServiceBehindFaultProxy({ seed: 20 });

const placement = () => new PlacementClient(service.url, { timeoutMs: 300_000 });

async function preparedHost(instances: number) {
  const plan = reshapeVgpuToChild.plan(instances);
  await reshapeVgpuToChild.prepare(placement(), plan);
  return plan;
}

/** How many items of the table carry a fence right now. */
async function fencedNow(): Promise<number> {
  const page = await dynamo().send(
    new ScanCommand({ TableName: tableName(), FilterExpression: 'attribute_exists(#fence)', ExpressionAttributeNames: { '#fence': FENCE_ATTRIBUTE } }),
  );
  return page.Count ?? 0;
}

describe('a multi-step change among other requests', () => {
  it('shows readers polling the tree each answer wholly before or wholly after a 200-instance reshape', async () => {
    const plan = await preparedHost(200);
    // What nova's periodic task and an operator read of this host; a consumer's provider generations are left out,
    // since they come from a second read that may follow the change's commit.
    const paths: [string, string][] = [
      ...[plan.root, plan.child].flatMap((uuid): [string, string][] => [
        [`/resource_providers/${uuid}/inventories`, '1.39'],
        [`/resource_providers/${uuid}/usages`, '1.39'],
        [`/resource_providers/${uuid}/allocations`, '1.0'],
      ]),
      ...plan.consumers.slice(0, 10).map((uuid): [string, string] => [`/allocations/${uuid}`, '1.0']),
    ];
    const readAll = async () =>
      Promise.all(
        paths.map(async ([path, version]) => {
          const response = await placement().get(path, { version });
          expect(response.status, `${path}: ${response.text}`).toBe(200);
          const body = response.body;
          if (path.startsWith('/allocations/')) for (const held of Object.values(body.allocations) as { generation?: number }[]) delete held.generation;
          return JSON.stringify(body);
        }),
      );

    const before = await readAll();
    let done = false;
    const reshape = reshapeVgpuToChild.change(placement(), plan).finally(() => (done = true));
    const polls: string[][] = [];
    let fenceSightings = 0;
    await Promise.all([
      (async () => {
        while (!done) polls.push(await readAll());
      })(),
      (async () => {
        while (!done) fenceSightings += (await fencedNow()) > 0 ? 1 : 0;
      })(),
    ]);
    expect((await reshape).status).toBe(204);
    const after = await readAll();

    expect(fenceSightings, 'the readers polled while the change held its fences').toBeGreaterThan(0);
    let seenBefore = 0;
    let seenAfter = 0;
    for (const poll of polls) {
      poll.forEach((answer, n) => {
        expect([before[n], after[n]], paths[n]![0]).toContain(answer);
        if (answer === before[n] && answer !== after[n]) seenBefore++;
        if (answer === after[n] && answer !== before[n]) seenAfter++;
      });
    }
    console.log(`${polls.length} polls of ${paths.length} reads: ${seenBefore} answers as before, ${seenAfter} as after, fences seen ${fenceSightings} times`);
    expect(await reshapeState(placement(), plan)).toBe('there');
  }, 600_000);

  it.each(['with the reshape', 'once the reshape holds its fences'])(
    'keeps every provider’s usage the sum of its allocations when claims start %s on the same tree',
    async (start) => {
      const plan = await preparedHost(200);
      const claims = Array.from({ length: 40 }, () => randomUUID());
      const statuses: number[] = [];
      let done = false;
      const reshape = reshapeVgpuToChild.change(placement(), plan).finally(() => (done = true));
      if (start !== 'with the reshape') while (!done && (await fencedNow()) === 0);
      await Promise.all(
        Array.from({ length: 4 }, async (_, worker) => {
          for (let n = worker; n < claims.length && (!done || n < 8); n += 4) {
            const response = await placement().put(
              `/allocations/${claims[n]}`,
              { allocations: { [plan.root]: { resources: { VCPU: 1, MEMORY_MB: 512 } } }, project_id: 'race', user_id: 'race', consumer_generation: null },
              { version: '1.28' },
            );
            statuses.push(response.status);
          }
        }),
      );
      const reshaped = (await reshape).status;
      // A claim that moved the root's generation first makes the reshape's provider generation stale: upstream's 409, as for any race.
      expect([204, 409]).toContain(reshaped);
      if (start !== 'with the reshape') expect(reshaped).toBe(204);
      expect(statuses.every((status) => status === 204 || status === 409)).toBe(true);
      // reshapeState checks usage against the allocations of both providers.
      expect(await reshapeState(placement(), plan)).toBe(reshaped === 204 ? 'there' : 'absent');
      console.log(
        `claims ${start}: reshape ${reshaped}; ${statuses.filter((s) => s === 204).length} claims taken, ${statuses.filter((s) => s === 409).length} refused 409`,
      );
    },
    600_000,
  );

  it('lands a reshape wholly or not at all when DynamoDB loses answers and throttles during it', async () => {
    const outcomes: string[] = [];
    // A change sends few requests that can lose their answer (tens: writes go 100 a transaction), so rounds go on,
    // up to 12, until at least one answer was lost.
    const lostAnswers = () => proxy().injected().lostWrite + proxy().injected().lostCommit;
    for (let round = 0; round < 3 || (lostAnswers() === 0 && round < 12); round++) {
      const plan = await preparedHost(100);
      proxy().setRates({ lostWrite: 0.05, lostCommit: 0.05, throttle: 0.02, reset: 0.02, serverError: 0.02 });
      let status: number;
      try {
        status = (await reshapeVgpuToChild.change(placement(), plan)).status;
      } finally {
        proxy().setRates({});
      }
      // 204: there; 409 (a lost answer made a retry meet its own earlier work): absent; 503: either, but wholly.
      expect([204, 409, 503]).toContain(status);
      const found = await reshapeState(placement(), plan);
      if (status === 204) expect(found).toBe('there');
      else if (status === 409) expect(found).toBe('absent');
      else expect(['there', 'absent']).toContain(found);
      const deadline = Date.now() + 60_000;
      while ((await leftovers()).openChanges > 0 && Date.now() < deadline) {
        await sweepChanges();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
      expect(await reshapeState(placement(), plan)).toBe(found);
      outcomes.push(`${status} ${found}`);
    }
    const injected = proxy().injected();
    expect(lostAnswers()).toBeGreaterThan(0);
    console.log(`outcomes: ${outcomes.join(', ')}; injected: ${JSON.stringify(injected)}`);
  }, 900_000);
});
