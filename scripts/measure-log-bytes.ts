/**
 * `npm run log-report`: the log bytes one request costs, by request kind.
 * Starts `npm start` (PORT, default 8793) with the metric aggregates on, as
 * in Lambda, sends nova's steady-state reads, a scheduling decision and a
 * few refusals one at a time, and counts every byte the service writes to
 * stdout (its metric aggregates and any log line) over the requests of one
 * aggregate: for each kind, requests until its route's aggregate is written,
 * then FLUSH_EVERY_REQUESTS more, whose bytes end with the next one.
 * Next to it: the lines Lambda itself writes per invocation in its default
 * text format (START, END, REPORT, formatted as Lambda documents them; none
 * with the stack's JSON format and system log level WARN) and the API
 * Gateway access-log line the stack's format makes for such a request.
 * LOG_REPORT_ONLY=TEXT measures only the kinds whose route or name holds TEXT.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { PlacementClient, type ApiResponse } from '../admin/placement-client.js';
import { ACCESS_LOG_FORMAT } from '../infra/constructs/api.js';
import { FLUSH_EVERY_REQUESTS } from '../shared/http/middleware/metrics.js';

const PORT = Number(process.env.PORT ?? 8793);
const ONLY = process.env.LOG_REPORT_ONLY ?? '';

/**
 * Lambda's text-format lines for one warm invocation (request ids are 36
 * characters; durations and memory as a busy function reports them).
 */
const requestId = '6f1c9d3e-2b7a-4c55-9e0f-3a8d1b2c4e5f';
const LAMBDA_TEXT_LINES = [
  `START RequestId: ${requestId} Version: $LATEST\n`,
  `END RequestId: ${requestId}\n`,
  `REPORT RequestId: ${requestId}\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: 512 MB\tMax Memory Used: 98 MB\t\n`,
];
const LAMBDA_TEXT_BYTES = LAMBDA_TEXT_LINES.reduce((sum, line) => sum + Buffer.byteLength(line), 0);

/** The access-log line API Gateway writes for a request, with typical values in place of the variables. */
function accessLogBytes(route: string, status: number, responseBytes: number): number {
  const values: Record<string, string> = {
    '$context.requestId': 'Jv8cTjYqIAMEb0Q=',
    '$context.identity.sourceIp': '203.0.113.17',
    '$context.httpMethod': route.split(' ')[0]!,
    '$context.routeKey': route,
    '$context.status': String(status),
    '$context.responseLatency': '14',
    '$context.responseLength': String(responseBytes),
    '$context.authorizer.userId': '9c1f0d3b6a2e4f7d8b5c0a1e2d3f4a5b',
    '$context.authorizer.error': '-',
    '$context.integrationErrorMessage': '-',
  };
  const line = ACCESS_LOG_FORMAT.replace(/\$context\.[\w.]+/g, (variable) => values[variable] ?? '-');
  return Buffer.byteLength(line) + 1;
}

