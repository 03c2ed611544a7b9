/** Timed requests: one at a time, alternating between the services. */
import { PlacementClient } from '../../admin/placement-client.js';
import { RUNS, WARMUPS, INTERLEAVE, HEADERS } from './settings.js';

// ---------------------------------------------------------------- requests

export interface RequestUsage {
  items: number;
  read: number;
}

export interface Measured {
  p50: number;
  p95: number;
  count: number;
  /** Ours only: DynamoDB items read and read units consumed per request (mean). */
  items: number;
  reads: number;
  /** The last response, for checks. */
  body: any;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const fail = (message: string): never => {
  throw new Error(message);
};
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

const clients = new Map<string, PlacementClient>();

/** One request; `ms` runs until the whole body has arrived, before the client parses it. */
export async function api(url: string, method: string, path: string, body?: unknown, timeoutMs?: number, headers?: Record<string, string>) {
  let placement = clients.get(url);
  if (placement === undefined) clients.set(url, (placement = new PlacementClient(url, { headers: HEADERS })));
  const response = await placement.request(method, path, { json: body, timeoutMs, headers });
  const requestId = response.headers.get('x-openstack-request-id') ?? '';
  return { status: response.status, ms: response.ms, text: response.text, body: response.body, requestId };
}

export async function get(url: string, path: string, headers?: Record<string, string>) {
  const response = await api(url, 'GET', path, undefined, undefined, headers);
  if (response.status !== 200) fail(`GET ${url}${path}: ${response.status} ${response.text.slice(0, 300)}`);
  return response;
}

/** A service to time; what each request read comes from `usage` when the service reports it (ours). */
export interface Target {
  url: string;
  usage?: (requestId: string) => Promise<RequestUsage>;
}

/**
 * Sequential requests, one at a time. With several targets, each run sends
 * one request to each in turn (unless BENCH_INTERLEAVE=0), so that the
 * machine's drift in speed (up to 40% over minutes on the development VM)
 * and its slower start after an idle spell hit every service alike.
 */
export async function measure(targets: Target[], path: string): Promise<Measured[]> {
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
      // An explanation (GET /explain/allocation_candidates) counts the candidates it found; a trait listing its traits.
      count: body.allocation_requests?.length ?? body.candidates ?? body.traits?.length,
      items: mean(items),
      reads: mean(reads),
      body,
    };
  });
}
