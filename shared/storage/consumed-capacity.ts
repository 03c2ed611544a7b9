/**
 * Totals the read and write units DynamoDB reports for the current request,
 * so benchmarks and metrics can show what each API call costs.
 */
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';

const totals = { read: 0, write: 0, items: 0 };

/**
 * Adds what one call consumed. Transactions and single-table calls report a
 * bare CapacityUnits total without saying which kind it is, so the caller
 * says: `kind` is the kind of call it made.
 */
export function recordConsumedCapacity(consumed: ConsumedCapacity | ConsumedCapacity[] | undefined, kind: 'read' | 'write'): void {
  for (const entry of [consumed ?? []].flat()) {
    totals.read += entry.ReadCapacityUnits ?? 0;
    totals.write += entry.WriteCapacityUnits ?? 0;
    if (entry.ReadCapacityUnits === undefined && entry.WriteCapacityUnits === undefined) totals[kind] += entry.CapacityUnits ?? 0;
  }
}

/** Items DynamoDB read (before filter expressions), what read units are charged on. */
export function recordItemsRead(count: number): void {
  totals.items += count;
}

/** The units consumed and items read since the last call, then resets the count. */
export function takeConsumedCapacity(): { read: number; write: number; items: number } {
  const taken = { ...totals };
  totals.read = 0;
  totals.write = 0;
  totals.items = 0;
  return taken;
}
