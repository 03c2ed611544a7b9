/**
 * The differential tester's self-test: this service behind a proxy that
 * varies its answers the ways the API allows and plants three differences
 * (one field, one status, one header), compared with the real upstream
 * Placement. The tester must report exactly the planted differences.
 *
 * Upstream comes from PLACEMENT_REFERENCE_URL (a running reference, emptied
 * by the run), else from ../shared/reference/start-reference.sh on a free
 * port. Without either the test is skipped, except under CI (CI=true or
 * PLACEMENT_REQUIRE_REFERENCE), where that is a failure.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDifftest, type RunReport } from '../../../scripts/difftest/run.js';
import { useLocalService } from '../../support/local-service.js';
import { startPlantingProxy, type Plant, type PlantingProxy } from '../../support/planting-proxy.js';

const SCRIPTS = resolve(import.meta.dirname, '../../../../shared/reference');
const canStart = existsSync(`${SCRIPTS}/start-reference.sh`);
const available = Boolean(process.env.PLACEMENT_REFERENCE_URL) || canStart;
if (!available) {
  const message = 'difftest self-test: no upstream reference (set PLACEMENT_REFERENCE_URL or provide ../shared/reference/start-reference.sh)';
  // .ci/run sets PLACEMENT_REQUIRE_REFERENCE when the reference is at hand.
  if (process.env.CI === 'true' || process.env.PLACEMENT_REQUIRE_REFERENCE) throw new Error(`${message}; CI needs it`);
  console.warn(`${message}: skipped`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

const PLANTS: Plant[] = [
  { method: 'GET', path: /^\/resource_providers\/[0-9a-f-]{36}$/, status: 200, change: 'field' },
  { method: 'GET', path: /^\/resource_providers\/[0-9a-f-]{36}\/inventories$/, status: 200, change: 'status' },
  { method: 'PUT', path: /^\/resource_providers\/[0-9a-f-]{36}\/inventories$/, status: 200, change: 'header' },
];

describe.runIf(available)('the differential tester against upstream Placement', () => {
  const service = useLocalService();
  let reference: string;
  let startedPort: number | undefined;
  let proxy: PlantingProxy;
  let report: RunReport;

  beforeAll(async () => {
    if (process.env.PLACEMENT_REFERENCE_URL) reference = process.env.PLACEMENT_REFERENCE_URL;
    else {
      startedPort = await freePort();
      const printed = execFileSync('bash', [`${SCRIPTS}/start-reference.sh`, '--port', String(startedPort)], { encoding: 'utf8' });
      reference = /^URL=(.*)$/m.exec(printed)![1];
    }
    proxy = await startPlantingProxy(service.url, PLANTS);
    report = await runDifftest({ reference, target: proxy.url, seed: 7, ops: 160, profile: 'mixed' });
  }, 600_000);

  afterAll(async () => {
    await proxy?.stop();
    if (startedPort !== undefined) execFileSync('bash', [`${SCRIPTS}/stop-reference.sh`, '--port', String(startedPort)]);
  });

  it('plants each difference once', () => {
    expect(proxy.planted.map(({ plant }) => plant.change).sort()).toEqual(['field', 'header', 'status']);
  });

  it('reports exactly the planted differences, each on its request', () => {
    const found = report.mismatches.map((mismatch) => ({
      request: `${mismatch.request.method} ${mismatch.request.path}`,
      differences: mismatch.differences.join(' | '),
    }));
    expect(found, JSON.stringify(found, null, 1)).toHaveLength(3);
    for (const { plant, method, path } of proxy.planted) {
      const mismatch = found.find((one) => one.request === `${method} ${path}`);
      expect(mismatch, `${plant.change} planted on ${method} ${path}`).toBeDefined();
      if (plant.change === 'status') expect(mismatch!.differences).toMatch(/^status: reference 200, target 202/);
      if (plant.change === 'header') expect(mismatch!.differences).toContain('headers.x-planted: reference (absent), target "yes"');
      if (plant.change === 'field') expect(mismatch!.differences).toMatch(/^body\.\w+: reference .*, target /);
    }
  });

  it('ignores the variations the API allows: order of lists and keys, layout, dates, request ids, header case', () => {
    expect(report.passed).toBe(160 - 3);
    expect(report.routes.size).toBeGreaterThan(20);
  });
});
