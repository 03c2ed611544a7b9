/**
 * `npm run cost-report`: what a region costs, from measurements.
 *
 * 1. CPU time per request kind, one request at a time (COST_CPU_ROUNDS
 *    rounds of COST_CPU_RUNS requests after COST_CPU_WARMUPS rounds of the
 *    whole mix, as a warm instance that has served a while: V8 compiles the
 *    code it runs often; the least disturbed round counts, since other
 *    processes on the machine inflate CPU time too), on ours in this process, with the DynamoDB requests each sends,
 *    and on the reference's uWSGI worker: Lambda duration at a memory size
 *    is modelled from ours (bill.ts), the self-hosted VMs are
 *    sized from the reference's.
 * 2. `npm start` (PORT, default 8792) with metric records on, a region of
 *    COST_NODES nodes with COST_INSTANCES instances each (default 30)
 *    loaded through the API, and the region benchmark's nova against it
 *    for COST_SECONDS after COST_WARMUP_SECONDS (default 10) unmeasured
 *    (polling, plus COST_BOOTS_PER_NODE_HOUR boots and deletes a node and
 *    hour, far more than a region makes, so that scheduling is sampled
 *    too). Each request's DynamoDB units and log bytes come from the
 *    service's own record of it (what CloudWatch would get), its response
 *    bytes from the answer. A claim's write units are computed from its
 *    items instead (claim-units.ts: DynamoDB Local misreports transactions).
 * 3. Prices them (prices.ts) for the function sizes the stack
 *    deploys: per request kind; per million steady-state requests by
 *    component; the monthly bill of regions of 10, 100, 1,000 and 5,000
 *    nodes at COST_INSTANCES instances a node and BILL_BOOTS_PER_NODE_DAY
 *    boots (and as many deletes) a node a day, behind either front door,
 *    next to upstream Placement on VMs; the break-even region size; Lambda
 *    duration per function by memory size.
 *
 * Log bytes per request beyond the record: COST_ACCESS_LOG_BYTES (API
 * Gateway's access-log line, `npm run log-report`: about 220; 0 unless the
 * stack's `accessLog` context turns the access log on) and
 * COST_LAMBDA_LOG_BYTES (Lambda's own START/END/REPORT lines: 0 at the
 * stack's system log level WARN, 264 in Lambda's text format) let the
 * report price a stack that logs otherwise, such as an older commit.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { App } from 'aws-cdk-lib';
import { ROUTER_TOKEN_CACHE_SECONDS } from '../../infra/constructs/function-url.js';
import { readSettings } from '../../infra/settings.js';
import { ROUTES, routeKey } from '../../shared/http/routes.js';
import type { PlacementHandler } from '../../shared/http/types.js';
import type { HandlerModules } from '../../local/api-gateway-adapter.js';
import { dynamoRequestsSent } from '../../shared/storage/consumed-capacity.js';
import { CANDIDATES_QUERY, KINDS, simulateRegion, type Kind } from '../bench-region/nova.js';
import { LoadedRegion } from '../synthetic-region/api-loader.js';
import { DEFAULT_SHAPE, SyntheticRegion } from '../synthetic-region/region.js';
import { summarise } from '../bench-region/report.js';
import { cpuMsOf, startOurs, startReference } from '../bench-region/targets.js';
import {
  baselineMonthly,
  billedMs,
  breakEven,
  COMPONENTS,
  costPerRequest,
  durationCost,
  DYNAMODB_CALL_MS,
  functionUrl,
  httpApi,
  perMillion,
  provisioned,
  requestsPerNodeHour,
  serverlessMonthly,
  type FrontDoor,
  type MeasuredKind,
  type RequestWork,
} from './bill.js';
import { meanClaimWriteUnits, nodeItemBytes } from './claim-units.js';
import { PlacementClient } from '../../admin/placement-client.js';
import { seededRandom } from '../lib/seeded-random.js';

const { values: options } = parseArgs({ options: { json: { type: 'string' } } });
const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const PORT = env('PORT', 8792);
const NODES = env('COST_NODES', 20);
const SECONDS = env('COST_SECONDS', 120);
const WARMUP_SECONDS = env('COST_WARMUP_SECONDS', 10);
const BOOTS_PER_NODE_HOUR = env('COST_BOOTS_PER_NODE_HOUR', 60);
const BOOTS_PER_NODE_DAY = env('BILL_BOOTS_PER_NODE_DAY', 4);
const CPU_ROUNDS = env('COST_CPU_ROUNDS', 5);
const CPU_RUNS = env('COST_CPU_RUNS', 20);
/**
 * Rounds of every kind before the measured ones. A Lambda instance of a 1,000-node region serves thousands of
 * requests an hour, with V8's optimised code after its first few hundred; a fresh process runs the interpreter's.
 */
