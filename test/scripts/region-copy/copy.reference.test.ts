/**
 * Copying a region out of the real upstream Placement: a generated region
 * (nested trees, a sharing provider, custom classes and traits, consumers
 * of several projects and types, an over-committed node) loaded into it
 * through its API, migrated into a fresh local service and verified; the
 * same migrate stopped halfway and run again; and the capacity figures,
 * which must be the same from both services, add up to the providers' own
 * usages, and match what the scheduled capacity function computes from the
 * table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishCapacity } from '../../../functions/capacity-metrics.js';
import { PlacementClient } from '../../../scripts/lib/placement-client.js';
import { generateRegion } from '../../../scripts/region-copy/generate-region.js';
import { regionFileLines } from '../../../scripts/region-copy/region-file.js';
import { widenedInventories } from '../../../scripts/region-copy/write-api.js';
import type { RegionCapacity } from '../../../shared/domain/region-capacity.js';
import { useLocalService } from '../../support/local-service.js';
import { startReference } from '../../support/reference.js';
import { startServiceProcess, type ServiceProcess } from '../../support/service-process.js';
import { runTool, verifyLine } from '../../support/tools.js';

const MIGRATE = 'scripts/region-copy/migrate.ts';
const region = generateRegion({ computeNodes: 10, consumers: 80, seed: 21 });
const regionFile = `${[...regionFileLines(region, { created_at: '2024-01-01T00:00:00.000Z', source: 'test', microversion: '1.39' })].join('\n')}\n`;

const { reference, reason } = await startReference();
afterAll(async () => {
  await reference?.stop();
});

describe.skipIf(reference === undefined)(`a region copied from the real Placement${reason ? ` (skipped: ${reason})` : ''}`, () => {
  const ours = useLocalService();
  let resumed: ServiceProcess;
  beforeAll(async () => {
    resumed = await startServiceProcess();
  }, 120_000);
  afterAll(async () => {
    await resumed?.stop();
  });

  it('loads the generated region into the real Placement through its API', async () => {
    expect(region.providers.some((provider) => widenedInventories(provider.inventories, region.providerAllocations.get(provider.uuid) ?? {}))).toBe(true);
    const run = await runTool('scripts/region-copy/import.ts', ['--to', reference!.url, '--concurrency', '4', '--quiet'], { stdin: regionFile });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(verifyLine(run)).toMatchObject({ differences: 0 });
    const upstream = new PlacementClient(reference!.url, { version: '1.39' });
    const nic = region.providers.find((provider) => provider.name.endsWith('-nic'))!;
    expect((await upstream.get(`/resource_providers/${nic.uuid}`)).body).toMatchObject({
      parent_provider_uuid: nic.parent_provider_uuid,
      root_provider_uuid: expect.any(String),
    });
    const untyped = region.consumers.find((consumer) => consumer.consumer_type === null)!;
    expect((await upstream.get(`/allocations/${untyped.uuid}`)).body).toMatchObject({ consumer_type: 'unknown', project_id: untyped.project_id });
  }, 600_000);

  it('migrates it into a fresh local service with 0 differences', async () => {
    const run = await runTool(MIGRATE, ['--from', reference!.url, '--to', ours.url, '--quiet']);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`${region.providers.length} new resource providers, 80 consumers`);
    expect(verifyLine(run)).toMatchObject({ differences: 0 });
  }, 600_000);

  it('finishes an interrupted migrate when run again, writing nothing twice', async () => {
    const plan = await runTool(MIGRATE, ['--from', reference!.url, '--to', resumed.url, '--dry-run', '--quiet']);
    const planned = Number(/\((\d+) write requests\)/.exec(plan.stdout)?.[1]);
    expect(planned).toBeGreaterThan(region.providers.length * 3);
    const half = Math.floor(planned / 2);
    const stopped = await runTool(MIGRATE, ['--from', reference!.url, '--to', resumed.url, '--quiet'], {
      env: { PLACEMENT_COPY_STOP_AFTER_WRITES: String(half) },
    });
    expect(stopped.status).toBe(3);
    expect(stopped.stderr).toContain(`stopped after ${half} writes`);

    const finished = await runTool(MIGRATE, ['--from', reference!.url, '--to', resumed.url, '--quiet']);
    expect(finished.status, finished.stdout).toBe(0);
    expect(verifyLine(finished)).toMatchObject({ differences: 0 });
    const rest = Number(/\((\d+) write requests\)/.exec(finished.stdout)?.[1]);
    // What the stopped run wrote, at least `half`, plus at most the writes still in flight when it stopped (8 at once).
    expect(planned - rest).toBeGreaterThanOrEqual(half);
    expect(planned - rest).toBeLessThanOrEqual(half + 8);
    expect(finished.stdout).toMatch(/already there: [1-9]\d* resource providers, [1-9]\d* consumers; 0 conflicts, 0 failed writes/);
  }, 900_000);

  it('reports the same capacity from both services, adding up to the providers own usages, as the capacity function does', async () => {
    const capacityOf = async (url: string) => {
      const run = await runTool('scripts/capacity/capacity.ts', ['--url', url, '--json']);
      expect(run.status, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as RegionCapacity;
    };
    const upstream = await capacityOf(reference!.url);
    expect(await capacityOf(ours.url)).toEqual(upstream);

    const api = new PlacementClient(reference!.url, { version: '1.39' });
    const used: Record<string, number> = {};
    for (const provider of region.providers) {
      for (const [resourceClass, amount] of Object.entries(
        (await api.get(`/resource_providers/${provider.uuid}/usages`)).body.usages as Record<string, number>,
      )) {
        used[resourceClass] = (used[resourceClass] ?? 0) + amount;
      }
    }
    expect(Object.fromEntries(upstream.classes.map((summary) => [summary.resourceClass, summary.used]))).toEqual(used);
    expect(upstream.providers).toBe(region.providers.length);
    expect(upstream.classes.find((summary) => summary.resourceClass === 'VCPU')!.histogram.at(-1)).toBeGreaterThanOrEqual(1);

    const lines: string[] = [];
    const published = await publishCapacity((line) => lines.push(line), new Date('2024-05-01T12:00:00Z'));
    expect(published.report).toEqual(upstream);
    expect(published.readUnits).toBeGreaterThan(0);
    const records = lines.map((line) => JSON.parse(line));
    const vcpu = records.find((record) => record.ResourceClass === 'VCPU');
    expect(vcpu._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Placement', Dimensions: [['Stage', 'ResourceClass']] });
    expect(vcpu).toMatchObject({ Capacity: expect.any(Number), Used: used.VCPU, Utilisation: expect.any(Number), ProvidersWithFree: expect.any(Number) });
    expect(records.filter((record) => record.record === 'fullest-provider').map((record) => record.rank)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  }, 600_000);
});
