/**
 * GET /allocation_candidates on this service and on the real upstream
 * Placement (Debian's placement 8.0 on SQLite, ../shared/reference), side by
 * side, on the same generated cloud. Prints markdown tables; asserts nothing,
 * but stops if a service does not see the cloud it was given.
 *
 *   npx tsx scripts/bench-candidates.ts
 *   BENCH_SIZES (default 1000,10000) compute nodes per cloud, BENCH_RUNS
 *   (default 20) measured requests per case after 2 warm-ups, BENCH_SEED
 *   (default 42), BENCH_REFERENCE_PORT (default 18788), BENCH_INTERLEAVE=0
 *   times each service's requests in one block instead of alternating them.
 *
 * The cloud (seeded, so both services get the identical one, uuids included):
 * compute nodes with VCPU (32-64, allocation ratio 4), MEMORY_MB and DISK_GB,
 * a few standard traits (HW_CPU_X86_AVX2 on about half), aggregates of 50
 * nodes, a fifth of the nodes with four PF children (two dual-port NICs) of
 * 8 SRIOV_NET_VF each,
 * every fifth aggregate keeping its disk on a sharing provider instead of the
 * nodes, and two instances per node holding 20-40% of its capacity.
 *
 * Loading 10,000 providers through the API takes too long, so both services
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
 * of each request come from the service's metrics lines (PLACEMENT_METRICS).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../local/dynamodb-local.js';
import { seededRandom } from './lib/seeded-random.js';
import { batchWrite } from './lib/batch-write.js';
import { config } from '../shared/config.js';
import { SHARING_TRAIT } from '../shared/domain/standard-catalog.js';
import type { Consumer, Provider } from '../shared/domain/model.js';
import { claimWrites } from '../shared/storage/consumers.js';
import { providerChangeWrites } from '../shared/storage/providers.js';
import type { Item } from '../shared/storage/reads.js';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const WARMUPS = 2;
const INTERLEAVE = process.env.BENCH_INTERLEAVE !== '0';
const SEED = Number(process.env.BENCH_SEED ?? 42);
const REFERENCE_PORT = Number(process.env.BENCH_REFERENCE_PORT ?? 18788);
const REFERENCE_STATE = join(tmpdir(), `bench-candidates-reference-${REFERENCE_PORT}`);
const REFERENCE_SCRIPTS = join(dirname(fileURLToPath(import.meta.url)), '../../shared/reference');
const WIDE_TIMEOUT_MS = 120_000;

const AGGREGATE_SIZE = 50;
const SHARED_STORAGE_EVERY = 5;
const NESTED_SHARE = 0.2;
const PFS_PER_NESTED_NODE = 4;
const INSTANCES_PER_NODE = 2;
const PROJECT = 'bench-project';
const USER = 'bench-user';
const CONSUMER_TYPE = 'INSTANCE';

const HEADERS = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };
const FLAVOR = 'resources=VCPU:2,MEMORY_MB:4096,DISK_GB:40';

// ---------------------------------------------------------------- the cloud

interface CloudProvider {
  uuid: string;
  name: string;
  parentUuid: string | null;
  rootUuid: string;
  inventories: Record<string, { total: number; allocation_ratio: number }>;
  traits: string[];
  aggregates: string[];
  children: string[];
}

interface Cloud {
  providers: CloudProvider[];
  /** Consumer uuid to provider uuid to the resources held there. */
  consumers: Map<string, Record<string, Record<string, number>>>;
  aggregates: string[];
}