const CPU_WARMUPS = env('COST_CPU_WARMUPS', 300);
const LAMBDA_LOG_BYTES = env('COST_LAMBDA_LOG_BYTES', 0);
/** A baseline VM (m7g.large): its vCPUs, and the share of them upstream Placement may use before latency suffers. */
const VM_VCPUS = 2;
const VM_UTILISATION = env('BASELINE_VM_UTILISATION', 0.5);
const SIZES = [10, 100, 1000, 5000];
const MEMORY_SIZES = [128, 256, 512, 1024];
/** Claims' write units are averaged over the instances of this many of the region's nodes. */
const CLAIM_SAMPLE_NODES = 200;
const SHAPE = { ...DEFAULT_SHAPE, instancesPerNode: env('COST_INSTANCES', 30) };

const log = (message: string) => console.error(`[cost-report] ${message}`);
const usd = (value: number) => (value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(2));
const row = (...cells: unknown[]) => `| ${cells.join(' | ')} |`;
const header = (...cells: string[]) => `${row(...cells)}\n${row(...cells.map(() => '---'))}`;
const settings = readSettings(new App().node);
/** The stack writes API Gateway's access log only when asked (`-c accessLog=true`). */
const ACCESS_LOG_BYTES = env('COST_ACCESS_LOG_BYTES', settings.accessLog ? 220 : 0);

function familyOf(kind: Kind) {
  const key = kind.replace(/\?.*$/, '');
  const route = ROUTES.find((candidate) => routeKey(candidate) === key);
  if (route === undefined) throw new Error(`no route for ${kind}`);
  return route.handler;
}
const memoryOf = (kind: Kind) => settings.functions[familyOf(kind)].memoryMb;

/** What the serving process(es) did so far: CPU milliseconds, DynamoDB requests. */
interface Meters {
  cpuMs(): number;
  dynamoCalls(): number;
}

/**
 * CPU time and DynamoDB requests per request of each kind nova sends, one
 * request at a time, on a region of one aggregated node loaded through the
 * API: what a Lambda memory size changes is the computing, not the waiting
 * on DynamoDB, and what limits a VM is the computing.
 */
