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
}

/**
 * What every call asks DynamoDB to report. INDEXES rather than TOTAL: its
 * total is the same figure, but DynamoDB Local's TOTAL leaves out index
 * writes of some transactions (a claim reported 6 units under TOTAL and 10
 * under INDEXES: table 6, byGroup 2, byShard 2).
 */
export const RETURN_CONSUMED_CAPACITY = 'INDEXES' as const;

const outsideRequests: Totals = { read: 0, write: 0, items: 0 };
const perRequest = new AsyncLocalStorage<Totals>();
const totals = (): Totals => perRequest.getStore() ?? outsideRequests;

/** Runs `work` with totals of its own: what it consumes is counted apart from everything else. */
export function trackConsumedCapacity<T>(work: () => T): T {
  return perRequest.run({ read: 0, write: 0, items: 0 }, work);
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

/** The units consumed and items read since the last call, then resets the count. */
export function takeConsumedCapacity(): Totals {
  const into = totals();
  const taken = { ...into };
  into.read = 0;
  into.write = 0;
  into.items = 0;
  return taken;
}
