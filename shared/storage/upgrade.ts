/**
 * What an upgrade needs of storage (docs/operators/upgrade.md): the table's
 * storage format against the formats this release knows, the multi-step
 * changes still in flight, and the operator's finalize.
 */
import { formatRecordRequests } from './dynamodb.js';
import { unfinishedChanges } from './commit/journal.js';
import { finalizeStorageFormat, KNOWN_FORMATS, NEWEST_FORMAT, recordNewTableFormat, storageFormatRecord } from './storage-format.js';
import type { StorageFormatRecord } from './items/storage-format.js';

export interface StorageStatus {
  /** The table's format record (format 1 and nothing else when the table has none). */
  table: StorageFormatRecord;
  known: readonly number[];
  newest: number;
  changesInFlight: number;
}

export async function storageStatus(): Promise<StorageStatus> {
  const [table, changes] = await Promise.all([storageFormatRecord(formatRecordRequests), unfinishedChanges()]);
  return { table, known: KNOWN_FORMATS, newest: NEWEST_FORMAT, changesInFlight: changes.pending + changes.committed + changes.aborted };
}

/** Moves the table to this release's newest format; false when the table is not at the format just before it. */
export const finalizeNewestFormat = (): Promise<boolean> => finalizeStorageFormat(formatRecordRequests, NEWEST_FORMAT);

/** A table this release creates starts at its newest format (the local runtime's table, the stack's first deploy). */
export const recordFormatOfNewTable = (): Promise<void> => recordNewTableFormat(formatRecordRequests);
