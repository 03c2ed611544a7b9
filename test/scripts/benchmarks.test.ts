/**
 * Every benchmark and measurement script still runs: each at a small size,
 * as `npm run` starts it, must exit 0 and print its table (figures are the
 * scripts' business, not a test's: docs/testing/benchmarks.md). CI runs the
 * tests twice, the second time on Node 22; these run in the first pass only,
 * since together they take about 17 minutes of a CI run (they start
 * upstream Placement, regions of their own, and bundle every function).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../local/dynamodb-local.js';
import { PROJECT_ROOT } from '../../infra/bundling.js';
import { useLocalService } from '../support/local-service.js';
import { startReference, type Reference } from '../support/reference.js';

const ON_NODE_22 = Number(process.versions.node.split('.')[0]) >= 22;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run <script> -- <args>` in the project, with `env` added to the environment. */
function npmRun(script: string, args: string[] = [], env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', script, '--', ...args],
      { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 << 20, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** It exited 0 and printed a Markdown table. */
function expectTable(ran: Ran): void {
  expect(ran.code, `${ran.stderr.slice(-3000)}\n${ran.stdout.slice(-2000)}`).toBe(0);
  expect(ran.stdout).toMatch(/^\|.*\|\s*\n\|(\s*:?-+:?\s*\|)+/m);
}

const port = () => freeLoopbackPort().then(String);

describe.skipIf(ON_NODE_22)('the benchmarks that start their own service', () => {
  it('bench (CRUD latency)', async () => {
    expectTable(await npmRun('bench', [], { BENCH_REQUESTS: '40', BENCH_CONCURRENCY: '4' }));
  }, 300_000);

  it('capacity:read-units', async () => {
    expectTable(await npmRun('capacity:read-units', ['--compute-nodes', '10,20']));
  }, 300_000);

  it('faults', async () => {
    expectTable(await npmRun('faults', [], { OPERATIONS: '150', WORKERS: '4', PROVIDERS: '4' }));
  }, 300_000);

  it('history-report', async () => {
    expectTable(await npmRun('history-report', [], { HISTORY_CONSUMERS: '3' }));
  }, 300_000);

  it('log-report', async () => {
    expectTable(await npmRun('log-report', [], { PORT: await port(), LOG_REPORT_RUNS: '1' }));
  }, 300_000);
});

describe.skipIf(ON_NODE_22)('the benchmarks against running services', () => {
  const service = useLocalService();
  let reference: Reference | undefined;
  beforeAll(async () => {
    ({ reference } = await startReference());
  }, 300_000);
  afterAll(async () => reference?.stop(), 60_000);

  it('bench:claims', async () => {
    expectTable(await npmRun('bench:claims', ['--target', service.url, '--requests', '40', '--concurrency', '4', '--turn', '20']));
  }, 300_000);

  it('bench:big-changes', async (context) => {
    if (reference === undefined) return context.skip();
    expectTable(await npmRun('bench:big-changes', ['--target', service.url, '--reference', reference.url, '--rounds', '1', '--scale', '0.05']));
  }, 300_000);
});

describe.skipIf(ON_NODE_22)('the heaviest benchmarks', () => {
  it('bench:candidates', async () => {
    expectTable(await npmRun('bench:candidates', [], { BENCH_SIZES: '20', BENCH_RUNS: '2', BENCH_REFERENCE_PORT: await port() }, 480_000));
  }, 480_000);

  it('bench:region', async () => {
    const args = ['--start-target', await port(), '--start-reference', await port(), '--nodes', '4', '--warmup', '5', '--duration', '10'];
    expectTable(await npmRun('bench:region', args, {}, 480_000));
  }, 480_000);

  it('bundle-report', async () => {
    const assembly = mkdtempSync(join(tmpdir(), 'bundle-report-'));
    try {
      const synth = await npmRun('synth', ['-q', '-o', assembly, '-c', 'regions=us-east-1', '-c', 'stage=ci', '-c', 'auth=noauth2'], {}, 480_000);
      expect(synth.code, synth.stderr.slice(-3000)).toBe(0);
      // It exits 1 when a function misses its size or import-time target, which a loaded CI machine's import times say
      // nothing about: it must have measured every function (its closing line comes after the table).
      const report = await npmRun('bundle-report', ['--assembly', assembly, '--runs', '1'], {}, 480_000);
      expect([0, 1], report.stderr.slice(-3000)).toContain(report.code);
      expect(report.stdout).toMatch(/^\|.*\|\s*\n\|(\s*:?-+:?\s*\|)+/m);
      expect(report.stdout).toMatch(/\| allocation history \|[^\n]*\| ok \|/);
      expect(report.stdout).toContain('Targets of the request-path functions');
    } finally {
      rmSync(assembly, { recursive: true, force: true });
    }
  }, 960_000);

  it('cost-report', async () => {
    // The smallest run that samples every kind of request the bill prices: a boot or delete a second, and enough nodes that
    // one of them refreshes its provider tree (every 300 s each, spread over the nodes) within the minute.
    const env = {
      PORT: await port(),
      COST_NODES: '12',
      COST_SECONDS: '60',
      COST_BOOTS_PER_NODE_HOUR: '300',
      COST_CPU_ROUNDS: '1',
      COST_CPU_RUNS: '2',
      COST_CPU_WARMUPS: '1',
    };
    expectTable(await npmRun('cost-report', [], env, 480_000));
  }, 480_000);
});
