/**
 * Totals the read and write units DynamoDB reports for the current request,
 * so benchmarks and metrics can show what each API call costs.
 */
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';

const totals = { read: 0, write: 0 };

export function recordConsumedCapacity(consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
  for (const entry of [consumed ?? []].flat()) {
    totals.read += entry.ReadCapacityUnits ?? 0;
    totals.write += entry.WriteCapacityUnits ?? 0;
    if (entry.ReadCapacityUnits === undefined && entry.WriteCapacityUnits === undefined) totals.read += entry.CapacityUnits ?? 0;
  }
}

/** The units consumed since the last call, then resets the count. */
export function takeConsumedCapacity(): { read: number; write: number } {
  const taken = { ...totals };
  totals.read = 0;
  totals.write = 0;
  return taken;
}
