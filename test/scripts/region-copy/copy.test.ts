/**
 * Export, import and migrate between local services: a generated region
 * imported through the API, exported, imported into an empty service and
 * verified; a second copy writes nothing; different data under the same
 * uuid is reported, not overwritten, unless --overwrite.
 * (From the real Placement: region-copy-reference.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRegion } from '../../../scripts/region-copy/generate-region.js';
import { readRegionFile, regionFileLines } from '../../../scripts/region-copy/region-file.js';
import { compareRegions } from '../../../scripts/region-copy/verify.js';
import { PlacementClient } from '../../../scripts/lib/placement-client.js';
import { useLocalService } from '../../support/local-service.js';
import { startServiceProcess, type ServiceProcess } from '../../support/service-process.js';
import { runTool, verifyLine } from '../../support/tools.js';

const MIGRATE = 'scripts/region-copy/migrate.ts';
const IMPORT = 'scripts/region-copy/import.ts';
const EXPORT = 'scripts/region-copy/export.ts';

const region = generateRegion({ computeNodes: 8, consumers: 60, seed: 11 });
const regionFile = `${[...regionFileLines(region, { created_at: '2024-01-01T00:00:00.000Z', source: 'test', microversion: '1.39' })].join('\n')}\n`;

async function* lines(text: string) {
  yield* text.split('\n');
}

describe('region files and copies between local services', () => {
  const source = useLocalService();
  let target: ServiceProcess;
  beforeAll(async () => {
    target = await startServiceProcess();
  }, 120_000);
  afterAll(async () => {
    await target?.stop();
  });

  it('imports a generated region through the API and verifies the service against the file', async () => {
    const run = await runTool(IMPORT, ['--to', source.url, '--quiet'], { stdin: regionFile });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`wrote: 1 resource classes, ${region.traits.length} traits, ${region.providers.length} new resource providers, 60 consumers`);
    expect(run.stdout).toContain('0 conflicts, 0 failed writes');
    expect(verifyLine(run)).toEqual({ checked: expect.any(Number), differences: 0 });
    expect(verifyLine(run)!.checked).toBeGreaterThan(region.providers.length * 7 + 60);
  }, 300_000);

  it('exports it, imports the export into an empty service, and the two verify with 0 differences', async () => {
    const exported = await runTool(EXPORT, ['--from', source.url, '--quiet']);
    expect(exported.status, exported.stderr).toBe(0);
    expect(exported.stdout.split('\n')[0]).toMatch(/^\{"format":"openstack-placement-region","version":1,/);
    const { region: read } = await readRegionFile(lines(exported.stdout));
    expect(compareRegions(region, read).differences).toEqual([]);

    const imported = await runTool(IMPORT, ['--to', target.url, '--quiet'], { stdin: exported.stdout });
    expect(imported.status, imported.stdout + imported.stderr).toBe(0);
    const verified = await runTool(MIGRATE, ['--from', source.url, '--to', target.url, '--verify-only', '--quiet']);
    expect(verified.status, verified.stdout).toBe(0);
    expect(verifyLine(verified)).toMatchObject({ differences: 0 });
  }, 300_000);

  it('copies nothing a second time', async () => {
    const again = await runTool(MIGRATE, ['--from', source.url, '--to', target.url, '--quiet']);
    expect(again.status, again.stdout).toBe(0);
    expect(again.stdout).toContain(
      `wrote: 0 resource classes, 0 traits, 0 new resource providers, 0 consumers (0 write requests); already there: ${region.providers.length} resource providers, 60 consumers; 0 conflicts, 0 failed writes`,
    );
  }, 300_000);

  it('reports different data under the same uuid and leaves it, unless --overwrite', async () => {
    const api = new PlacementClient(target.url, { version: '1.39' });
    const consumer = region.consumers.find((c) => c.consumer_type === 'INSTANCE')!;
    const held = await api.get(`/allocations/${consumer.uuid}`);
    const moved = {
      ...held.body,
      project_id: 'another-project',
      allocations: Object.fromEntries(Object.entries(consumer.allocations).map(([rp, resources]) => [rp, { resources }])),
    };
    expect((await api.put(`/allocations/${consumer.uuid}`, moved)).status).toBe(204);
    const provider = region.providers.find((p) => p.traits.length > 1)!;
    const { generation } = (await api.get(`/resource_providers/${provider.uuid}`)).body;
    expect(
      (await api.put(`/resource_providers/${provider.uuid}/traits`, { resource_provider_generation: generation, traits: provider.traits.slice(1) })).status,
    ).toBe(200);

    const dryRun = await runTool(MIGRATE, ['--from', source.url, '--to', target.url, '--dry-run', '--quiet']);
    expect(dryRun.status).toBe(1);
    const kept = await runTool(MIGRATE, ['--from', source.url, '--to', target.url, '--quiet']);
    for (const run of [dryRun, kept]) {
      expect(run.stdout).toContain(
        `conflict: consumer ${consumer.uuid}: project_id "${consumer.project_id}" vs "another-project" (kept the target's; --overwrite replaces it)`,
      );
      expect(run.stdout).toContain(`conflict: resource provider ${provider.uuid} (${provider.name}): traits differ`);
    }
    expect(kept.status).toBe(1);
    expect(kept.stdout).toMatch(new RegExp(`^consumer ${consumer.uuid}: source vs target: project_id `, 'm'));
    expect(verifyLine(kept)).toMatchObject({ differences: 2 });
    expect((await api.get(`/allocations/${consumer.uuid}`)).body.project_id).toBe('another-project');

    const overwritten = await runTool(MIGRATE, ['--from', source.url, '--to', target.url, '--overwrite', '--quiet']);
    expect(overwritten.status, overwritten.stdout).toBe(0);
    expect(verifyLine(overwritten)).toMatchObject({ differences: 0 });
    expect((await api.get(`/allocations/${consumer.uuid}`)).body.project_id).toBe(consumer.project_id);
  }, 300_000);

  it('refuses a cut-off file and a bad command line before writing anything', async () => {
    const cut = await runTool(IMPORT, ['--to', target.url, '--quiet'], { stdin: regionFile.split('\n').slice(0, 20).join('\n') });
    expect(cut.status).toBe(1);
    expect(cut.stderr).toMatch(/^error: region file, line 20: no "end" line: the file is cut off$/m);
    const usage = await runTool(MIGRATE, ['--from', source.url]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/--to URL is required\n\nusage: npm run migrate/);
    const both = await runTool(MIGRATE, ['--from', source.url, '--to', target.url, '--dry-run', '--verify-only']);
    expect(both.stderr).toContain('--dry-run and --verify-only exclude each other');
  }, 120_000);
});
