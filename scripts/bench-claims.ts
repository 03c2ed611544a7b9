/**
 * `npm run bench:claims -- --target URL --target URL ...`: small claims
 * (one new consumer on one provider, PUT /allocations at 1.38) against
 * several running Placement services side by side, their requests
 * interleaved in short turns so that the machine's drift in speed hits every
 * target alike. Prints p50, p99 and claims a second per target; used to hold
 * the one-transaction path of one version against another.
 *
 *   --requests N     claims per target (default 2000)
 *   --concurrency C  claims in flight per target during its turn (default 8)
 *   --turn T         claims per target before the next target's turn (default 100)
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { PlacementClient } from './lib/placement-client.js';
import { mapConcurrently } from './lib/pool.js';

const { values } = parseArgs({
  options: {
    target: { type: 'string', multiple: true, default: [] },
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    turn: { type: 'string', default: '100' },
  },
});
const targets = values.target;
if (targets.length === 0) throw new Error('give at least one --target URL');
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const turn = Number(values.turn);
/** Claims spread over this many providers per target, as a scheduler spreads instances over hosts. */
const PROVIDERS = 50;

interface Target {
  url: string;
  placement: PlacementClient;
  providers: string[];
  latencies: number[];
  failures: number;
  busyMs: number;
}

async function prepare(url: string): Promise<Target> {
  const placement = new PlacementClient(url, { version: '1.38' });
  const providers: string[] = [];
  for (let n = 0; n < PROVIDERS; n++) {
    const uuid = randomUUID();
    const created = await placement.post('/resource_providers', { uuid, name: `claims-${uuid}` });
    const stocked = await placement.put(`/resource_providers/${uuid}/inventories`, {
      resource_provider_generation: 0,
      inventories: { VCPU: { total: 1_000_000 }, MEMORY_MB: { total: 1_000_000_000 }, DISK_GB: { total: 1_000_000 } },
    });
    if (created.status !== 200 || stocked.status !== 200) throw new Error(`${url}: cannot create providers (${created.status}, ${stocked.status})`);
    providers.push(uuid);
  }
  return { url, placement, providers, latencies: [], failures: 0, busyMs: 0 };
}

async function claims(target: Target, count: number): Promise<void> {
  const started = performance.now();
  await mapConcurrently(Array.from({ length: count }), concurrency, async () => {
    const provider = target.providers[Math.floor(Math.random() * PROVIDERS)]!;
    const response = await target.placement.put(`/allocations/${randomUUID()}`, {
      allocations: { [provider]: { resources: { VCPU: 1, MEMORY_MB: 512, DISK_GB: 1 } } },
      project_id: 'bench-project',
      user_id: 'bench-user',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
    target.latencies.push(response.ms);
    if (response.status !== 204) target.failures++;
  });
  target.busyMs += performance.now() - started;
}

const prepared: Target[] = [];
for (const url of targets) prepared.push(await prepare(url));
for (let done = 0; done < requests; done += turn) {
  for (const target of prepared) await claims(target, Math.min(turn, requests - done));
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
console.log(`\n${requests} claims per target, ${concurrency} in flight, turns of ${turn} alternating between the targets\n`);
console.log('| target | p50 ms | p99 ms | claims/s | non-204 |');
console.log('|---|---|---|---|---|');
for (const target of prepared) {
  const sorted = [...target.latencies].sort((a, b) => a - b);
  const rate = (target.latencies.length / target.busyMs) * 1000;
  console.log(`| ${target.url} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} | ${rate.toFixed(0)} | ${target.failures} |`);
}
