/**
 * GET /allocation_candidates on this service and on the real upstream
 * Placement (Debian's placement 8.0 on SQLite, ../shared/reference), side by
 * side, on the same generated cloud. Prints markdown tables; asserts nothing,
 * but stops if a service does not see the cloud it was given.
 *
 *   npm run bench:candidates (scripts/bench-candidates/main.ts)
 *   BENCH_SIZES (default 1000,10000) compute nodes per cloud, BENCH_RUNS
 *   (default 20) measured requests per case after 2 warm-ups, BENCH_SEED
 *   (default 42), BENCH_REFERENCE_PORT (default 18788), BENCH_INTERLEAVE=0
 *   times each service's requests in one block instead of alternating them,
 *   BENCH_WIDE_CHILDREN (default 8) children of the wide tree, BENCH_LOAD=api
 *   loads both services through their APIs (scripts/synthetic-region/api-loader.ts).
 *
 * The cloud is the synthetic region (scripts/synthetic-region, seeded, so
 * both services get the identical one, uuids included) in the shape
 * CLOUD_SHAPE of settings.ts: compute nodes with a few standard traits
 * (HW_CPU_X86_AVX2 on about half) in blocks of 50, a fifth
 * of the blocks an aggregate keeping its disk on a sharing provider, a fifth
 * of the nodes with four PF children of 8 SRIOV_NET_VF each, two instances a
 * node.
 *
 * Loading 10,000 providers through the API takes too long, so by default both services
 * are loaded below their APIs: ours with exactly the items the API would
 * write (providerChangeWrites and the claim's consumer/allocation writes,
 * sent with BatchWriteItem), the reference with SQL into its SQLite database.
 * Both are then checked through their APIs.
 *
 * Each size runs in a child process of its own with a fresh service and a
 * fresh reference server, so nothing carries over between sizes; so does the
 * wide-tree case. Like the reference, our service runs in a process of its
 * own (`npm start`'s entry point), so the load generator and the cloud it
 * keeps in memory do not share its CPU or heap; the items read and read units
 * of each request come from the service's request records (PLACEMENT_REQUEST_RECORDS).
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { config } from '../../shared/config.js';
import { SIZES, RUNS, WARMUPS, INTERLEAVE, LOAD_THROUGH_API, REFERENCE_STATE, WIDE_CHILDREN, WIDE_TIMEOUT_MS } from './settings.js';
import { OurService, startOurService, startReference, stopReference } from './services.js';
import { SizeResult, runSize, WideResult, runWide } from './cases.js';

// ---------------------------------------------------------------- processes

/** A child: one fresh service and one fresh reference for one job, its result written to BENCH_RESULT. */
async function child(): Promise<void> {
  let service: OurService | undefined;
  // A signal must not leave either service running (stop() signals ours at once).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void service?.stop();
      stopReference();
      process.exit(130);
    });
  }
  service = await startOurService();
  try {
    const referenceUrl = startReference();
    const job = process.env.BENCH_JOB!;
    const result = job === 'wide' ? await runWide(service, referenceUrl) : await runSize(Number(job), service, referenceUrl);
    writeFileSync(process.env.BENCH_RESULT!, JSON.stringify(result));
  } finally {
    stopReference();
    await service.stop();
  }
}

function runChild<T>(job: string): Promise<T> {
  const result = join(tmpdir(), `bench-candidates-${process.pid}-${job}.json`);
  // Every job gets its own DynamoDB Local, never one from the environment.
  const env = { ...process.env, BENCH_JOB: job, BENCH_RESULT: result, PLACEMENT_DYNAMODB_ENDPOINT: '' };
  const running = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { env, stdio: 'inherit' });
  const forward = () => running.kill('SIGTERM');
  process.on('SIGINT', forward).on('SIGTERM', forward);
  return new Promise((resolve, reject) => {
    running.once('exit', (code) => {
      process.off('SIGINT', forward).off('SIGTERM', forward);
      if (code !== 0) return reject(new Error(`job ${job} exited with ${code}`));
      resolve(JSON.parse(readFileSync(result, 'utf8')) as T);
      rmSync(result);
    });
  });
}

const ms = (value: number) => value.toFixed(value < 100 ? 1 : 0);
const row = (...cells: unknown[]) => `| ${cells.join(' | ')} |`;
const header = (...cells: string[]) => `${row(...cells)}\n${row(...cells.map(() => '---'))}`;