async function workPerKind(url: string, meters: Meters): Promise<Map<Kind, RequestWork>> {
  const region = new SyntheticRegion(SHAPE);
  const client = new PlacementClient(url, { token: 'admin', timeoutMs: 120_000 });
  const loaded = new LoadedRegion(region, client);
  await loaded.discover();
  // The first node of an aggregate with a sharing provider, so that every polled kind has something to read.
  let index = 0;
  while (region.node(index).aggregate === undefined) index++;
  await loaded.resize(index + 1);
  const node = region.node(index);
  const consumer = region.instancesOf(node)[0]!.uuid;
  const path = `/resource_providers/${node.uuid}`;
  const fresh = Array.from({ length: CPU_ROUNDS * CPU_RUNS + CPU_WARMUPS }, () => randomUUID());
  const claimBody = { allocations: region.allocationsOn(node, 1), project_id: 'cpu', user_id: 'cpu', consumer_generation: null };
  const probes: [Kind, (run: number) => Promise<unknown>][] = [
    [KINDS.providerAllocations, () => client.get(`${path}/allocations`, { version: null })],
    [KINDS.consumerAllocations, () => client.get(`/allocations/${consumer}`, { version: '1.28' })],
    [KINDS.inTree, () => client.get(`/resource_providers?in_tree=${node.uuid}`, { version: '1.14' })],
    [KINDS.sharing, () => client.get(`/resource_providers?member_of=in:${node.aggregate!.uuid}&required=MISC_SHARES_VIA_AGGREGATE`, { version: '1.18' })],
    [KINDS.inventories, () => client.get(`${path}/inventories`, { version: null })],
    [KINDS.aggregates, () => client.get(`${path}/aggregates`, { version: '1.19' })],
    [KINDS.traits, () => client.get(`${path}/traits`, { version: '1.6' })],
    [KINDS.candidates, () => client.get(`/allocation_candidates?${CANDIDATES_QUERY}`, { version: '1.36' })],
    // Claims on fresh consumers, then their deletes.
    [KINDS.claim, (run) => client.put(`/allocations/${fresh[run]}`, claimBody, { version: '1.36' })],
    [KINDS.delete, (run) => client.delete(`/allocations/${fresh[run]}`, { version: null })],
  ];
  // The whole mix, each claim's consumer deleted in the same round, so that the node keeps room.
  for (let warm = 0; warm < CPU_WARMUPS; warm++) for (const [, send] of probes) await send(CPU_ROUNDS * CPU_RUNS + warm);
  const work = new Map<Kind, RequestWork>();
  for (const [kind, send] of probes) {
    let leastCpuMs = Infinity;
    const calls = meters.dynamoCalls();
    for (let round = 0; round < CPU_ROUNDS; round++) {
      const cpu = meters.cpuMs();
      for (let run = 0; run < CPU_RUNS; run++) await send(round * CPU_RUNS + run);
      leastCpuMs = Math.min(leastCpuMs, (meters.cpuMs() - cpu) / CPU_RUNS);
    }
    work.set(kind, { cpuMs: leastCpuMs, dynamoCalls: (meters.dynamoCalls() - calls) / (CPU_ROUNDS * CPU_RUNS) });
  }
  return work;
}

/**
 * Ours, in this process: the CPU time of the handlers' invocations, as Lambda bills them (event in, result out),
 * not the local HTTP server's and the client's around them. One request at a time, so nothing else runs meanwhile
 * but DynamoDB Local, which is another process.
 */
async function ourWork(): Promise<Map<Kind, RequestWork>> {
  const { startLocalService } = await import('../../local/service.js');
  let handlerCpuMs = 0;
  const metered = (handlers: HandlerModules) =>
    Object.fromEntries(
      Object.entries(handlers).map(([name, handler]): [string, PlacementHandler] => [
        name,
        async (event, context) => {
          const start = process.cpuUsage();
          try {
            return await handler(event, context);
          } finally {
            const used = process.cpuUsage(start);
            handlerCpuMs += (used.user + used.system) / 1000;
          }
        },
      ]),
    ) as HandlerModules;
  const service = await startLocalService({ port: 0, wrapHandlers: metered });
  try {
    return await workPerKind(service.url, { cpuMs: () => handlerCpuMs, dynamoCalls: dynamoRequestsSent });
  } finally {
    await service.stop();
  }
}

/** The reference's uWSGI worker (SQLite in the worker: it also does the database's work, which RDS would do). */
async function referenceWork(): Promise<Map<Kind, RequestWork>> {
  const reference = await startReference();
  try {
    return await workPerKind(reference.url, { cpuMs: () => cpuMsOf(reference.pids!()), dynamoCalls: () => 0 });
  } finally {
    await reference.stop();
  }
}

interface RegionRun {
  measured: MeasuredKind[];
  counts: Map<Kind, number>;
  /** What DynamoDB Local reported for a claim, whose units are computed instead. */
  reportedClaimWrites: number;
}

