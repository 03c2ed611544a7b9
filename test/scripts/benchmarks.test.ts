/**
 * Every benchmark and measurement script still runs: each at its smallest
 * size, as `npm run` starts it, must exit 0 and print its table (figures are
 * the scripts' business, not a test's: docs/testing/benchmarks.md). About
 * two minutes together.
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
import { freshTableName } from '../support/tables.js';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npm run <script> -- <args>` in the project, with `env` added to the environment: a service it starts on the worker's
 * DynamoDB Local works in an empty table of its own.
 */
function npmRun(script: string, args: string[] = [], env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', script, '--', ...args],
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, PLACEMENT_TABLE_NAME: freshTableName(), ...env },
        timeout: timeoutMs,
        maxBuffer: 64 << 20,
        killSignal: 'SIGKILL',
      },
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

describe('the benchmarks that start their own services', { timeout: 300_000 }, () => {
  it('cost-report', async () => {
    // The smallest run that samples every kind of request the bill prices: about two boots and two deletes a second, and
    // a node that refreshes its provider tree in the seconds measured. nova's schedule is seeded: of 22 nodes, node 19
    // (in an aggregate) is due a refresh from the start and first cycles 1.2 s in.
    const env = {
      PORT: await port(),
      COST_NODES: '22',
      COST_INSTANCES: '2',
      COST_WARMUP_SECONDS: '0',
      COST_SECONDS: '6',
      COST_BOOTS_PER_NODE_HOUR: '300',
      COST_CPU_ROUNDS: '1',
      COST_CPU_RUNS: '1',
      COST_CPU_WARMUPS: '0',
    };
    expectTable(await npmRun('cost-report', [], env));
  });

  it('bundle-report', async () => {
    const assembly = mkdtempSync(join(tmpdir(), 'bundle-report-'));
    try {
      const synth = await npmRun('synth', ['-q', '-o', assembly, '-c', 'regions=us-east-1', '-c', 'stage=ci', '-c', 'auth=noauth2']);
      expect(synth.code, synth.stderr.slice(-3000)).toBe(0);
      // It exits 1 when a function misses its size or import-time target, which a loaded CI machine's import times say
      // nothing about: it must have measured every function (its closing line comes after the table).
      const report = await npmRun('bundle-report', ['--assembly', assembly, '--runs', '1']);
      expect([0, 1], report.stderr.slice(-3000)).toContain(report.code);
      expect(report.stdout).toMatch(/^\|.*\|\s*\n\|(\s*:?-+:?\s*\|)+/m);
      expect(report.stdout).toMatch(/\| allocation history \|[^\n]*\| ok \|/);
      expect(report.stdout).toContain('Targets of the request-path functions');
    } finally {
      rmSync(assembly, { recursive: true, force: true });
    }
  });

  it('bench:candidates', async () => {
    // A wide tree of 4 children (24 candidates): upstream's search of the full 8 (40320) runs into its 120 s bound.
    const env = { BENCH_SIZES: '20', BENCH_RUNS: '1', BENCH_WIDE_CHILDREN: '4', BENCH_REFERENCE_PORT: await port() };
    expectTable(await npmRun('bench:candidates', [], env));
  });

  it('bench:region', async () => {
    // Boots at a rate that schedules several in the seconds measured, whatever the nodes' polling offsets.
    const region = ['--nodes', '4', '--instances', '1', '--boots-per-node-hour', '3600', '--warmup', '0', '--duration', '3'];
    expectTable(await npmRun('bench:region', ['--start-target', await port(), '--start-reference', await port(), ...region]));
  });

  it('faults', async () => {
    // A slow answer takes about the DynamoDB timeout (half of them outlast it): a second rather than 3 keeps that shorter.
    const env = { OPERATIONS: '60', WORKERS: '4', PROVIDERS: '4', PLACEMENT_DYNAMODB_TIMEOUT_MS: '1000' };
    expectTable(await npmRun('faults', [], env));
  });

  it('history-report', async () => {
    // Its table has a change stream: on a DynamoDB Local of its own (test/support/tables.ts, useDynamoDbLocalOfItsOwn).
    expectTable(
      await npmRun('history-report', [], { HISTORY_CONSUMERS: '1', HISTORY_PAGED_EVENTS: '250', HISTORY_USAGE_EVENTS: '500', PLACEMENT_DYNAMODB_ENDPOINT: '' }),
    );
  });

  it('bench (CRUD latency)', async () => {
    expectTable(await npmRun('bench', [], { BENCH_REQUESTS: '20', BENCH_CONCURRENCY: '4', BENCH_PROVIDERS: '4' }));
  });

  it('log-report', async () => {
    // Each kind takes two metric aggregates' worth of requests (200): nova-compute's two kinds of every minute.
    expectTable(await npmRun('log-report', [], { PORT: await port(), LOG_REPORT_ONLY: 'nova-compute, every minute' }));
  });

  it('capacity:read-units', async () => {
    expectTable(await npmRun('capacity:read-units', ['--compute-nodes', '10,20']));
  });

  it('bench:entries-build', async () => {
    // Its service starts a DynamoDB Local of its own, as a benchmark's does.
    const ran = await npmRun('bench:entries-build', ['--nodes', '10', '--verify'], { PLACEMENT_DYNAMODB_ENDPOINT: '' });
    expectTable(ran);
    expect(ran.stdout).toMatch(/ 0 disagreements \|/);
  });

  it('claim-writes', async () => {
    expectTable(await npmRun('claim-writes'));
  });
});

describe('the benchmarks against running services', { timeout: 300_000 }, () => {
  const service = useLocalService();
  let reference: Reference | undefined;
  beforeAll(async () => {
    ({ reference } = await startReference());
  }, 300_000);
  afterAll(async () => reference?.stop(), 60_000);

  it('bench:big-changes', async (context) => {
    if (reference === undefined) return context.skip();
    // Every change once, at 5: test/functions/big-changes.test.ts sends them at the sizes that take a multi-step commit.
    expectTable(await npmRun('bench:big-changes', ['--target', service.url, '--reference', reference.url, '--rounds', '1', '--size', '5']));
  });

  it('bench:claims', async () => {
    expectTable(await npmRun('bench:claims', ['--target', service.url, '--requests', '20', '--concurrency', '4', '--turn', '10']));
  });
});
