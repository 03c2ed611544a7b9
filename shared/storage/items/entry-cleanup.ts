/**
 * The cleanup of search entries (search-entry.ts) a provider change left to
 * remove after its commit (a deletion, or aggregates or traits taken away),
 * written in that commit (entries/outside-commit.ts). The request removes
 * the entries and then this item, or leaves both to the change sweeper,
 * which does them once `due` passed. A change adding many aggregates or
 * traits writes one before the entries it writes ahead of its commit, and
 * its commit deletes it: should the commit not come, the sweeper removes
 * those entries once their hold (`due`) ends.
 *
 *   pk ENTRY_CLEANUPS   sk <provider uuid>#<change id>
 *
 * It names the aggregates and traits rather than the entries' keys: the
 * keys follow from them, at half the bytes. A provider's aggregates and
 * traits are bounded by its item (MAX_ITEM_BYTES), so they fit here.
 */
import { booleanField, numberField, stringField, stringListField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const ENTRY_CLEANUP_TYPE = 'entryCleanup';
export const ENTRY_CLEANUPS_PK = 'ENTRY_CLEANUPS';

const EntryCleanupAttribute = {
  uuid: 'uuid',
  aggregates: 'aggregates',
  /** Absent when none (and on every cleanup written before storage format 3). */
  traits: 'traits',
  sharing: 'sharing',
  marker: 'marker',
  /** When (ms since the epoch) the sweeper may take the cleanup over from the request that wrote it. */
  due: 'due',
} as const;
const A = EntryCleanupAttribute;

export interface EntryCleanup {
  key: Key;
  /** The provider the entries name. */
  uuid: string;
  /** The aggregates whose entries go: its membership, and its sharing entry when `sharing`. */
  aggregates: string[];
  /** The traits whose holder entries go. */
  traits: string[];
  sharing: boolean;
  /** Whether its sharing marker (in no aggregate) goes too. */
  marker: boolean;
  due: number;
}

export const entryCleanupKey = (uuid: string, changeId: string): Key => ({ pk: ENTRY_CLEANUPS_PK, sk: `${uuid}#${changeId}` });

export const encodeEntryCleanup = ({ key, uuid, aggregates, traits, sharing, marker, due }: EntryCleanup): Item => ({
  ...key,
  [TYPE_ATTRIBUTE]: ENTRY_CLEANUP_TYPE,
  [A.uuid]: uuid,
  [A.aggregates]: aggregates,
  ...(traits.length > 0 && { [A.traits]: traits }),
  [A.sharing]: sharing,
  [A.marker]: marker,
  [A.due]: due,
});

export const decodeEntryCleanup = (item: Item): EntryCleanup => ({
  key: { pk: stringField(item, 'pk'), sk: stringField(item, 'sk') },
  uuid: stringField(item, A.uuid),
  aggregates: stringListField(item, A.aggregates),
  traits: stringListField(item, A.traits),
  sharing: booleanField(item, A.sharing),
  marker: booleanField(item, A.marker),
  due: numberField(item, A.due),
});
