/**
 * The cleanup of a deleted provider's search entries (search-entry.ts): what
 * its deletion left to remove after its commit, written in that commit
 * (providers.ts). The deleting request removes the entries and then this
 * item; if it dies first, the change sweeper does both once `due` passed.
 *
 *   pk ENTRY_CLEANUPS   sk <provider uuid>#<deletion id>
 *
 * It names the aggregates rather than the entries' keys: the keys follow
 * from them (providers.ts searchEntryKeys), at half the bytes. A provider's
 * aggregates are bounded by its item (MAX_ITEM_BYTES), so they fit here.
 */
import { booleanField, numberField, stringField, stringListField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const ENTRY_CLEANUP_TYPE = 'entryCleanup';
export const ENTRY_CLEANUPS_PK = 'ENTRY_CLEANUPS';

const EntryCleanupAttribute = {
  uuid: 'uuid',
  aggregates: 'aggregates',
  sharing: 'sharing',
  /** When (ms since the epoch) the sweeper may take the cleanup over from the request that wrote it. */
  due: 'due',
} as const;
const A = EntryCleanupAttribute;

export interface EntryCleanup {
  key: Key;
  /** The deleted provider. */
  uuid: string;
  /** Its aggregates and whether it shared through them: which search entries it had. */
  aggregates: string[];
  sharing: boolean;
  due: number;
}

export const entryCleanupKey = (uuid: string, deletionId: string): Key => ({ pk: ENTRY_CLEANUPS_PK, sk: `${uuid}#${deletionId}` });

export const encodeEntryCleanup = ({ key, uuid, aggregates, sharing, due }: EntryCleanup): Item => ({
  ...key,
  [TYPE_ATTRIBUTE]: ENTRY_CLEANUP_TYPE,
  [A.uuid]: uuid,
  [A.aggregates]: aggregates,
  [A.sharing]: sharing,
  [A.due]: due,
});

export const decodeEntryCleanup = (item: Item): EntryCleanup => ({
  key: { pk: stringField(item, 'pk'), sk: stringField(item, 'sk') },
  uuid: stringField(item, A.uuid),
  aggregates: stringListField(item, A.aggregates),
  sharing: booleanField(item, A.sharing),
  due: numberField(item, A.due),
});
