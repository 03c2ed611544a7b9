/**
 * `npm run bundle-report`: bundles every Lambda function exactly as the CDK
 * stack does (infra/bundling.ts) and prints, per function, the bundle size
 * and its cold start: a fresh `node` process imports the bundle, then serves
 * a first request against DynamoDB Local (started here, with the table and
 * one provider). Each cold start is repeated and the median shown.
 * Targets: under 400 KB and under 150 ms (import + first request).
 *
 *   BUNDLE_RUNS (default 5) cold starts per function.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { ALIASES, AUTHORIZER_ENTRY, BUNDLING, CATALOG_SEEDER_ENTRY, PROJECT_ROOT, ROUTER_ENTRY, entryPath, handlerEntry } from '../infra/bundling.js';
import { HANDLER_FAMILIES } from '../infra/settings.js';
import type { HandlerName } from '../shared/http/routes.js';
import { toEvent } from '../local/api-gateway-adapter.js';
import { startLocalService } from '../local/service.js';
import { PlacementClient } from '../admin/placement-client.js';

const RUNS = Number(process.env.BUNDLE_RUNS ?? 5);
const SIZE_TARGET_KB = 400;
const COLD_TARGET_MS = 150;

const service = await startLocalService({ port: Number(process.env.PORT ?? 8792) });
// The headers of the requests and of the handler events built below.
const headers = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json' };
const placement = new PlacementClient(service.url, { headers });
async function call(method: string, path: string, body?: unknown): Promise<void> {
  const response = await placement.request(method, path, { json: body });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
}
const provider = randomUUID();
const claim = () => ({
  allocations: { [provider]: { resources: { VCPU: 1, MEMORY_MB: 512 } } },
  project_id: 'bundle-report',
  user_id: 'bundle-report',
  consumer_generation: null,
  consumer_type: 'INSTANCE',
});
await call('POST', '/resource_providers', { uuid: provider, name: `bundle-report-${provider}` });
await call('PUT', `/resource_providers/${provider}/inventories`, {
  resource_provider_generation: 0,
  inventories: { VCPU: { total: 100000 }, MEMORY_MB: { total: 10000000 }, DISK_GB: { total: 100000 } },
});

// DynamoDB Local (a JVM) is slow on the first calls of each kind: warm it so that its own start is not measured.
for (let n = 0; n < 3; n++) await call('PUT', `/allocations/${randomUUID()}`, claim());

/** A first request a fresh instance of each family typically gets; each one reads or writes the table. */
const FIRST_REQUESTS: Record<HandlerName, () => { method: string; path: string; body?: unknown }> = {
  root: () => ({ method: 'GET', path: '/' }),
  'resource-providers': () => ({ method: 'GET', path: `/resource_providers/${provider}` }),
  inventories: () => ({ method: 'GET', path: `/resource_providers/${provider}/inventories` }),
  aggregates: () => ({ method: 'GET', path: `/resource_providers/${provider}/aggregates` }),
  traits: () => ({ method: 'GET', path: `/resource_providers/${provider}/traits` }),
  'resource-classes': () => ({ method: 'GET', path: '/resource_classes' }),
  allocations: () => ({ method: 'PUT', path: `/allocations/${randomUUID()}`, body: claim() }),
  usages: () => ({ method: 'GET', path: `/resource_providers/${provider}/usages` }),
  'allocation-candidates': () => ({ method: 'GET', path: '/allocation_candidates?resources=VCPU:1,MEMORY_MB:512&limit=10' }),
  reshaper: () => ({ method: 'POST', path: '/reshaper', body: { inventories: {}, allocations: {} } }),
};

function apiEvent(request: { method: string; path: string; body?: unknown }): unknown {
  const message = { url: request.path, method: request.method, headers, httpVersion: '1.1', remoteAddress: '127.0.0.1' };
  return toEvent(message, request.body === undefined ? undefined : JSON.stringify(request.body));
}

interface Target {
  name: string;
  entry: string;
  event: () => unknown;
}

const targets: Target[] = [
  ...HANDLER_FAMILIES.map((family) => ({ name: family, entry: handlerEntry(family), event: () => apiEvent(FIRST_REQUESTS[family]()) })),
  { name: 'authorizer', entry: AUTHORIZER_ENTRY, event: () => ({ version: '2.0', type: 'REQUEST', routeKey: 'GET /traits', headers }) },
  // The function-URL front door's one function: every family's code; nova-compute's most frequent request.
  { name: 'router (function URL)', entry: ROUTER_ENTRY, event: () => apiEvent({ method: 'GET', path: `/resource_providers/${provider}/allocations` }) },
  {
    name: 'catalog seeder',
    entry: CATALOG_SEEDER_ENTRY,
    event: () => ({ RequestType: 'Create', ResourceType: 'Custom::StandardCatalogs', ResourceProperties: {} }),
  },
];

