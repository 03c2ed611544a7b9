/**
 * The storage format record: which format of the stored items the table is
 * at (docs/operators/upgrade.md). A table without it is at format 1, the
 * format of release 1.0.0, which wrote no record.
 *
 *   pk TABLE   sk STORAGE_FORMAT   format, finalizedAt, finalizedBy
 */
import { numberField, optionalStringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const STORAGE_FORMAT_TYPE = 'storageFormat';
export const STORAGE_FORMAT_KEY: Key = { pk: 'TABLE', sk: 'STORAGE_FORMAT' };

export const StorageFormatAttribute = {
  format: 'format',
  /** When the format was set: the table's creation, or the operator's finalize. */
  finalizedAt: 'finalizedAt',
  /** The release that set it. */
  finalizedBy: 'finalizedBy',
} as const;
const A = StorageFormatAttribute;

export interface StorageFormatRecord {
  format: number;
  finalizedAt?: string;
  finalizedBy?: string;
}

export const encodeStorageFormat = (record: StorageFormatRecord): Item => ({
  ...STORAGE_FORMAT_KEY,
  [TYPE_ATTRIBUTE]: STORAGE_FORMAT_TYPE,
  [A.format]: record.format,
  [A.finalizedAt]: record.finalizedAt,
  [A.finalizedBy]: record.finalizedBy,
});

export const decodeStorageFormat = (item: Item): StorageFormatRecord => ({
  format: numberField(item, A.format),
  finalizedAt: optionalStringField(item, A.finalizedAt),
  finalizedBy: optionalStringField(item, A.finalizedBy),
});
