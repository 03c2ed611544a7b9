/**
 * The storage format record: which format of the stored items the table is
 * at (docs/operators/upgrade.md). A table without it is at format 1, the
 * format of release 1.0.0, which wrote no record. A table finalized to
 * format 3 also holds how far the build of its entries got
 * (entries/build.ts); one created at format 3 has none to build.
 *
 *   pk TABLE   sk STORAGE_FORMAT   format, finalizedAt, finalizedBy, entriesBuild
 */
import { MalformedItem, numberField, optionalStringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const STORAGE_FORMAT_TYPE = 'storageFormat';
export const STORAGE_FORMAT_KEY: Key = { pk: 'TABLE', sk: 'STORAGE_FORMAT' };

export const StorageFormatAttribute = {
  format: 'format',
  /** When the format was set: the table's creation, or the operator's finalize. */
  finalizedAt: 'finalizedAt',
  /** The release that set it. */
  finalizedBy: 'finalizedBy',
  /** The build of format 3's entries over the providers already there (a map: EntriesBuild). */
  entriesBuild: 'entriesBuild',
} as const;
const A = StorageFormatAttribute;

/** The attributes of the entries build, inside its map. */
export const EntriesBuildAttribute = {
  state: 'state',
  from: 'from',
  shards: 'shards',
  providers: 'providers',
  entries: 'entries',
  writeUnits: 'writeUnits',
  builtAt: 'builtAt',
} as const;

/** Where the build of one byShard shard is: not started (absent), the index key its next page starts after, or done. */
export const SHARD_DONE = 'done';

export interface EntriesBuild {
  state: 'building' | 'built';
  /** When (ms since the epoch) the build may start: by then no function writes an older format. */
  from: number;
  /** Per byShard shard (its number): the last index key read as JSON, or SHARD_DONE. */
  shards: Record<string, string>;
  /** Providers built, entries written and the write units they took, over every run of the build. */
  providers: number;
  entries: number;
  writeUnits: number;
  builtAt?: string;
}

export interface StorageFormatRecord {
  format: number;
  finalizedAt?: string;
  finalizedBy?: string;
  entriesBuild?: EntriesBuild;
}

export const encodeStorageFormat = (record: StorageFormatRecord): Item => ({
  ...STORAGE_FORMAT_KEY,
  [TYPE_ATTRIBUTE]: STORAGE_FORMAT_TYPE,
  [A.format]: record.format,
  [A.finalizedAt]: record.finalizedAt,
  [A.finalizedBy]: record.finalizedBy,
  [A.entriesBuild]: record.entriesBuild,
});

function decodeEntriesBuild(item: Item): EntriesBuild | undefined {
  const value = item[A.entriesBuild];
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) throw new MalformedItem(A.entriesBuild, 'a map', item);
  const build = value as Item;
  const state = build[EntriesBuildAttribute.state];
  if (state !== 'building' && state !== 'built') throw new MalformedItem(`${A.entriesBuild}.state`, 'building or built', item);
  const shards = build[EntriesBuildAttribute.shards] ?? {};
  if (typeof shards !== 'object' || shards === null || !Object.values(shards).every((cursor) => typeof cursor === 'string'))
    throw new MalformedItem(`${A.entriesBuild}.shards`, 'a map of strings', item);
  return {
    state,
    from: numberField(build, EntriesBuildAttribute.from),
    shards: shards as Record<string, string>,
    providers: numberField(build, EntriesBuildAttribute.providers),
    entries: numberField(build, EntriesBuildAttribute.entries),
    writeUnits: numberField(build, EntriesBuildAttribute.writeUnits),
    builtAt: optionalStringField(build, EntriesBuildAttribute.builtAt),
  };
}

export const decodeStorageFormat = (item: Item): StorageFormatRecord => ({
  format: numberField(item, A.format),
  finalizedAt: optionalStringField(item, A.finalizedAt),
  finalizedBy: optionalStringField(item, A.finalizedBy),
  entriesBuild: decodeEntriesBuild(item),
});
