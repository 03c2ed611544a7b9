/** The two services side by side: ours (`npm start`'s entry point in a process of its own) and the reference, loaded with SQL. */
import { execFileSync, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../../local/dynamodb-local.js';
import type { Region } from '../../admin/region-copy/region.js';
import { REFERENCE_PORT, REFERENCE_STATE, REFERENCE_SCRIPTS } from './settings.js';
import { parseRequestRecord } from '../../shared/http/middleware/metrics.js';
import { sleep, fail, type RequestUsage } from './requests.js';

// ---------------------------------------------------------------- our service

export interface OurService {
  url: string;
  /** What one request read, from the request record the service printed for it. */
  usage(requestId: string): Promise<RequestUsage>;
  stop(): Promise<void>;
}

/** Our service in a process of its own, on a fresh DynamoDB Local; the storage client of this process is pointed at it for loading. */
export async function startOurService(): Promise<OurService> {
  const port = await freeLoopbackPort();
  const env = { ...process.env, PORT: String(port), PLACEMENT_REQUEST_RECORDS: 'true', PLACEMENT_DYNAMODB_ENDPOINT: '', NODE_NO_WARNINGS: '1' };
  const entry = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'local', 'start.ts');
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
        const record = parseRequestRecord(line);
        if (record?.requestId !== undefined) usages.set(record.requestId, { items: record.itemsRead, read: record.ReadCapacityUnits });
      }
    });
  });
  process.env.PLACEMENT_DYNAMODB_ENDPOINT = await listening;
  return {
    url: `http://127.0.0.1:${port}`,
    async usage(requestId) {
      // The line is written before the response, but the pipe may deliver it a little later.
      for (let waited = 0; !usages.has(requestId) && waited < 2000; waited += 5) await sleep(5);
      const usage = usages.get(requestId) ?? fail(`no request record for request ${requestId}`);
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
export function startReference(): string {
  referenceScript('stop');
  return /^URL=(\S+)$/m.exec(referenceScript('start'))?.[1] ?? fail('start-reference.sh printed no URL');
}

export const stopReference = () => referenceScript('stop');
const referenceDatabase = () => join(REFERENCE_STATE, 'placement.sqlite');
const sqlite = (sql: string) => execFileSync('sqlite3', ['-batch', referenceDatabase()], { input: sql, encoding: 'utf8', maxBuffer: 1 << 26 });
const quote = (value: string | number | null) => (value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${value.replace(/'/g, "''")}'`);

/** Name to id, as the server synced them at start (resource classes follow os-resource-classes' order). */
function referenceIds(table: 'resource_classes' | 'traits'): Map<string, number> {
  const rows = sqlite(`SELECT name, id FROM ${table};`).trim().split('\n');
  return new Map(rows.map((row) => [row.split('|')[0]!, Number(row.split('|')[1])]));
}

/** The same region as rows of upstream's schema, in one transaction; returns the number of rows. */
export function loadReference(region: Region): number {
  const classIds = referenceIds('resource_classes');
  const traitIds = referenceIds('traits');
  const id = (ids: Map<string, number>, name: string) => ids.get(name) ?? fail(`the reference does not know ${name}`);
  // SQLAlchemy's SQLite DATETIME format.
  const now = `${new Date().toISOString().replace('T', ' ').replace('Z', '')}000`;
  const numbered = (values: Iterable<string>) => new Map([...new Set(values)].map((value, n) => [value, n + 1]));
  const projectIds = numbered(region.consumers.map((consumer) => consumer.project_id));
  const userIds = numbered(region.consumers.map((consumer) => consumer.user_id));
  const typeIds = numbered(region.consumers.flatMap((consumer) => (consumer.consumer_type === null ? [] : [consumer.consumer_type])));
  const aggregateIds = numbered(region.providers.flatMap((provider) => provider.aggregates));
  const providerIds = numbered(region.providers.map((provider) => provider.uuid));
  const named = (ids: Map<string, number>) => [...ids].map(([value, n]) => [n, value, now]);
  const tables: Record<string, { columns: string; rows: (string | number | null)[][] }> = {
    projects: { columns: 'id, external_id, created_at', rows: named(projectIds) },
    users: { columns: 'id, external_id, created_at', rows: named(userIds) },
    consumer_types: { columns: 'id, name, created_at', rows: named(typeIds) },
    placement_aggregates: { columns: 'id, uuid, created_at', rows: named(aggregateIds) },
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
  const parents = new Map(region.providers.map((provider) => [provider.uuid, provider.parent_provider_uuid]));
  const rootOf = (uuid: string): string => (parents.get(uuid) ? rootOf(parents.get(uuid)!) : uuid);
  for (const provider of region.providers) {
    const rp = providerIds.get(provider.uuid)!;
    const parent = provider.parent_provider_uuid === null ? null : providerIds.get(provider.parent_provider_uuid)!;
    tables.resource_providers!.rows.push([rp, provider.uuid, provider.name, 1, providerIds.get(rootOf(provider.uuid))!, parent, now]);
    for (const [resourceClass, { total, reserved, min_unit, max_unit, step_size, allocation_ratio }] of Object.entries(provider.inventories)) {
      tables.inventories!.rows.push([rp, id(classIds, resourceClass), total, reserved, min_unit, max_unit, step_size, allocation_ratio, now]);
    }
    for (const trait of provider.traits) tables.resource_provider_traits!.rows.push([id(traitIds, trait), rp, now]);
    for (const aggregate of provider.aggregates) tables.resource_provider_aggregates!.rows.push([rp, aggregateIds.get(aggregate)!, now]);
  }
  let consumerId = 0;
  for (const { uuid, project_id, user_id, consumer_type, allocations } of region.consumers) {
    const type = consumer_type === null ? null : typeIds.get(consumer_type)!;
    tables.consumers!.rows.push([++consumerId, uuid, projectIds.get(project_id)!, userIds.get(user_id)!, 1, type, now]);
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