const server = spawn('npm', ['start', '--silent'], {
  env: { ...process.env, PORT: String(PORT), PLACEMENT_METRICS: 'true', PLACEMENT_STAGE: 'log-report', PLACEMENT_AUTH_STRATEGY: 'noauth2' },
  stdio: ['ignore', 'pipe', 'inherit'],
  detached: true,
});
let written = 0;
let pending = '';
const lineWaiters: { text: string; resolve: () => void }[] = [];
server.stdout!.on('data', (chunk: Buffer) => {
  written += chunk.length;
  pending = (pending + chunk.toString('utf8')).slice(-100_000);
  for (const waiter of [...lineWaiters]) {
    if (pending.includes(waiter.text)) {
      lineWaiters.splice(lineWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
});
const waitFor = (text: string, ms = 10_000) =>
  new Promise<void>((resolve, reject) => {
    if (pending.includes(text)) return resolve();
    const timer = setTimeout(() => reject(new Error(`no "${text}" on the server's stdout within ${ms} ms`)), ms);
    lineWaiters.push({ text, resolve: () => (clearTimeout(timer), resolve()) });
  });
const stop = () => {
  try {
    process.kill(-server.pid!, 'SIGTERM');
  } catch {
    // already gone
  }
};

interface Kind {
  name: string;
  route: string;
  send: (placement: PlacementClient) => Promise<ApiResponse>;
}

try {
  await waitFor('Placement listening', 120_000);
  const placement = new PlacementClient(`http://127.0.0.1:${PORT}`, { token: 'admin' });

  // A compute node with inventory and traits, in an aggregate, with one instance on it.
  const node = randomUUID();
  const instance = randomUUID();
  const must = async (response: Promise<ApiResponse>) => {
    const answer = await response;
    if (answer.status >= 300) throw new Error(`setup: ${answer.status} ${answer.text}`);
    return answer;
  };
  await must(placement.post('/resource_providers', { uuid: node, name: 'compute-0' }, { version: '1.20' }));
  await must(
    placement.put(`/resource_providers/${node}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: 64, allocation_ratio: 4 }, MEMORY_MB: { total: 262144 }, DISK_GB: { total: 2000 } },
    }),
  );
  await must(placement.put(`/resource_providers/${node}/traits`, { resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX2'] }, { version: '1.6' }));
  await must(placement.put(`/resource_providers/${node}/aggregates`, { resource_provider_generation: 2, aggregates: [randomUUID()] }, { version: '1.19' }));
  const allocation = (generation: number | null) => ({
    allocations: { [node]: { resources: { VCPU: 2, MEMORY_MB: 4096, DISK_GB: 20 } } },
    project_id: 'log-report',
    user_id: 'log-report',
    consumer_generation: generation,
    consumer_type: 'INSTANCE',
  });
  await must(placement.put(`/allocations/${instance}`, allocation(null), { version: '1.38' }));

  const kinds: Kind[] = [
    { name: 'nova-compute, every minute', route: 'GET /resource_providers/{uuid}/allocations', send: (p) => p.get(`/resource_providers/${node}/allocations`) },
    {
      name: 'nova-compute, every minute per instance',
      route: 'GET /allocations/{consumer_uuid}',
      send: (p) => p.get(`/allocations/${instance}`, { version: '1.28' }),
    },
    { name: 'nova-compute, every 5 min', route: 'GET /resource_providers', send: (p) => p.get(`/resource_providers?in_tree=${node}`, { version: '1.14' }) },
    { name: 'nova-compute, every 5 min', route: 'GET /resource_providers/{uuid}/inventories', send: (p) => p.get(`/resource_providers/${node}/inventories`) },
    {
      name: 'nova-compute, every 5 min',
      route: 'GET /resource_providers/{uuid}/aggregates',
      send: (p) => p.get(`/resource_providers/${node}/aggregates`, { version: '1.19' }),
    },
    {
      name: 'nova-compute, every 5 min',
      route: 'GET /resource_providers/{uuid}/traits',
      send: (p) => p.get(`/resource_providers/${node}/traits`, { version: '1.6' }),
    },
    {
      name: 'scheduler',
      route: 'GET /allocation_candidates',
      send: (p) => p.get('/allocation_candidates?resources=VCPU:2,MEMORY_MB:4096,DISK_GB:20&limit=1000', { version: '1.36' }),
    },
    {
      name: 'scheduler (a claim)',
      route: 'PUT /allocations/{consumer_uuid}',
      send: (p) => p.put(`/allocations/${randomUUID()}`, allocation(null), { version: '1.38' }),
    },
    {
      name: 'stale generation (409)',
      route: 'PUT /allocations/{consumer_uuid}',
      send: (p) => p.put(`/allocations/${instance}`, allocation(99), { version: '1.38' }),
    },
    { name: 'no token (401)', route: 'GET /resource_providers', send: (p) => p.with({ token: null }).get('/resource_providers') },
    { name: 'unknown path (404)', route: '$default', send: (p) => p.get('/nowhere') },
  ];

  const aggregatesOf = (route: string) => pending.split(`"Route":${JSON.stringify(route)}`).length - 1;
  /** Resolves when the route's count of aggregates on stdout reaches `count`. */
  const aggregateWritten = async (route: string, count: number) => {
    for (let waited = 0; aggregatesOf(route) < count; waited += 10) {
      if (waited > 10_000) throw new Error(`no aggregate of ${route} on the server's stdout`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  console.log(`\nBytes written per request over ${FLUSH_EVERY_REQUESTS} requests (one aggregate), local service with PLACEMENT_METRICS=true, noauth2\n`);
  console.log('| request | status | service stdout | Lambda text START/END/REPORT | API Gateway access log |');
  console.log('|---|---|---|---|---|');
  for (const kind of kinds.filter(({ name, route }) => `${route} (${name})`.includes(ONLY))) {
    pending = '';
    // Up to the next aggregate of the route (earlier requests of it may be waiting in the service)...
    let sent = 0;
    while (aggregatesOf(kind.route) === 0 && sent++ < FLUSH_EVERY_REQUESTS) await kind.send(placement);
    await aggregateWritten(kind.route, 1);
    // ...then exactly one aggregate's requests.
    pending = '';
    const before = written;
    let status = 0;
    let responseBytes = 0;
    for (let run = 0; run < FLUSH_EVERY_REQUESTS; run++) {
      const response = await kind.send(placement);
      status = response.status;
      responseBytes = response.wireBytes;
    }
    await aggregateWritten(kind.route, 1);
    const perRequest = (written - before) / FLUSH_EVERY_REQUESTS;
    console.log(
      `| ${kind.route} (${kind.name}) | ${status} | ${perRequest.toFixed(1)} | ${LAMBDA_TEXT_BYTES} | ${accessLogBytes(kind.route, status, responseBytes)} |`,
    );
  }
} finally {
  stop();
}