function printTables(sizes: SizeResult[], wide: WideResult): void {
  const out: string[] = [];
  const order = INTERLEAVE ? 'alternating between the services' : 'one service after the other';
  out.push(`\nGET /allocation_candidates (microversion 1.39): ${RUNS} sequential requests per case after ${WARMUPS} warm-ups, ${order}.`);
  out.push('Ours: `npm start` (local server + Lambda handlers on DynamoDB Local), in a process of its own.');
  out.push('Reference: upstream placement 8.0 (uWSGI, 1 process, 1 thread, SQLite).\n');
  out.push(header('N', 'providers', 'consumers', 'ours: items written', 'ours: load s', 'reference: rows', 'reference: load s'));
  for (const s of sizes) {
    // Loaded through the APIs, neither count is known here.
    const [items, rows] = LOAD_THROUGH_API ? ['(API)', '(API)'] : [s.ourItems, s.referenceRows];
    out.push(row(s.size, s.providers, s.consumers, items, s.ourLoadSeconds.toFixed(1), rows, s.referenceLoadSeconds.toFixed(1)));
  }
  out.push('');
  const latency = ['ours p50 ms', 'ours p95 ms', 'ref p50 ms', 'ref p95 ms', 'p50 ours/ref'];
  out.push(header('N', 'request', ...latency, 'ours count', 'ref count', 'ours items read', 'ours read units'));
  for (const s of sizes) {
    for (const { name, ours, reference } of s.cases) {
      const latencies = [ms(ours.p50), ms(ours.p95), ms(reference.p50), ms(reference.p95), (ours.p50 / reference.p50).toFixed(3)];
      out.push(row(s.size, name, ...latencies, ours.count, reference.count, ours.items.toFixed(0), ours.reads.toFixed(1)));
    }
  }
  out.push('\nThe other questions that read the whole region before format 3, alternating in the same way.\n');
  out.push(header('N', 'request', ...latency, 'ours count', 'ref count', 'ours items read', 'ours read units'));
  for (const s of sizes) {
    for (const { name, ours, reference } of s.regionReads) {
      const latencies = [ms(ours.p50), ms(ours.p95), ms(reference.p50), ms(reference.p95), (ours.p50 / reference.p50).toFixed(3)];
      out.push(row(s.size, name, ...latencies, ours.count, reference.count, ours.items.toFixed(0), ours.reads.toFixed(1)));
    }
  }
  out.push('\nGET /explain/allocation_candidates (ours) with the same query, next to the query itself.\n');
  out.push(
    header('N', 'request', 'query p50 ms', 'explain p50 ms', 'explain p95 ms', 'query items read', 'explain items read', 'explain candidates', 'emptied by'),
  );
  for (const s of sizes) {
    for (const { name, ours, explained } of s.cases) {
      const times = [ms(ours.p50), ms(explained.p50), ms(explained.p95)];
      out.push(row(s.size, name, ...times, ours.items.toFixed(0), explained.items.toFixed(0), explained.count, explained.emptiedBy || '(not empty)'));
    }
  }
  const [first, last] = [sizes[0]!, sizes[sizes.length - 1]!];
  if (sizes.length > 1) {
    out.push('');
    out.push(header('request', `ours items read, N=${first.size}`, `N=${last.size}`, 'growth'));
    first.cases.forEach(({ name, ours }, n) => {
      const later = last.cases[n]!.ours.items;
      out.push(row(name, ours.items.toFixed(0), later.toFixed(0), `${(later / ours.items).toFixed(2)}x`));
    });
  }
  const { limited, unlimited, reference } = wide;
  const groups = `resources1..${WIDE_CHILDREN}=CUSTOM_WIDE:1, group_policy=isolate`;
  let orderings = 1;
  for (let n = 2; n <= WIDE_CHILDREN; n++) orderings *= n;
  out.push(`\nWide tree: one root, ${WIDE_CHILDREN} children of 1 CUSTOM_WIDE each; ${groups} (${orderings} valid candidates).\n`);
  out.push(header('service', 'limit', 'status', 'p50 ms', 'p95 ms', 'count', 'bytes', 'items read', 'check'));
  const valid = `${limited.invalid} invalid, ${limited.distinct} distinct`;
  out.push(row('ours', 1000, 200, ms(limited.p50), ms(limited.p95), limited.count, '', limited.items.toFixed(0), valid));
  const cap = config.maxAllocationCandidates;
  const fits = unlimited.bytes < 6 * 1024 * 1024 && unlimited.count <= cap;
  const check = `${unlimited.invalid} invalid; ${fits ? 'ok' : 'FAILS'}: < 6 MB and <= ${cap}`;
  out.push(row('ours', 'none', unlimited.status, `${ms(unlimited.ms)} (1 run)`, '', unlimited.count, unlimited.bytes, unlimited.items, check));
  out.push(
    reference === 'timed out'
      ? row('reference', 1000, `timed out after ${WIDE_TIMEOUT_MS / 1000} s`, '', '', '', '', '', '')
      : row('reference', 1000, reference.status, `${ms(reference.ms)} (1 run)`, '', reference.count, '', '', ''),
  );
  out.push('\nChecks:');
  for (const s of sizes) for (const check of s.checks) out.push(`- ${check}`);
  console.log(out.join('\n'));
}

if (process.env.BENCH_JOB) {
  await child();
} else {
  const sizes: SizeResult[] = [];
  try {
    for (const size of SIZES) sizes.push(await runChild<SizeResult>(String(size)));
    printTables(sizes, await runChild<WideResult>('wide'));
    rmSync(REFERENCE_STATE, { recursive: true, force: true });
  } finally {
    // A child killed before its cleanup must not leave the reference behind (its logs stay for a look).
    stopReference();
  }
}
