/**
 * Totals the read and write units DynamoDB reports for the current request,
 * so benchmarks and metrics can show what each API call costs.
 *
 * Each request counts into its own totals (an AsyncLocalStorage scope that
 * lambdaHandler opens), so requests served concurrently by one process, as
 * the local server does, do not mix their units. Outside any scope (module
 * initialisation, scripts) one process-wide total is used.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';

interface Totals {
  read: number;
  write: number;
  items: number;
  /** When each DynamoDB request was sent and answered (performance.now()). */
  requests: [number, number][];
}

/**
 * What every call asks DynamoDB to report. INDEXES rather than TOTAL: its
 * total is the same figure, but DynamoDB Local's TOTAL leaves out index
 * writes of some transactions (a claim reported 6 units under TOTAL and 10
 * under INDEXES: table 6, byGroup 2, byShard 2).
 */
export const RETURN_CONSUMED_CAPACITY = 'INDEXES' as const;

const outsideRequests: Totals = { read: 0, write: 0, items: 0, requests: [] };
const perRequest = new AsyncLocalStorage<Totals>();
const totals = (): Totals => perRequest.getStore() ?? outsideRequests;

/** Runs `work` with totals of its own: what it consumes is counted apart from everything else. */
export function trackConsumedCapacity<T>(work: () => T): T {
  return perRequest.run({ read: 0, write: 0, items: 0, requests: [] }, work);
}

/**
 * Adds what one call consumed. Transactions and single-table calls report a
 * bare CapacityUnits total without saying which kind it is, so the caller
 * says: `kind` is the kind of call it made.
 */
export function recordConsumedCapacity(consumed: ConsumedCapacity | ConsumedCapacity[] | undefined, kind: 'read' | 'write'): void {
  const into = totals();
  for (const entry of [consumed ?? []].flat()) {
    into.read += entry.ReadCapacityUnits ?? 0;
    into.write += entry.WriteCapacityUnits ?? 0;
    if (entry.ReadCapacityUnits === undefined && entry.WriteCapacityUnits === undefined) into[kind] += entry.CapacityUnits ?? 0;
  }
}

/** Items DynamoDB read (before filter expressions), what read units are charged on. */
export function recordItemsRead(count: number): void {
  totals().items += count;
}

/**
 * One DynamoDB request (an API call, however many attempts it took), sent at `sent` and answered at `answered`.
 * Kept only within a request's scope: outside any (the local server's periodic sweep) nobody would take them.
 */
export function recordRequest(sent: number, answered: number): void {
  requestsSent++;
  perRequest.getStore()?.requests.push([sent, answered]);
}

let requestsSent = 0;

/** DynamoDB requests this process sent so far, in and out of requests' scopes (the cost report's count). */
export const dynamoRequestsSent = (): number => requestsSent;

/** The units consumed and items read since the last call, then resets the count. */
export function takeConsumedCapacity(): Omit<Totals, 'requests'> {
  const into = totals();
  const taken = { read: into.read, write: into.write, items: into.items };
  into.read = 0;
  into.write = 0;
  into.items = 0;
  return taken;
}

/**
 * The DynamoDB requests since the last call, and how many of them lie on the
 * critical path: the longest chain of requests each sent after the previous
 * one was answered. The time a request spends waiting on DynamoDB is about
 * that chain times DynamoDB's latency, whatever the latency (which differs
 * between DynamoDB Local and DynamoDB). Resets the count.
 */
export function takeRequests(): { requests: number; critical: number } {
  const into = totals();
  const spans = into.requests.sort((a, b) => a[1] - b[1]);
  into.requests = [];
  // The longest chain of intervals each starting after the previous ended: take the earliest answered first.
  let critical = 0;
  let free = Number.NEGATIVE_INFINITY;
  for (const [sent, answered] of spans) {
    if (sent < free) continue;
    critical++;
    free = answered;
  }
  return { requests: spans.length, critical };
}