function buildCloud(computeNodes: number, seed: number): Cloud {
  const { next: random, int, uuid } = seededRandom(seed);
  const provider = (name: string, parent: CloudProvider | null, fields: Partial<CloudProvider>): CloudProvider => {
    const id = uuid();
    const tree = { parentUuid: parent?.uuid ?? null, rootUuid: parent?.rootUuid ?? id };
    return { uuid: id, name, ...tree, inventories: {}, traits: [], aggregates: [], children: [], ...fields };
  };
  // Splits a used amount over the instances of a node.
  const shares = (amount: number) => {
    const upTo = (k: number) => Math.floor((amount * k) / INSTANCES_PER_NODE);
    return Array.from({ length: INSTANCES_PER_NODE }, (_, k) => upTo(k + 1) - upTo(k));
  };

  const aggregates = Array.from({ length: Math.ceil(computeNodes / AGGREGATE_SIZE) }, uuid);
  const providers: CloudProvider[] = [];
  const sharedDisk = new Map<number, CloudProvider>();
  aggregates.forEach((aggregate, n) => {
    if (n % SHARED_STORAGE_EVERY !== 0) return;
    const storage = provider(`shared-disk-${n}`, null, {
      inventories: { DISK_GB: { total: 0, allocation_ratio: 1 } },
      traits: [SHARING_TRAIT],
      aggregates: [aggregate],
    });
    sharedDisk.set(n, storage);
    providers.push(storage);
  });

  const consumers: Cloud['consumers'] = new Map();
  for (let n = 0; n < computeNodes; n++) {
    const aggregate = Math.floor(n / AGGREGATE_SIZE);
    const storage = sharedDisk.get(aggregate);
    const disk = int(1000, 2000);
    const traits = ['COMPUTE_NODE', 'HW_CPU_X86_SSE42'];
    if (random() < 0.5) traits.push('HW_CPU_X86_AVX2');
    if (random() < 0.3) traits.push('COMPUTE_VOLUME_MULTI_ATTACH');
    const node = provider(`cn-${n}`, null, {
      inventories: {
        VCPU: { total: int(32, 64), allocation_ratio: 4 },
        MEMORY_MB: { total: 1024 * int(128, 256), allocation_ratio: 1 },
        ...(storage ? {} : { DISK_GB: { total: disk, allocation_ratio: 1 } }),
      },
      traits,
      aggregates: [aggregates[aggregate]!],
    });
    // A node of a shared-storage aggregate brings its disk to the sharing provider.
    if (storage) storage.inventories.DISK_GB!.total += disk;
    providers.push(node);
    const pf = (k: number) => provider(`cn-${n}-pf${k}`, node, { inventories: { SRIOV_NET_VF: { total: 8, allocation_ratio: 1 } }, traits: ['HW_NIC_SRIOV'] });
    const pfs = random() < NESTED_SHARE ? Array.from({ length: PFS_PER_NESTED_NODE }, (_, k) => pf(k)) : [];
    node.children = pfs.map((pf) => pf.uuid);
    providers.push(...pfs);

    const used = 0.2 + 0.2 * random();
    const usedOf = (resourceClass: string) => {
      const { total, allocation_ratio } = node.inventories[resourceClass]!;
      return shares(Math.round(total * allocation_ratio * used));
    };
    const [vcpu, memory] = [usedOf('VCPU'), usedOf('MEMORY_MB')];
    const diskUsed = shares(Math.round(disk * used));
    for (let k = 0; k < INSTANCES_PER_NODE; k++) {
      const allocations: Record<string, Record<string, number>> = { [node.uuid]: { VCPU: vcpu[k]!, MEMORY_MB: memory[k]! } };
      if (storage) allocations[storage.uuid] = { DISK_GB: diskUsed[k]! };
      else allocations[node.uuid]!.DISK_GB = diskUsed[k]!;
      if (pfs[k]) allocations[pfs[k]!.uuid] = { SRIOV_NET_VF: Math.round(8 * used) };
      consumers.set(uuid(), allocations);
    }
  }
  return { providers, consumers, aggregates };
}

function usagesOf(cloud: Cloud): Map<string, Record<string, number>> {
  const usages = new Map<string, Record<string, number>>();
  for (const allocations of cloud.consumers.values()) {
    for (const [provider, resources] of Object.entries(allocations)) {
      const usage = usages.get(provider) ?? {};
      for (const [resourceClass, amount] of Object.entries(resources)) usage[resourceClass] = (usage[resourceClass] ?? 0) + amount;
      usages.set(provider, usage);
    }
  }
  return usages;
}

// ---------------------------------------------------------------- loading ours