/** Runs in the fresh process: the timings Lambda reports as Init Duration and the first Duration. */
const HARNESS = `
const started = performance.now();
const { handler } = await import(process.argv[1]);
const imported = performance.now();
const context = { awsRequestId: 'cold', functionName: 'cold', getRemainingTimeInMillis: () => 30000 };
const result = await handler(JSON.parse(process.argv[2]), context);
const answered = performance.now();
await handler(JSON.parse(process.argv[3]), context);
const warmMs = performance.now() - answered;
console.log(JSON.stringify({ harness: true, importMs: imported - started, firstRequestMs: answered - imported, warmMs,
  status: result?.statusCode ?? (result?.isAuthorized === undefined ? 'ok' : 'authorized ' + result.isAuthorized), rssMb: process.memoryUsage().rss / 2 ** 20 }));
`;

interface ColdStart {
  importMs: number;
  firstRequestMs: number;
  /** The same request again in the same process: what the first one costs without the cold start. */
  warmMs: number;
  status: string | number;
  rssMb: number;
  units?: { read: number; write: number };
}

function coldStart(bundle: string, target: Target): Promise<ColdStart> {
  return new Promise((resolve, reject) => {
    const events = [target.event(), target.event()].map((event) => JSON.stringify(event));
    const child = spawn(process.execPath, ['--input-type=module', '-e', HARNESS, pathToFileURL(bundle).href, ...events], {
      env: {
        PATH: process.env.PATH,
        // Node 20 here, 22 in Lambda: the SDK's warning about Node 20 is noise, not part of a Lambda start.
        NODE_NO_WARNINGS: '1',
        AWS_REGION: 'us-east-1',
        PLACEMENT_DYNAMODB_ENDPOINT: service.dynamoDbEndpoint,
        PLACEMENT_TABLE_NAME: process.env.PLACEMENT_TABLE_NAME ?? 'placement',
        // No Keystone here: the authorizer's Keystone round trip is not part of these figures.
        PLACEMENT_AUTH_STRATEGY: 'noauth2',
        PLACEMENT_METRICS: 'true',
        PLACEMENT_STAGE: 'bundle-report',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const records = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const result = records.find((record) => record.harness) as ColdStart | undefined;
      if (code !== 0 || !result) return reject(new Error(`cold start of ${bundle} failed (exit ${code}): ${output}`));
      const metrics = records.find((record) => record._aws); // the first request's record
      if (metrics) result.units = { read: metrics.ReadCapacityUnits as number, write: metrics.WriteCapacityUnits as number };
      resolve(result);
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const outdir = mkdtempSync(join(tmpdir(), 'placement-bundles-'));
const rows: string[] = [];
let failed = false;
try {
  for (const target of targets) {
    const outfile = join(outdir, target.name.replace(/\W+/g, '-'), 'index.mjs');
    await build({
      entryPoints: [entryPath(target.entry)],
      absWorkingDir: PROJECT_ROOT,
      bundle: true,
      platform: 'node',
      outfile,
      format: BUNDLING.format,
      target: BUNDLING.target,
      mainFields: BUNDLING.mainFields,
      banner: { js: BUNDLING.banner! },
      minify: BUNDLING.minify,
      sourcemap: BUNDLING.sourceMap,
      external: BUNDLING.externalModules,
      alias: ALIASES,
      logLevel: 'warning',
    });
    const code = readFileSync(outfile);
    const runs: ColdStart[] = [];
    for (let run = 0; run < RUNS; run++) runs.push(await coldStart(outfile, target));
    const sizeKb = code.length / 1024;
    const importMs = median(runs.map((run) => run.importMs));
    const firstMs = median(runs.map((run) => run.firstRequestMs));
    const coldMs = median(runs.map((run) => run.importMs + run.firstRequestMs));
    const bestMs = Math.min(...runs.map((run) => run.importMs + run.firstRequestMs));
    const warmMs = median(runs.map((run) => run.warmMs));
    const units = runs[0]!.units;
    const ok = sizeKb < SIZE_TARGET_KB && coldMs < COLD_TARGET_MS;
    failed ||= !ok;
    rows.push(
      `| ${target.name} | ${sizeKb.toFixed(0)} | ${(gzipSync(code).length / 1024).toFixed(0)} | ${importMs.toFixed(0)} | ${firstMs.toFixed(0)} | ${coldMs.toFixed(0)} | ${bestMs.toFixed(0)} | ${warmMs.toFixed(0)} | ` +
        `${Math.max(...runs.map((run) => run.rssMb)).toFixed(0)} | ${runs[0]!.status} | ${units ? `${units.read} / ${units.write}` : '-'} | ${ok ? 'yes' : '**no**'} |`,
    );
  }
} finally {
  rmSync(outdir, { recursive: true, force: true });
  await service.stop();
}

console.log(`\nBundles as deployed (infra/bundling.ts); cold start = fresh node ${process.version} process, median of ${RUNS}, DynamoDB Local\n`);
console.log(
  '| function | KB | KB gzip | import ms | first request ms | cold total ms | best cold ms | same request warm ms | RSS MB | first status | units read / write | within targets |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log(`\nTargets: < ${SIZE_TARGET_KB} KB and < ${COLD_TARGET_MS} ms (import + first request).`);
process.exitCode = failed ? 1 : 0;