async function measureRegion(work: Map<Kind, RequestWork>): Promise<RegionRun> {
  const target = await startOurs(PORT);
  try {
    const region = new SyntheticRegion(SHAPE);
    const client = new PlacementClient(target.url, { token: 'admin', timeoutMs: 30_000 });
    const loaded = new LoadedRegion(region, client);
    log(`loading ${NODES} nodes`);
    await loaded.resize(NODES);
    log(`running nova for ${SECONDS} s`);
    const run = await simulateRegion(
      client,
      loaded,
      { warmupSeconds: WARMUP_SECONDS, durationSeconds: SECONDS, bootRate: (BOOTS_PER_NODE_HOUR * NODES) / 3600, seed: 7, drainSeconds: 30 },
      seededRandom(7).next,
    );
    // Records reach the pipe after their responses: let the last ones in.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const summary = summarise('ours', NODES, SHAPE.instancesPerNode, run, target.record);
    if (summary.errors > 0) throw new Error(`${summary.errors} requests failed; the measurement is not usable`);
    const claimWrites = meanClaimWriteUnits(region, CLAIM_SAMPLE_NODES);
    let reportedClaimWrites = NaN;
    const measured = summary.kinds.flatMap((kind): MeasuredKind[] => {
      if (!kind.units) return [];
      // A delete writes the claim's items back.
      const transactional = kind.kind === KINDS.claim || kind.kind === KINDS.delete;
      if (kind.kind === KINDS.claim) reportedClaimWrites = kind.units.write;
      return [
        {
          kind: kind.kind,
          read: kind.units.read,
          write: transactional ? claimWrites : kind.units.write,
          // Handler times under the region run's concurrency measure this machine's contention, not a request.
          work: work.get(kind.kind)!,
          logBytes: kind.units.logBytes + LAMBDA_LOG_BYTES,
          responseBytes: kind.responseBytes,
          memoryMb: memoryOf(kind.kind),
        },
      ];
    });
    return { measured, counts: new Map(summary.kinds.map((kind) => [kind.kind, kind.count])), reportedClaimWrites };
  } finally {
    await target.stop();
  }
}

/** The front doors this stack can deploy. */
function frontDoors(measured: MeasuredKind[], mix: Map<Kind, number>): FrontDoor[] {
  const apiGateway = httpApi(ACCESS_LOG_BYTES, settings.functions.authorizer.memoryMb, settings.auth.cacheTtlSeconds);
  const router = settings.functions.router?.memoryMb;
  // A commit from before the function-URL front door has no router to price.
  const total = [...mix.values()].reduce((a, b) => a + b, 0);
  const meanMs = router === undefined ? 0 : measured.reduce((sum, kind) => sum + ((mix.get(kind.kind) ?? 0) / total) * billedMs(kind.work, router), 0);
  const onDemand = router === undefined ? [apiGateway] : [apiGateway, functionUrl(router, meanMs, ROUTER_TOKEN_CACHE_SECONDS)];
  return [...onDemand, ...onDemand.map(provisioned)];
}

/** The JSON key of a front door and capacity mode. */
const jsonKey = (door: FrontDoor) => `${door.name.startsWith('HTTP API') ? 'httpApi' : 'functionUrl'}${door.capacity === 'provisioned' ? 'Provisioned' : ''}`;

function kindTable(measured: MeasuredKind[], counts: Map<Kind, number>, door: FrontDoor): string {
  const lines = [
    header(
      'request',
      'sampled',
      'read units',
      'write units',
      'memory MB',
      'billed ms (modelled)',
      'log bytes',
      'response bytes',
      'USD per million: Lambda requests',
      'Lambda duration',
      'DynamoDB',
      'logs (with access log)',
    ),
  ];
  for (const kind of measured) {
    const each = costPerRequest(kind, door);
    lines.push(
      row(
        kind.kind,
        counts.get(kind.kind),
        kind.read.toFixed(2),
        kind.write.toFixed(2),
        kind.memoryMb,
        billedMs(kind.work, kind.memoryMb),
        kind.logBytes.toFixed(0),
        kind.responseBytes.toFixed(0),
        ...[each.lambdaRequests, each.lambdaDuration, each.dynamo, each.logs].map((value) => (value * 1e6).toFixed(3)),
      ),
    );
  }
  return lines.join('\n');
}

