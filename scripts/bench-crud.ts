/**
 * `npm run bench`: latency and throughput of the hot CRUD calls through the
 * local server (API Gateway adapter + Lambda handlers + DynamoDB Local).
 * Prints a table; asserts nothing. The units a claim consumes are counted per
 * request, in the metric records: `npm run cost-report` and bench:region
 * report them.
 *
 *   BENCH_REQUESTS (default 400) per operation, BENCH_CONCURRENCY (default 8),
 *   BENCH_PROVIDERS (default 50) the claims are spread over.
 */
import { randomUUID } from 'node:crypto';
import { startLocalService } from '../local/service.js';
import { PlacementClient } from '../admin/placement-client.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PROVIDERS = Number(process.env.BENCH_PROVIDERS ?? 50);

const service = await startLocalService({ port: 0 });
const placement = new PlacementClient(service.url, { version: '1.39' });

async function call(method: string, path: string, body?: unknown): Promise<number> {
  return (await placement.request(method, path, { json: body })).status;
}

async function measure(name: string, request: (n: number) => Promise<number>) {
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const n = next++;
        const t0 = performance.now();
        const status = await request(n);
        latencies.push(performance.now() - t0);
        if (status >= 300) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
  return { name, p50: pct(50), p95: pct(95), throughput: (REQUESTS / seconds).toFixed(0), failures };
}

const providers: string[] = [];
for (let i = 0; i < PROVIDERS; i++) {
  const uuid = randomUUID();
  providers.push(uuid);
  await call('POST', '/resource_providers', { uuid, name: `bench-${uuid}` });
  await call('PUT', `/resource_providers/${uuid}/inventories`, {
    resource_provider_generation: 0,
    inventories: { VCPU: { total: 100000 }, MEMORY_MB: { total: 10000000 }, DISK_GB: { total: 1000000 } },
  });
}
const claim = (provider: string) => ({
  allocations: { [provider]: { resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 } } },
  project_id: 'bench-project',
  user_id: 'bench-user',
  consumer_generation: null,
  consumer_type: 'INSTANCE',
});

const rows = [
  await measure('PUT /allocations/{consumer}', (n) => call('PUT', `/allocations/${randomUUID()}`, claim(providers[n % PROVIDERS]!))),
  await measure('GET /resource_providers/{uuid}/usages', (n) => call('GET', `/resource_providers/${providers[n % PROVIDERS]}/usages`)),
  await measure('GET /usages?project_id=', () => call('GET', '/usages?project_id=bench-project')),
  await measure(`GET /resource_providers (${PROVIDERS} providers)`, () => call('GET', '/resource_providers')),
];
await service.stop();

console.log(`\n${REQUESTS} requests per operation, ${CONCURRENCY} concurrent clients, local server on DynamoDB Local\n`);
console.log('| operation | p50 ms | p95 ms | req/s | non-2xx |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.name} | ${row.p50} | ${row.p95} | ${row.throughput} | ${row.failures} |`);