/** The items the API would write for the cloud: providers with names and search entries, consumers, allocations. */
function ourItems(cloud: Cloud, usages: Map<string, Record<string, number>>): Item[] {
  const now = new Date().toISOString();
  const items: Item[] = [];
  for (const source of cloud.providers) {
    const provider: Provider = {
      ...source,
      generation: 1,
      inventories: Object.fromEntries(
        Object.entries(source.inventories).map(([resourceClass, { total, allocation_ratio }]) => [
          resourceClass,
          { total, reserved: 0, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio },
        ]),
      ),
      usages: usages.get(source.uuid) ?? {},
      createdAt: now,
      updatedAt: now,
    };
    // Only the Puts: the parents' child links are already in `children`.
    for (const write of providerChangeWrites(undefined, provider)) if (write.item.Put) items.push(write.item.Put.Item!);
  }
  for (const [uuid, allocations] of cloud.consumers) {
    const owner = { projectId: PROJECT, userId: USER, consumerType: CONSUMER_TYPE };
    const after: Consumer = { uuid, ...owner, generation: 1, allocations, createdAt: now, updatedAt: now };
    // The providers' usage is already in their items: only the consumer's own writes (all Puts).
    for (const write of claimWrites([{ before: undefined, after }], [], now)) items.push(write.item.Put!.Item!);
  }
  return items;
}

// ---------------------------------------------------------------- our service

interface RequestUsage {
  items: number;
  read: number;
}

interface OurService {
  url: string;
  /** What one request read, from the metrics line the service printed for it. */
  usage(requestId: string): Promise<RequestUsage>;
  stop(): Promise<void>;
}

/** Our service in a process of its own, on a fresh DynamoDB Local; the storage client of this process is pointed at it for loading. */
async function startOurService(): Promise<OurService> {
  const port = await freeLoopbackPort();
  const env = { ...process.env, PORT: String(port), PLACEMENT_METRICS: 'true', PLACEMENT_DYNAMODB_ENDPOINT: '', NODE_NO_WARNINGS: '1' };
  const entry = join(dirname(fileURLToPath(import.meta.url)), '..', 'local', 'start.ts');
  const running = spawn(process.execPath, [...process.execArgv, entry], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const usages = new Map<string, RequestUsage>();
  let buffered = '';
  const listening = new Promise<string>((resolve, reject) => {
    running.once('exit', (code) => reject(new Error(`our service exited with ${code}`)));
    running.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const endpoint = /DynamoDB at (\S+)\)/.exec(line)?.[1];
        if (endpoint) resolve(endpoint);
        if (!line.startsWith('{')) continue;
        const record = JSON.parse(line) as Record<string, unknown>;
        if (record._aws && typeof record.requestId === 'string') {
          usages.set(record.requestId, { items: record.itemsRead as number, read: record.ReadCapacityUnits as number });
        }
      }
    });
  });
  process.env.PLACEMENT_DYNAMODB_ENDPOINT = await listening;
  return {
    url: `http://127.0.0.1:${port}`,
    async usage(requestId) {
      // The line is written before the response, but the pipe may deliver it a little later.
      for (let waited = 0; !usages.has(requestId) && waited < 2000; waited += 5) await sleep(5);
      const usage = usages.get(requestId) ?? fail(`no metrics line for request ${requestId}`);
      usages.delete(requestId);
      return usage;
    },
    stop: () =>
      new Promise((resolve) => {
        if (running.exitCode !== null) return resolve();
        running.once('exit', () => resolve());
        running.kill('SIGTERM');
      }),
  };
}

// ---------------------------------------------------------------- the reference