function workTable(ours: Map<Kind, RequestWork>, upstream: Map<Kind, RequestWork>): string {
  const lines = [header('request', 'ours: CPU ms', 'ours: DynamoDB requests', 'reference worker: CPU ms')];
  for (const [kind, work] of ours) lines.push(row(kind, work.cpuMs.toFixed(2), work.dynamoCalls.toFixed(2), upstream.get(kind)!.cpuMs.toFixed(2)));
  return lines.join('\n');
}

/** Per family: the modelled Lambda duration of its share of the mix at each memory size. */
function memoryTable(work: Map<Kind, RequestWork>, mix: Map<Kind, number>): string {
  const families = new Map<string, Kind[]>();
  for (const kind of work.keys()) families.set(familyOf(kind), [...(families.get(familyOf(kind)) ?? []), kind]);
  const lines = [
    header(
      'function',
      'requests (their share of the family)',
      'CPU ms on one core / DynamoDB requests',
      ...MEMORY_SIZES.map((size) => `${size} MB: ms / USD per million`),
      'deployed MB',
    ),
  ];
  for (const [family, kinds] of families) {
    const total = kinds.reduce((sum, kind) => sum + (mix.get(kind) ?? 0), 0);
    const weighted = (value: (kind: Kind) => number) => kinds.reduce((sum, kind) => sum + ((mix.get(kind) ?? 0) / total) * value(kind), 0);
    const described = kinds.map((kind) => `${kind} (${((100 * (mix.get(kind) ?? 0)) / total).toFixed(0)}%)`).join(', ');
    const cells = MEMORY_SIZES.map(
      (size) =>
        `${weighted((kind) => billedMs(work.get(kind)!, size)).toFixed(1)} / ${weighted((kind) => 1e6 * durationCost(work.get(kind)!, size)).toFixed(3)}`,
    );
    const cpu = `${weighted((kind) => work.get(kind)!.cpuMs).toFixed(2)} / ${weighted((kind) => work.get(kind)!.dynamoCalls).toFixed(2)}`;
    lines.push(row(family, described, cpu, ...cells, memoryOf(kinds[0]!)));
  }
  return lines.join('\n');
}

