/**
 * A multi-step change (shared/storage/commit/journal.ts) started by one release and
 * finished by the other, as during an upgrade or a rollback: the previous
 * release (CHANGELOG.md, test/support/release.ts) and this checkout's code on
 * one DynamoDB Local table the release created (at the release's format). The
 * service running a 200-instance reshape is killed with SIGKILL at a step
 * (its DynamoDB request held back by a proxy, so that the kill lands exactly
 * there); only the other version runs after it. The reshape must read wholly
 * there or wholly absent through it, the host must take claims again, and the
 * other version's own sweeper (no sweep from this test) must leave nothing of
 * the change in the table; both versions then read the same outcome.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reshapeVgpuToChild } from '../../scripts/lib/big-changes.js';
import { startFaultProxy, type FaultProxy } from '../../scripts/lib/dynamodb-fault-proxy.js';
import { PlacementClient } from '../../admin/placement-client.js';
import { isApply, isFence, nth } from '../support/journal-requests.js';
import { previousReleaseSources } from '../support/release.js';
import { claimsTakenAgain, leftovers, reshapeState } from '../support/reshape-state.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const INSTANCES = 200;

const KILL_POINTS = [
  { step: 'fencing (200th fence)', matches: () => nth(200, isFence), outcome: 'absent' },
  { step: 'applying (300th write applied)', matches: () => nth(300, isApply), outcome: 'there' },
] as const;

describe('a 200-instance reshape started by one release, killed, and finished by the other', () => {
  const release = previousReleaseSources();
  const versions = {
    release: { name: `release ${release.version}`, entryPoint: release.entryPoint },
    new: { name: 'the new code', entryPoint: undefined },
  };
  let proxy: FaultProxy;
  const running = new Set<ServiceProcess>();
  const rows: string[] = [];

  /** A version on the shared table; its sweeper every second, so that it alone finishes what the other left. */
  async function start(version: keyof typeof versions): Promise<{ service: ServiceProcess; placement: PlacementClient }> {
    const service = await startServiceProcess({
      dynamoDbEndpoint: proxy.url,
      entryPoint: versions[version].entryPoint,
      environment: { PLACEMENT_LOCAL_SWEEP_SECONDS: '1' },
    });
    running.add(service);
    return { service, placement: new PlacementClient(service.url, { timeoutMs: 300_000 }) };
  }
  async function stop(service: ServiceProcess, how: 'stop' | 'kill' = 'stop') {
    await service[how]();
    running.delete(service);
  }

  beforeAll(async () => {
    // The file's table, on the worker's DynamoDB Local: the test's own reads go to it directly, the services' through the proxy.
    proxy = await startFaultProxy({ target: process.env.PLACEMENT_DYNAMODB_ENDPOINT! });
    // The release creates the table, as in a region that runs it: at the release's format, which both versions write until finalized.
    const { service, placement } = await start('release');
    // The old code, not a copy of the new: it says its release (1.0.0 predates the upgrade routes).
    const upgrade = await placement.get('/upgrade');
    if (release.version === '1.0.0') expect(upgrade.status).toBe(404);
    else expect(upgrade.body.release).toBe(release.version);
    await stop(service);
  }, 600_000);
  afterAll(async () => {
    await Promise.all([...running].map((service) => service.stop()));
    await proxy?.stop();
    console.log(['| started by | killed while | finished by | found after | claims taken again after |', '|---|---|---|---|---|', ...rows].join('\n'));
  });

  const directions = [
    { starter: 'release', finisher: 'new' },
    { starter: 'new', finisher: 'release' },
  ] as const;
  for (const { starter, finisher } of directions) {
    for (const point of KILL_POINTS) {
      it(`started by ${starter}, killed at ${point.step}, finished by ${finisher}: wholly ${point.outcome}, nothing left`, async () => {
        let { service, placement } = await start(starter);
        const plan = reshapeVgpuToChild.plan(INSTANCES);
        await reshapeVgpuToChild.prepare(placement, plan);
        expect(await reshapeState(placement, plan)).toBe('absent');

        const held = proxy.holdNext(point.matches());
        const reshape = reshapeVgpuToChild.change(placement, plan).catch((error: Error) => error);
        await held;
        await stop(service, 'kill');
        expect(await reshape).toBeInstanceOf(Error);

        ({ service, placement } = await start(finisher));
        expect(await reshapeState(placement, plan)).toBe(point.outcome);
        const seconds = await claimsTakenAgain(placement, plan);
        expect(seconds).toBeLessThan(30);

        // The finisher's sweeper finishes what no request touched.
        const deadline = Date.now() + 60_000;
        while ((await leftovers()).openChanges > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
        expect(await leftovers()).toEqual({ fenced: 0, openChanges: 0 });
        expect(await reshapeState(placement, plan)).toBe(point.outcome);
        await stop(service);

        // And the version that started it reads the same outcome.
        const again = await start(starter);
        expect(await reshapeState(again.placement, plan)).toBe(point.outcome);
        await stop(again.service);
        rows.push(`| ${versions[starter].name} | ${point.step} | ${versions[finisher].name} | wholly ${point.outcome} | ${seconds.toFixed(1)} s |`);
      }, 900_000);
    }
  }
});
