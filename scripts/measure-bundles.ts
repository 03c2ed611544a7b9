/**
 * `npm run bundle-report -- [--assembly cdk.out] [--stack NAME] [--runs 5] [--node PATH]`:
 * the size and cold start of every function of a synthesized stack, from
 * its cdk.out asset, on Lambda's Node (local/bundles/lambda-node.ts, or the
 * Node binary `--node` names, to compare), loaded as Lambda loads it
 * (local/bundles/lambda-function.ts). Synthesize first
 * (`npm run synth -- -c regions=us-east-1 [-c frontDoor=functionUrl]`).
 *
 * Per function: bundle size and gzip size (all files of the asset), then
 * `--runs` cold starts, each a fresh instance: the bundle's import (Lambda's
 * Init Duration), a first request against DynamoDB Local, the same request
 * again warm; the median of each is shown. The request-path functions'
 * targets: under 400 KB and under 50 ms to import.
 *
 * The functions run with noauth2 whatever the stack says: no Keystone here,
 * so the authorizer's Keystone round trip is not part of these figures.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { toEvent } from '../local/api-gateway-adapter.js';
import { functionUrlEvent } from '../local/bundles/front-doors.js';
import { startBundleRuntime } from '../local/bundles/runtime.js';
import { lambdaNode, versionOf } from '../local/bundles/lambda-node.js';
import { PlacementClient } from '../admin/placement-client.js';
import { IMPORT_TARGET_MS, REQUEST_PATH_TARGET_KB } from './lib/bundle-targets.js';

const { values } = parseArgs({
  options: {
    assembly: { type: 'string', default: 'cdk.out' },
    stack: { type: 'string' },
    runs: { type: 'string', default: '5' },
    port: { type: 'string', default: process.env.PORT ?? '0' },
    node: { type: 'string' },
  },
});
const RUNS = Number(values.runs);
const node = values.node ?? lambdaNode();
const nodeVersion = versionOf(node) ?? `${node} (does not run)`;

const runtime = await startBundleRuntime({
  assembly: values.assembly,
  stack: values.stack,
  port: Number(values.port),
  node,
  overrides: { PLACEMENT_AUTH_STRATEGY: 'noauth2', PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA: 'true', PLACEMENT_METRICS: 'false' },
  // The functions' own log lines are not what this report is about.
  output: () => undefined,
});

interface Row {
  name: string;
  requestPath: boolean;
  kb: number;
  gzipKb: number;
  importMs: number;
  firstMs: number;
  warmMs: number;
  status: string;
}
const rows: Row[] = [];
try {
  const headers = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement latest', 'content-type': 'application/json' };
  const placement = new PlacementClient(runtime.url, { headers });
  const provider = randomUUID();
  const claim = () => ({
    allocations: { [provider]: { resources: { VCPU: 1, MEMORY_MB: 512 } } },
    project_id: 'bundle-report',
    user_id: 'bundle-report',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  });
  for (const [method, path, body] of [
    ['POST', '/resource_providers', { uuid: provider, name: `bundle-report-${provider}` }],
    [
      'PUT',
      `/resource_providers/${provider}/inventories`,
      { resource_provider_generation: 0, inventories: { VCPU: { total: 100000 }, MEMORY_MB: { total: 10000000 } } },
    ],
    // DynamoDB Local (a JVM) is slow on the first calls of each kind: warm it so that its own start is not measured.
    ...[1, 2, 3].map(() => ['PUT', `/allocations/${randomUUID()}`, claim()] as const),
  ] as const) {
    const response = await placement.request(method, path, { json: body });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
  }

  /** The first request a fresh instance of each family typically gets. */
  const firstRequests: Record<string, { method: string; path: string; body?: unknown }> = {
    root: { method: 'GET', path: '/' },
    'resource-providers': { method: 'GET', path: `/resource_providers/${provider}` },
    inventories: { method: 'GET', path: `/resource_providers/${provider}/inventories` },
    aggregates: { method: 'GET', path: `/resource_providers/${provider}/aggregates` },
    traits: { method: 'GET', path: `/resource_providers/${provider}/traits` },
    'resource-classes': { method: 'GET', path: '/resource_classes' },
    allocations: { method: 'PUT', path: `/allocations/${randomUUID()}`, body: claim() },
    usages: { method: 'GET', path: `/resource_providers/${provider}/usages` },
    'allocation-candidates': { method: 'GET', path: '/allocation_candidates?resources=VCPU:1,MEMORY_MB:512&limit=10' },
    reshaper: { method: 'POST', path: '/reshaper', body: { inventories: {}, allocations: {} } },
    history: { method: 'GET', path: `/history/allocations/${randomUUID()}` },
    // The router (function URL): nova-compute's most frequent request.
    router: { method: 'GET', path: `/resource_providers/${provider}/allocations` },
  };
  const httpRequest = (request: { method: string; path: string }) => ({
    method: request.method,
    url: request.path,
    headers,
    httpVersion: '1.1',
    remoteAddress: '127.0.0.1',
  });
  const body = (request: { body?: unknown }) => (request.body === undefined ? undefined : JSON.stringify(request.body));

  /** What each function is asked first, from its description in the template. */
  const eventFor = (description: string): { name: string; requestPath: boolean; event: () => unknown } | undefined => {
    const family = /^Placement (.+) handler$/.exec(description)?.[1];
    if (family !== undefined && firstRequests[family]) {
      const request = () => (family === 'allocations' ? { ...firstRequests.allocations!, path: `/allocations/${randomUUID()}` } : firstRequests[family]!);
      // As behind API Gateway: the authorizer's identity in the context (noauth2's admin, as its token says).
      return { name: family, requestPath: true, event: () => toEvent(httpRequest(request()), body(request())) };
    }
    if (/^Placement router/.test(description)) {
      return {
        name: 'router (function URL)',
        requestPath: true,
        event: () => functionUrlEvent(httpRequest(firstRequests.router!), undefined),
      };
    }
    if (/authorizer/.test(description)) {
      return { name: 'authorizer', requestPath: true, event: () => ({ version: '2.0', type: 'REQUEST', routeKey: 'GET /traits', headers }) };
    }
    if (/catalog seeder/.test(description)) {
      return {
        name: 'catalog seeder',
        requestPath: false,
        event: () => ({ RequestType: 'Update', ResourceType: 'AWS::CloudFormation::CustomResource', ResourceProperties: {} }),
      };
    }
    const scheduled = () => ({ source: 'aws.events', 'detail-type': 'Scheduled Event' });
    if (/capacity/i.test(description)) return { name: 'capacity metrics', requestPath: false, event: scheduled };
    if (/change sweeper/i.test(description)) return { name: 'change sweeper', requestPath: false, event: scheduled };
    // The stream's batch with no record of a consumer: the function loads and answers, writing nothing.
    if (/allocation history/i.test(description)) return { name: 'allocation history', requestPath: false, event: () => ({ Records: [] }) };
    return undefined;
  };

  const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;
  for (const spec of runtime.stack.functions.values()) {
    const target = eventFor(spec.description ?? '');
    if (target === undefined) continue; // CDK's own custom-resource framework
    const files = readdirSync(spec.codeDirectory).map((name) => readFileSync(join(spec.codeDirectory, name)));
    const bytes = files.reduce((sum, file) => sum + file.length, 0);
    const gzipBytes = files.reduce((sum, file) => sum + gzipSync(file).length, 0);
    const imports: number[] = [];
    const firsts: number[] = [];
    const warms: number[] = [];
    let status = '';
    for (let run = 0; run < RUNS; run++) {
      const fn = runtime.coldFunction(spec.logicalId);
      try {
        const first = await fn.invoke(target.event());
        const warm = await fn.invoke(target.event());
        if (!first.ok) throw new Error(`${target.name}: ${first.errorType}: ${first.errorMessage}`);
        const result = first.result as { statusCode?: number; isAuthorized?: boolean } | undefined;
        status = String(result?.statusCode ?? (result?.isAuthorized === undefined ? 'ok' : `authorized ${result.isAuthorized}`));
        imports.push(fn.coldStarts[0]!.initMs);
        firsts.push(fn.coldStarts[0]!.firstInvocationMs);
        warms.push(warm.durationMs ?? NaN);
      } finally {
        fn.stop();
      }
    }
    rows.push({
      name: target.name,
      requestPath: target.requestPath,
      kb: bytes / 1024,
      gzipKb: gzipBytes / 1024,
      importMs: median(imports),
      firstMs: median(firsts),
      warmMs: median(warms),
      status,
    });
  }
} finally {
  await runtime.stop();
}

let failed = false;
console.log(
  `\nBundles of ${runtime.stack.stackName} (${values.assembly}), each loaded as Lambda loads it on Node ${nodeVersion}; median of ${RUNS} cold starts, DynamoDB Local\n`,
);
console.log('| function | KB | KB gzip | import ms | first request ms | cold total ms | same request warm ms | first status | within targets |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const ok = !row.requestPath || (row.kb < REQUEST_PATH_TARGET_KB && row.importMs < IMPORT_TARGET_MS);
  failed ||= !ok;
  console.log(
    `| ${row.name} | ${row.kb.toFixed(0)} | ${row.gzipKb.toFixed(0)} | ${row.importMs.toFixed(0)} | ${row.firstMs.toFixed(0)} | ${(row.importMs + row.firstMs).toFixed(0)} | ` +
      `${row.warmMs.toFixed(0)} | ${row.status} | ${row.requestPath ? (ok ? 'yes' : '**no**') : '-'} |`,
  );
}
console.log(`\nTargets of the request-path functions: < ${REQUEST_PATH_TARGET_KB} KB and < ${IMPORT_TARGET_MS} ms to import.`);
process.exitCode = failed ? 1 : 0;
