/**
 * The services a run talks to: any URL, or one this script starts (ours with
 * `npm start`, the reference with ../shared/reference), and for ours the
 * metric records it prints, which say what each request cost in DynamoDB
 * units, handler time and log bytes.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlacementClient } from '../../admin/placement-client.js';
import { freeLoopbackPort } from '../../local/dynamodb-local.js';
import { parseRequestRecord } from '../../shared/http/middleware/metrics.js';
import type { RequestRecord } from './report.js';

export interface Target {
  name: string;
  url: string;
  /** The service's record of a request, when its records are available. */
  record?: (requestId: string) => RequestRecord | undefined;
  /** The processes serving requests, when this script started them and can see them. */
  pids?: () => number[];
  stop(): Promise<void>;
}

const REPOSITORY = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** ../shared/reference of the checkout, or of the main one when this is a worktree beside it. */
function referenceScripts(): string {
  for (let directory = dirname(REPOSITORY); directory !== dirname(directory); directory = dirname(directory)) {
    const scripts = join(directory, 'shared/reference');
    if (existsSync(join(scripts, 'start-reference.sh'))) return scripts;
  }
  throw new Error(`no shared/reference/start-reference.sh above ${REPOSITORY}`);
}

/**
 * Collects a service's request records and its metric aggregates: a
 * request's log bytes are its share of its route's aggregates (the bytes of
 * the records written so far over the requests they counted), what
 * CloudWatch Logs ingests for it.
 */
class Records {
  private readonly byRequest = new Map<string, RequestRecord & { route: string }>();
  private readonly aggregated = new Map<string, { bytes: number; requests: number }>();
  private partial = '';

  add(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop()!;
    for (const output of lines) {
      // The bundles' runtime prefixes each function's output with its name.
      const line = output.replace(/^\[[^\]]*\] /, '');
      const request = parseRequestRecord(line);
      if (request?.requestId !== undefined) {
        this.byRequest.set(request.requestId, {
          route: request.route,
          read: request.ReadCapacityUnits,
          write: request.WriteCapacityUnits,
          handlerMs: request.Latency,
          logBytes: 0,
          dynamoRequests: request.dynamoRequests,
          criticalPath: request.criticalPath,
        });
        continue;
      }
      if (!line.startsWith('{') || !line.includes('"_aws"')) continue;
      const aggregate = JSON.parse(line) as { Route?: string; Latency?: number | number[] };
      if (aggregate.Route === undefined || aggregate.Latency === undefined) continue;
      const route = this.aggregated.get(aggregate.Route) ?? { bytes: 0, requests: 0 };
      route.bytes += Buffer.byteLength(line) + 1;
      route.requests += Array.isArray(aggregate.Latency) ? aggregate.Latency.length : 1;
      this.aggregated.set(aggregate.Route, route);
    }
  }

  get(requestId: string): RequestRecord | undefined {
    const record = this.byRequest.get(requestId);
    if (record === undefined) return undefined;
    const route = this.aggregated.get(record.route);
    return { ...record, logBytes: route === undefined ? 0 : route.bytes / route.requests };
  }
}

async function waitUntilUp(url: string, seconds: number): Promise<void> {
  const client = new PlacementClient(url, { token: null, timeoutMs: 2000 });
  for (let waited = 0; waited < seconds * 10; waited++) {
    try {
      if ((await client.get('/')).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer GET / within ${seconds} s`);
}

/** Any running Placement; `recordsFile` is where a service of ours writes its stdout (PLACEMENT_METRICS and PLACEMENT_REQUEST_RECORDS true), or the bundles' runtime its output. */
export function existingTarget(name: string, url: string, recordsFile?: string): Target {
  if (recordsFile === undefined) return { name, url, stop: async () => undefined };
  const records = new Records();
  let offset = statSync(recordsFile).size;
  const buffer = Buffer.alloc(1 << 20);
  // Reads what the service appended since the last look.
  const catchUp = () => {
    const fd = openSync(recordsFile, 'r');
    try {
      for (let read = readSync(fd, buffer, 0, buffer.length, offset); read > 0; read = readSync(fd, buffer, 0, buffer.length, offset)) {
        offset += read;
        records.add(buffer.subarray(0, read).toString('utf8'));
      }
    } finally {
      closeSync(fd);
    }
  };
  return {
    name,
    url,
    record: (requestId) => {
      if (records.get(requestId) === undefined) catchUp();
      return records.get(requestId);
    },
    stop: async () => undefined,
  };
}

/** `npm start` on the port, in a process group of its own, with metric aggregates and request records on. */
export async function startOurs(port: number): Promise<Target> {
  const env = {
    ...process.env,
    PORT: String(port),
    PLACEMENT_METRICS: 'true',
    PLACEMENT_REQUEST_RECORDS: 'true',
    PLACEMENT_STAGE: 'bench-region',
    PLACEMENT_DYNAMODB_ENDPOINT: '',
  };
  const child: ChildProcess = spawn('npm', ['start', '--silent'], { cwd: REPOSITORY, env, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  const records = new Records();
  child.stdout!.on('data', (chunk: Buffer) => records.add(chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`npm start exited with ${code}`))));
  await Promise.race([waitUntilUp(url, 120), exited]);
  exited.catch(() => undefined);
  return {
    name: 'ours',
    url,
    record: (requestId) => records.get(requestId),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        // The whole group: npm, tsx and the service (and its DynamoDB Local, which it stops itself).
        process.kill(-child.pid!, 'SIGTERM');
      }),
  };
}

/** The processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** CPU milliseconds the processes have used so far (Linux /proc, in clock ticks of 10 ms). */
export function cpuMsOf(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return sum + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return sum;
    }
  }, 0);
}

/**
 * The real upstream Placement (uWSGI, SQLite) from ../shared/reference, fresh: on the port given, or (none given) on a free one: tried again on another should a process take that port
 * between its choice and uWSGI's bind (a test run's other worker, say), as test/support/reference.ts does.
 */
export async function startReference(port?: number): Promise<Target> {
  for (let attempt = 1; ; attempt++) {
    try {
      return startReferenceOn(port ?? (await freeLoopbackPort()));
    } catch (error) {
      if (port !== undefined || attempt === 3) throw error;
    }
  }
}

function startReferenceOn(port: number): Target {
  const state = join(tmpdir(), `bench-region-reference-${port}`);
  const script = (name: 'start' | 'stop') =>
    execFileSync('bash', [join(referenceScripts(), `${name}-reference.sh`), '--port', String(port), '--state-dir', state], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  script('stop');
  const started = script('start');
  const url = /^URL=(\S+)$/m.exec(started)?.[1];
  const master = Number(/^PID=(\d+)$/m.exec(started)?.[1]);
  if (url === undefined) throw new Error('start-reference.sh printed no URL');
  // uWSGI's master forks the worker that serves the requests.
  const pids = () => [master, ...childrenOf(master)];
  return { name: 'reference', url, pids, stop: async () => void script('stop') };
}
