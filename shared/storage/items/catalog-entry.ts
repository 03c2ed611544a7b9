/**
 * The catalog entry item: one resource class or trait, in its catalog's
 * partition, so that a catalog lists with one query.
 *
 *   pk RESOURCE_CLASSES or TRAITS   sk <name>
 *
 * Whether a custom entry is in use is counted apart, in use-count shards
 * (catalog-use-count.ts), so that the providers that use one name do not all
 * write one item. Entries written before the shards existed carry their
 * count here (`refs`) and no `useCountShards`; catalog.ts adds their shards
 * the first time a writer looks them up, and keeps counting `refs` in.
 *
 * A trait's entry names a provider that held it (`holder`), set before the
 * first holding of the trait is committed and kept until the entry goes, so
 * that every trait some provider holds names one (trait-holders.ts): GET
 * /traits?associated= reads those providers instead of every one.
 */
import { booleanField, numberField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const CATALOG_ENTRY_TYPE = 'catalogEntry';
export const RESOURCE_CLASSES_PK = 'RESOURCE_CLASSES';
export const TRAITS_PK = 'TRAITS';

export const CatalogEntryAttribute = {
  name: 'name',
  /** Shipped with the service (os-traits, os-resource-classes); never changed or deleted. */
  standard: 'standard',
  /** How many use-count shards a custom entry has (absent: written before they existed). */
  useCountShards: 'useCountShards',
  /** The use count of an entry written before the shards existed. */
  legacyRefs: 'refs',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  /** Traits: a provider that held the trait when it was first held (absent: never held since the entry was written). */
  holder: 'holder',
} as const;
const A = CatalogEntryAttribute;

export interface CatalogEntry {
  name: string;
  standard: boolean;
  /** Custom entries: their use-count shards, 0 for an entry written before shards existed. */
  useCountShards: number;
  /** Uses counted on the entry itself (entries written before shards existed). */
  legacyRefs: number;
  createdAt: string;
  updatedAt: string;
  /** Traits: a provider that held it (see the module's comment). */
  holder?: string;
}

export const catalogEntryKey = (partition: string, name: string): Key => ({ pk: partition, sk: name });

export const encodeCatalogEntry = (partition: string, entry: CatalogEntry): Item => ({
  ...catalogEntryKey(partition, entry.name),
  [TYPE_ATTRIBUTE]: CATALOG_ENTRY_TYPE,
  [A.name]: entry.name,
  [A.standard]: entry.standard,
  [A.useCountShards]: entry.useCountShards || undefined,
  [A.legacyRefs]: entry.legacyRefs || undefined,
  [A.createdAt]: entry.createdAt,
  [A.updatedAt]: entry.updatedAt,
  ...(entry.holder !== undefined && { [A.holder]: entry.holder }),
});

export const decodeCatalogEntry = (item: Item): CatalogEntry => ({
  name: stringField(item, A.name),
  standard: booleanField(item, A.standard),
  useCountShards: item[A.useCountShards] === undefined ? 0 : numberField(item, A.useCountShards),
  legacyRefs: item[A.legacyRefs] === undefined ? 0 : numberField(item, A.legacyRefs),
  createdAt: stringField(item, A.createdAt),
  updatedAt: stringField(item, A.updatedAt),
  ...(item[A.holder] !== undefined && { holder: stringField(item, A.holder) }),
});