function report(run: RegionRun, ours: Map<Kind, RequestWork>, upstream: Map<Kind, RequestWork>): { text: string; json: unknown } {
  const { measured, counts } = run;
  const mix = requestsPerNodeHour(SHAPE, BOOTS_PER_NODE_DAY / 24);
  const missing = [...mix.keys()].filter((kind) => !measured.some((one) => one.kind === kind));
  if (missing.length > 0) throw new Error(`not measured (run longer or with more nodes): ${missing.join(', ')}`);
  const doors = frontDoors(measured, mix);
  const perHour = [...mix.values()].reduce((a, b) => a + b, 0);
  const referenceCpuMs = [...mix].reduce((sum, [kind, count]) => sum + (count / perHour) * upstream.get(kind)!.cpuMs, 0);
  const vmRps = (VM_VCPUS * 1000 * VM_UTILISATION) / referenceCpuMs;
  const out: string[] = [];

  out.push(
    `Measured: ${NODES} nodes, ${SHAPE.instancesPerNode} instances each, ${SECONDS} s of nova (${BOOTS_PER_NODE_HOUR} boots and deletes a node-hour), ` +
      `local server on DynamoDB Local; durations modelled from the least CPU time of ${CPU_ROUNDS} rounds of ${CPU_RUNS} requests of each kind one at a time after ${CPU_WARMUPS} rounds of them all and ${DYNAMODB_CALL_MS} ms per DynamoDB request; ` +
      `log bytes: the record${LAMBDA_LOG_BYTES > 0 ? ` + ${LAMBDA_LOG_BYTES} of Lambda's own lines` : ''}, plus ${ACCESS_LOG_BYTES} of access log behind the HTTP API.\n`,
  );
  out.push(kindTable(measured, counts, doors[0]!));

  const region = new SyntheticRegion(SHAPE);
  out.push(
    `\nA claim's write units, computed from the items it writes: ${meanClaimWriteUnits(region, CLAIM_SAMPLE_NODES).toFixed(2)} on average over the ` +
      `instances of ${CLAIM_SAMPLE_NODES} nodes (a node's provider item is ${nodeItemBytes(region, 0)} bytes); DynamoDB Local reported ${run.reportedClaimWrites.toFixed(2)}.`,
  );

  out.push(
    `\nnova's requests per node and hour at ${SHAPE.instancesPerNode} instances a node and ${BOOTS_PER_NODE_DAY} boots (and deletes) a node a day: ${perHour.toFixed(0)}\n`,
  );
  out.push(header('request', 'per node-hour', 'share'));
  for (const [kind, count] of mix) out.push(row(kind, count.toFixed(2), `${((100 * count) / perHour).toFixed(2)}%`));

  out.push('\nUSD per million steady-state requests (the mix above, in a 1,000-node region), by component:\n');
  out.push(header('front door', ...COMPONENTS, 'total'));
  for (const door of doors) {
    const cost = perMillion(measured, mix, door, 1000);
    out.push(row(door.name, ...[...COMPONENTS.map((component) => cost[component]), cost.total].map((value) => value.toFixed(3))));
  }

  out.push(
    `\nSelf-hosted upstream Placement: the reference's uWSGI worker used ${referenceCpuMs.toFixed(2)} CPU ms per request of the mix ` +
      `(SQLite in the worker, one request at a time): an m7g.large (${VM_VCPUS} vCPUs) at ${VM_UTILISATION * 100}% serves about ${vmRps.toFixed(0)} requests a second.`,
  );
  out.push(`\nMonthly bill, USD, ${SHAPE.instancesPerNode} instances a node, ${BOOTS_PER_NODE_DAY} boots and deletes a node a day:\n`);
  out.push(
    header(
      'nodes',
      'requests a month',
      ...doors.flatMap((door) => [`serverless, ${door.name}`, 'of which Lambda duration / DynamoDB / logs']),
      'self-hosted upstream (VMs)',
    ),
  );
  for (const nodes of SIZES) {
    const bills = doors.map((door) => serverlessMonthly(measured, mix, nodes, door));
    const own = baselineMonthly(vmRps, measured, mix, nodes);
    out.push(
      row(
        nodes.toLocaleString('en-US'),
        `${(bills[0]!.requests / 1e6).toFixed(1)} M`,
        ...bills.flatMap((bill) => [usd(bill.total), `${usd(bill.lambdaDuration)} / ${usd(bill.dynamo)} / ${usd(bill.logs)}`]),
        `${usd(own.total)} (${own.vms})`,
      ),
    );
  }
  const breakEvens = doors.map((door) => breakEven(measured, mix, door, vmRps));
  doors.forEach((door, index) => {
    const nodes = breakEvens[index];
    out.push(`\nBreak-even with the ${door.name}: ${nodes === undefined ? 'none up to 100,000 nodes' : `${nodes.toLocaleString('en-US')} nodes`}.`);
  });
  const json = {
    perMillion: Object.fromEntries(doors.map((door) => [jsonKey(door), perMillion(measured, mix, door, 1000)])),
    sizes: SIZES.map((nodes) => {
      const bills = doors.map((door) => serverlessMonthly(measured, mix, nodes, door));
      return {
        nodes,
        requestsPerMonth: bills[0]!.requests,
        ...Object.fromEntries(doors.map((door, index) => [jsonKey(door), bills[index]])),
        selfHosted: baselineMonthly(vmRps, measured, mix, nodes),
      };
    }),
    breakEven: Object.fromEntries(doors.map((door, index) => [jsonKey(door), breakEvens[index] ?? null])),
  };

  out.push('\nCPU time (the least disturbed round) and DynamoDB requests per request, one request at a time on this machine:\n');
  out.push(workTable(ours, upstream));
  out.push(`\nLambda duration by memory size, modelled for each function's share of the steady-state mix:\n`);
  out.push(memoryTable(ours, mix));
  return { text: out.join('\n'), json };
}

log('measuring CPU per request, one request at a time: ours, then the reference');
const ours = await ourWork();
const upstream = await referenceWork();
const run = await measureRegion(ours);
const { text, json } = report(run, ours, upstream);
console.log(text);
if (options.json !== undefined) writeFileSync(options.json, `${JSON.stringify(json, null, 2)}\n`);
