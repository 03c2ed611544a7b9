/**
 * Versioned storage formats (docs/operators/upgrade.md): the table records
 * the format of its items (items/storage-format.ts; none: format 1, release
 * 1.0.0's). This release reads every format in KNOWN_FORMATS and writes the
 * table's format: the previous release's until the operator finalizes the
 * upgrade, its own after. A table at a format newer than it knows is
 * refused with a 503 before anything is read or written (dynamodb.ts asks
 * checkStorageFormat before every request of an item), never misread.
 *
 * The format only moves forward, and only by the operator's finalize, which
 * refuses while any function runs an older release; so an instance may keep
 * the format it read for a while (config.storageFormatSeconds): a stale value is the older format,
 * which every release since reads.
 */
import type { GetCommandInput, GetCommandOutput, PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { config } from '../config.js';
import { StorageFormatTooNew } from './errors.js';
import { decodeStorageFormat, encodeStorageFormat, STORAGE_FORMAT_KEY, StorageFormatAttribute, type StorageFormatRecord } from './items/storage-format.js';

/**
 * Format 1: release 1.0.0's items. Format 2: an allocation item no longer
 * repeats its consumer's uuid (its sort key has it). Format 3: capacity and
 * trait holder entries (entries/), kept by every write.
 */
export const KNOWN_FORMATS = [1, 2, 3] as const;
export const NEWEST_FORMAT = 3;
/** A table without a format record was written by release 1.0.0. */
export const UNRECORDED_FORMAT = 1;
/** From this format on, every write keeps the capacity and trait holder entries; readers take them once built (entriesBuilt). */
export const ENTRIES_SINCE_FORMAT = 3;

/**
 * The requests of the format record itself (dynamodb.ts's formatRecordRequests):
 * sent without this check, which they serve, and passed in so that this
 * module does not import the module whose requests it checks.
 */
export interface FormatRecordRequests {
  get(input: GetCommandInput): Promise<Pick<GetCommandOutput, 'Item'>>;
  put(input: PutCommandInput): Promise<unknown>;
}

let known: { record: StorageFormatRecord; readAt: number } | undefined;
let reading: Promise<StorageFormatRecord> | undefined;

/** The format the table is at, as last read (the previous release's until it is read). */
export const writesFormat = (): number => known?.record.format ?? UNRECORDED_FORMAT;

/** Whether writes keep the capacity and trait holder entries: from format 3 on, built or not. */
export const keepsEntries = (): boolean => writesFormat() >= ENTRIES_SINCE_FORMAT;

/**
 * Whether the entries are whole, as last read: kept by every write and built
 * over every provider that was there before (a table created at format 3
 * had none). Until then readers answer without them.
 */
export const entriesBuilt = (): boolean => keepsEntries() && known?.record.entriesBuild?.state !== 'building';

async function readFormat(requests: FormatRecordRequests): Promise<StorageFormatRecord> {
  const output = await requests.get({ TableName: config.tableName, Key: STORAGE_FORMAT_KEY });
  const record = output.Item === undefined ? { format: UNRECORDED_FORMAT } : decodeStorageFormat(output.Item);
  known = { record, readAt: Date.now() };
  return record;
}

/**
 * Throws StorageFormatTooNew when the table is at a format this release
 * does not know; reads the format again once it is
 * config.storageFormatSeconds old.
 */
export async function checkStorageFormat(requests: FormatRecordRequests): Promise<void> {
  if (known === undefined || Date.now() - known.readAt >= config.storageFormatSeconds * 1000) {
    reading ??= readFormat(requests).finally(() => (reading = undefined));
    await reading;
  }
  const format = writesFormat();
  if (format > NEWEST_FORMAT) throw new StorageFormatTooNew(format, NEWEST_FORMAT, config.release);
}

/** The format record as stored (none: format 1), read strongly consistently. */
export async function storageFormatRecord(requests: FormatRecordRequests): Promise<StorageFormatRecord> {
  const output = await requests.get({ TableName: config.tableName, Key: STORAGE_FORMAT_KEY, ConsistentRead: true });
  return output.Item === undefined ? { format: UNRECORDED_FORMAT } : decodeStorageFormat(output.Item);
}

/**
 * Moves the table to `record`'s format from one of `from` (a table without
 * a record counts as format 1). False when the table is at none of them.
 */
export async function finalizeStorageFormat(requests: FormatRecordRequests, record: StorageFormatRecord, from: readonly number[]): Promise<boolean> {
  const values = Object.fromEntries(from.map((format, n) => [`:from${n}`, format]));
  const atOne = `#format IN (${Object.keys(values).join(', ')})`;
  try {
    await requests.put({
      TableName: config.tableName,
      Item: encodeStorageFormat(record),
      ConditionExpression: from.includes(UNRECORDED_FORMAT) ? `attribute_not_exists(pk) OR ${atOne}` : atOne,
      ExpressionAttributeNames: { '#format': StorageFormatAttribute.format },
      ExpressionAttributeValues: values,
    });
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return false;
    throw error;
  }
  known = { record, readAt: Date.now() };
  return true;
}

/**
 * A table this release creates starts at its newest format: nothing older
 * will read it. A table that already has a record keeps it.
 */
export async function recordNewTableFormat(requests: FormatRecordRequests): Promise<void> {
  const record = encodeStorageFormat({ format: NEWEST_FORMAT, finalizedAt: new Date().toISOString(), finalizedBy: config.release });
  try {
    await requests.put({ TableName: config.tableName, Item: record, ConditionExpression: 'attribute_not_exists(pk)' });
  } catch (error) {
    if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
  }
  known = undefined;
}
