/**
 * What an upgrade needs of storage (docs/operators/upgrade.md): the table's
 * storage format against the formats this release knows, the multi-step
 * changes in flight, and the operator's finalize, which for format 3 ends
 * with the build of its entries (entries/build.ts).
 */
import { config } from '../config.js';
import { formatRecordRequests } from './dynamodb.js';
import { unfinishedChanges } from './commit/journal.js';
import { buildEntries, newEntriesBuild, progressOf, type BuildProgress } from './entries/build.js';
import { timeLeftMs } from './deadline.js';
import { finalizeStorageFormat, KNOWN_FORMATS, NEWEST_FORMAT, recordNewTableFormat, storageFormatRecord } from './storage-format.js';
import type { StorageFormatRecord } from './items/storage-format.js';

export interface StorageStatus {
  /** The table's format record (format 1 and nothing else when the table has none). */
  table: StorageFormatRecord;
  known: readonly number[];
  newest: number;
  changesInFlight: number;
  /** The entries of format 3: built (or nothing to build), or how far their build is. */
  entries: BuildProgress;
}

export async function storageStatus(): Promise<StorageStatus> {
  const [table, changes] = await Promise.all([storageFormatRecord(formatRecordRequests), unfinishedChanges()]);
  return {
    table,
    known: KNOWN_FORMATS,
    newest: NEWEST_FORMAT,
    changesInFlight: changes.pending + changes.committed + changes.aborted,
    entries: progressOf(table.entriesBuild),
  };
}

/** Formats a finalize moves from: any this release reads (format 2 adds nothing to build; format 3's entries are built after). */
const FINALIZES_FROM = KNOWN_FORMATS.filter((format) => format < NEWEST_FORMAT);

/** The most one call of the finalize builds for, so that the operator's command shows progress; less when the invocation has less left. */
const BUILD_STEP_MS = 20_000;
/** What a finalize keeps of its invocation's time to record its last page and answer. */
const BUILD_TIME_KEPT_MS = 5_000;

/**
 * Moves the table to this release's newest format, from any older one it
 * reads (a table at 1.0.0's format jumps to 3: format 2 changed how items
 * are written, nothing already stored), then goes on with the build of
 * format 3's entries for a while (BUILD_STEP_MS). False when the table was
 * at none of those formats; a finalize called again goes on with the build.
 */
export async function finalizeNewestFormat(): Promise<boolean> {
  const table = await storageFormatRecord(formatRecordRequests);
  if (table.format < NEWEST_FORMAT) {
    const record = { format: NEWEST_FORMAT, finalizedAt: new Date().toISOString(), finalizedBy: config.release, entriesBuild: newEntriesBuild() };
    if (!(await finalizeStorageFormat(formatRecordRequests, record, FINALIZES_FROM))) return false;
  }
  await buildEntries(Date.now() + Math.min(BUILD_STEP_MS, timeLeftMs() - BUILD_TIME_KEPT_MS));
  return true;
}

/** A table this release creates starts at its newest format (the local runtime's table, the stack's first deploy). */
export const recordFormatOfNewTable = (): Promise<void> => recordNewTableFormat(formatRecordRequests);