function referenceScript(name: 'start' | 'stop'): string {
  return execFileSync('bash', [join(REFERENCE_SCRIPTS, `${name}-reference.sh`), '--port', String(REFERENCE_PORT), '--state-dir', REFERENCE_STATE], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** A fresh reference server (new SQLite database); stops one left on our port first. */
function startReference(): string {
  referenceScript('stop');
  return /^URL=(\S+)$/m.exec(referenceScript('start'))?.[1] ?? fail('start-reference.sh printed no URL');
}

const stopReference = () => referenceScript('stop');
const referenceDatabase = () => join(REFERENCE_STATE, 'placement.sqlite');
const sqlite = (sql: string) => execFileSync('sqlite3', ['-batch', referenceDatabase()], { input: sql, encoding: 'utf8', maxBuffer: 1 << 26 });
const quote = (value: string | number | null) => (value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`);

/** Name to id, as the server synced them at start (resource classes follow os-resource-classes' order). */
function referenceIds(table: 'resource_classes' | 'traits'): Map<string, number> {
  const rows = sqlite(`SELECT name, id FROM ${table};`).trim().split('\n');
  return new Map(rows.map((row) => [row.split('|')[0]!, Number(row.split('|')[1])]));
}

/** The same cloud as rows of upstream's schema, in one transaction; returns the number of rows. */
function loadReference(cloud: Cloud): number {
  const classIds = referenceIds('resource_classes');
  const traitIds = referenceIds('traits');
  const id = (ids: Map<string, number>, name: string) => ids.get(name) ?? fail(`the reference does not know ${name}`);
  // SQLAlchemy's SQLite DATETIME format.
  const now = `${new Date().toISOString().replace('T', ' ').replace('Z', '')}000`;
  const tables: Record<string, { columns: string; rows: (string | number | null)[][] }> = {
    projects: { columns: 'id, external_id, created_at', rows: [[1, PROJECT, now]] },
    users: { columns: 'id, external_id, created_at', rows: [[1, USER, now]] },
    consumer_types: { columns: 'id, name, created_at', rows: [[1, CONSUMER_TYPE, now]] },
    placement_aggregates: { columns: 'id, uuid, created_at', rows: cloud.aggregates.map((uuid, n) => [n + 1, uuid, now]) },
    resource_providers: { columns: 'id, uuid, name, generation, root_provider_id, parent_provider_id, created_at', rows: [] },
    inventories: {
      columns: 'resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at',
      rows: [],
    },
    resource_provider_traits: { columns: 'trait_id, resource_provider_id, created_at', rows: [] },
    resource_provider_aggregates: { columns: 'resource_provider_id, aggregate_id, created_at', rows: [] },
    consumers: { columns: 'id, uuid, project_id, user_id, generation, consumer_type_id, created_at', rows: [] },
    allocations: { columns: 'resource_provider_id, consumer_id, resource_class_id, used, created_at', rows: [] },
  };
  const providerIds = new Map(cloud.providers.map((provider, n) => [provider.uuid, n + 1]));
  const aggregateIds = new Map(cloud.aggregates.map((uuid, n) => [uuid, n + 1]));
  for (const provider of cloud.providers) {
    const rp = providerIds.get(provider.uuid)!;
    const parent = provider.parentUuid === null ? null : providerIds.get(provider.parentUuid)!;
    tables.resource_providers!.rows.push([rp, provider.uuid, provider.name, 1, providerIds.get(provider.rootUuid)!, parent, now]);
    for (const [resourceClass, { total, allocation_ratio }] of Object.entries(provider.inventories)) {
      tables.inventories!.rows.push([rp, id(classIds, resourceClass), total, 0, 1, total, 1, allocation_ratio, now]);
    }
    for (const trait of provider.traits) tables.resource_provider_traits!.rows.push([id(traitIds, trait), rp, now]);
    for (const aggregate of provider.aggregates) tables.resource_provider_aggregates!.rows.push([rp, aggregateIds.get(aggregate)!, now]);
  }
  let consumerId = 0;
  for (const [uuid, allocations] of cloud.consumers) {
    tables.consumers!.rows.push([++consumerId, uuid, 1, 1, 1, 1, now]);
    for (const [provider, resources] of Object.entries(allocations)) {
      for (const [resourceClass, used] of Object.entries(resources)) {
        tables.allocations!.rows.push([providerIds.get(provider)!, uuid, id(classIds, resourceClass), used, now]);
      }
    }
  }
  const statements = ['BEGIN;'];
  let rows = 0;
  for (const [table, { columns, rows: values }] of Object.entries(tables)) {
    rows += values.length;
    for (let start = 0; start < values.length; start += 500) {
      const chunk = values.slice(start, start + 500).map((row) => `(${row.map(quote).join(', ')})`);
      statements.push(`INSERT INTO ${table} (${columns}) VALUES\n${chunk.join(',\n')};`);
    }
  }
  statements.push('COMMIT;');
  sqlite(statements.join('\n'));
  return rows;
}

// ---------------------------------------------------------------- requests

interface Measured {
  p50: number;
  p95: number;
  count: number;
  /** Ours only: DynamoDB items read and read units consumed per request (mean). */
  items: number;
  reads: number;
  /** The last response, for checks. */
  body: any;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fail = (message: string): never => {
  throw new Error(message);
};
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** One request; `ms` runs until the whole body has arrived, before the client parses it. */
async function api(url: string, method: string, path: string, body?: unknown, signal?: AbortSignal) {
  const started = performance.now();
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...HEADERS, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  const ms = performance.now() - started;
  const requestId = response.headers.get('x-openstack-request-id') ?? '';
  return { status: response.status, ms, text, body: text ? JSON.parse(text) : undefined, requestId };
}

async function get(url: string, path: string) {
  const response = await api(url, 'GET', path);
  if (response.status !== 200) fail(`GET ${url}${path}: ${response.status} ${response.text.slice(0, 300)}`);
  return response;
}

/** A service to time; what each request read comes from `usage` when the service reports it (ours). */
interface Target {
  url: string;
  usage?: OurService['usage'];
}

/**
 * Sequential requests, one at a time. With several targets, each run sends
 * one request to each in turn (unless BENCH_INTERLEAVE=0), so that the
 * machine's drift in speed (up to 40% over minutes on the development VM)
 * and its slower start after an idle spell hit every service alike.
 */
async function measure(targets: Target[], path: string): Promise<Measured[]> {
  const samples = targets.map(() => ({ latencies: [] as number[], items: [] as number[], reads: [] as number[], body: undefined as any }));
  const request = async (n: number, run: number) => {
    const { url, usage } = targets[n]!;
    const response = await get(url, path);
    const consumed = usage ? await usage(response.requestId) : { items: 0, read: 0 };
    const sample = samples[n]!;
    sample.body = response.body;
    if (run < 0) return;
    sample.latencies.push(response.ms);
    sample.items.push(consumed.items);
    sample.reads.push(consumed.read);
  };
  if (INTERLEAVE) {
    for (let run = -WARMUPS; run < RUNS; run++) for (let n = 0; n < targets.length; n++) await request(n, run);
  } else {
    for (let n = 0; n < targets.length; n++) for (let run = -WARMUPS; run < RUNS; run++) await request(n, run);
  }
  return samples.map(({ latencies, items, reads, body }) => {
    latencies.sort((a, b) => a - b);
    return {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      count: body.allocation_requests.length,
      items: mean(items),
      reads: mean(reads),
      body,
    };
  });
}

// ---------------------------------------------------------------- one size

interface CaseRow {
  name: string;
  ours: Omit<Measured, 'body'>;
  reference: Omit<Measured, 'body'>;
}

interface SizeResult {
  size: number;
  providers: number;
  consumers: number;
  ourItems: number;
  ourLoadSeconds: number;
  referenceRows: number;
  referenceLoadSeconds: number;
  cases: CaseRow[];
  checks: string[];
}

const withoutBody = ({ body: _body, ...rest }: Measured) => rest;
const seconds = (started: number) => (performance.now() - started) / 1000;
/** Candidates as comparable strings, whatever order a service lists providers and classes in. */
const candidateSet = (body: any) =>
  new Set<string>(
    body.allocation_requests.map((request: any) =>
      Object.entries(request.allocations as Record<string, { resources: Record<string, number> }>)
        .flatMap(([provider, { resources }]) => Object.entries(resources).map(([resourceClass, amount]) => `${provider}/${resourceClass}/${amount}`))
        .sort()
        .join(','),
    ),
  );

async function runSize(size: number, service: OurService, referenceUrl: string): Promise<SizeResult> {
  const cloud = buildCloud(size, SEED);
  const usages = usagesOf(cloud);
  log(`N=${size}: ${cloud.providers.length} providers, ${cloud.consumers.size} consumers`);

  let started = performance.now();
  const items = ourItems(cloud, usages);
  await batchWrite(items);
  const ourLoadSeconds = seconds(started);
  log(`N=${size}: ours loaded, ${items.length} items in ${ourLoadSeconds.toFixed(1)} s`);
  started = performance.now();
  const referenceRows = loadReference(cloud);
  const referenceLoadSeconds = seconds(started);
  log(`N=${size}: reference loaded, ${referenceRows} rows in ${referenceLoadSeconds.toFixed(1)} s`);

  const checks: string[] = [];
  for (const [name, url] of [
    ['ours', service.url],
    ['reference', referenceUrl],
  ] as const) {
    const listed = (await get(url, '/resource_providers')).body.resource_providers.length;
    if (listed !== cloud.providers.length) fail(`${name} lists ${listed} providers, the cloud has ${cloud.providers.length}`);
    // A nested node, one of its PFs and a sharing provider: the usages the API reports are the cloud's.
    const nested = cloud.providers.find((provider) => provider.children.length > 0)!;
    const samples = [nested, cloud.providers.find((provider) => provider.parentUuid === nested.uuid)!, cloud.providers[0]!];
    for (const provider of samples) {
      const reported = (await get(url, `/resource_providers/${provider.uuid}/usages`)).body.usages;
      const unused = Object.fromEntries(Object.keys(provider.inventories).map((resourceClass) => [resourceClass, 0]));
      const expected = { ...unused, ...usages.get(provider.uuid) };
      if (JSON.stringify(Object.entries(reported).sort()) !== JSON.stringify(Object.entries(expected).sort())) {
        fail(`${name}: usages of ${provider.name} are ${JSON.stringify(reported)}, expected ${JSON.stringify(expected)}`);
      }
    }
    checks.push(`N=${size} ${name}: GET /resource_providers lists all ${listed} providers; sampled usages match the cloud`);
  }

  const requests = [
    ['(a) nova-like', `${FLAVOR}&limit=1000`],
    ['(b) + required=AVX2 & member_of', `${FLAVOR}&required=HW_CPU_X86_AVX2&member_of=${cloud.aggregates[0]}&limit=1000`],
    ['(c) granular nested, isolate', `${FLAVOR}&resources1=SRIOV_NET_VF:1&resources2=SRIOV_NET_VF:1&group_policy=isolate&limit=1000`],
  ] as const;
  const cases: CaseRow[] = [];
  for (const [name, query] of requests) {
    log(`N=${size}: ${name}`);
    const [ours, reference] = await measure([service, { url: referenceUrl }], `/allocation_candidates?${query}`);
    cases.push({ name, ours: withoutBody(ours), reference: withoutBody(reference) });
    // Below the limit both must find the very same candidates.
    if (reference.count < 1000) {
      const same = JSON.stringify([...candidateSet(ours.body)].sort()) === JSON.stringify([...candidateSet(reference.body)].sort());
      checks.push(`N=${size} ${name}: ${same ? 'same' : 'DIFFERENT'} candidates on both (${ours.count} / ${reference.count})`);
    }
  }
  return {
    size,
    providers: cloud.providers.length,
    consumers: cloud.consumers.size,
    ourItems: items.length,
    ourLoadSeconds,
    referenceRows,
    referenceLoadSeconds,
    cases,
    checks,
  };
}

// ---------------------------------------------------------------- the wide tree

interface WideResult {
  limited: Omit<Measured, 'body'> & { invalid: number; distinct: number };
  unlimited: { status: number; count: number; bytes: number; ms: number; items: number; invalid: number };
  reference: { status: number; count: number; ms: number } | 'timed out';
}

const WIDE_CHILDREN = 8;
const WIDE_QUERY = `${Array.from({ length: WIDE_CHILDREN }, (_, n) => `resources${n + 1}=CUSTOM_WIDE:1`).join('&')}&group_policy=isolate`;

/** One root with 8 children of one CUSTOM_WIDE each, through the API; returns the children. */
async function createWideTree(url: string): Promise<Set<string>> {
  const expect = async (response: Promise<{ status: number; text: string; body: any }>, what: string) => {
    const { status, text, body } = await response;
    if (status >= 300) fail(`${what}: ${status} ${text.slice(0, 300)}`);
    return body;
  };
  await expect(api(url, 'PUT', '/resource_classes/CUSTOM_WIDE'), 'PUT /resource_classes/CUSTOM_WIDE');
  const root = (await expect(api(url, 'POST', '/resource_providers', { name: 'wide-root' }), 'POST root')).uuid as string;
  const children = new Set<string>();
  for (let n = 0; n < WIDE_CHILDREN; n++) {
    const child = await expect(api(url, 'POST', '/resource_providers', { name: `wide-${n}`, parent_provider_uuid: root }), 'POST child');
    const inventories = { resource_provider_generation: child.generation, inventories: { CUSTOM_WIDE: { total: 1 } } };
    await expect(api(url, 'PUT', `/resource_providers/${child.uuid}/inventories`, inventories), 'PUT inventories');
    children.add(child.uuid);
  }
  return children;
}

/** Valid: 8 distinct children, one unit each, each group mapped to its own one. */
function invalidWideCandidates(body: any, children: Set<string>): number {
  return body.allocation_requests.filter((request: any) => {
    const allocations = Object.entries(request.allocations) as [string, any][];
    const mapped = Object.values(request.mappings).flat();
    return (
      allocations.length !== WIDE_CHILDREN ||
      !allocations.every(([uuid, { resources }]) => children.has(uuid) && JSON.stringify(resources) === '{"CUSTOM_WIDE":1}') ||
      Object.keys(request.mappings).length !== WIDE_CHILDREN ||
      new Set(mapped).size !== WIDE_CHILDREN
    );
  }).length;
}

async function runWide(service: OurService, referenceUrl: string): Promise<WideResult> {
  const children = await createWideTree(service.url);
  log('wide tree: ours, limit=1000');
  const [{ body, ...limited }] = await measure([service], `/allocation_candidates?${WIDE_QUERY}&limit=1000`);
  const distinct = new Set(body.allocation_requests.map((request: any) => JSON.stringify(request.mappings))).size;

  log('wide tree: ours, no limit');
  const whole = await api(service.url, 'GET', `/allocation_candidates?${WIDE_QUERY}`);
  const unlimited = {
    status: whole.status,
    count: whole.body?.allocation_requests?.length ?? 0,
    bytes: Buffer.byteLength(whole.text),
    ms: whole.ms,
    items: (await service.usage(whole.requestId)).items,
    invalid: whole.status === 200 ? invalidWideCandidates(whole.body, children) : 0,
  };

  log(`wide tree: reference, limit=1000 (gives up after ${WIDE_TIMEOUT_MS / 1000} s)`);
  await createWideTree(referenceUrl);
  let reference: WideResult['reference'];
  try {
    const answer = await api(referenceUrl, 'GET', `/allocation_candidates?${WIDE_QUERY}&limit=1000`, undefined, AbortSignal.timeout(WIDE_TIMEOUT_MS));
    reference = { status: answer.status, count: answer.body?.allocation_requests?.length ?? 0, ms: answer.ms };
  } catch (error) {
    if ((error as Error).name !== 'TimeoutError') throw error;
    reference = 'timed out';
  }
  return { limited: { ...limited, invalid: invalidWideCandidates(body, children), distinct }, unlimited, reference };
}

// ---------------------------------------------------------------- processes

const log = (message: string) => console.error(`[bench-candidates] ${message}`);

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
    out.push(row(s.size, s.providers, s.consumers, s.ourItems, s.ourLoadSeconds.toFixed(1), s.referenceRows, s.referenceLoadSeconds.toFixed(1)));
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
  out.push(`\nWide tree: one root, ${WIDE_CHILDREN} children of 1 CUSTOM_WIDE each; ${groups} (40320 valid candidates).\n`);
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
