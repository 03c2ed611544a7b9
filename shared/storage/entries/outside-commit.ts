/**
 * Search entries written just before a provider change's commit or removed
 * just after it, where writing them in the commit would make it a change of
 * thousands of writes (a provider in thousands of aggregates, or holding
 * thousands of traits). providerChangePlan (providers.ts) decides;
 * docs/design/multi-step-changes.md#search-entries-outside-the-commit says
 * why no reader ever misses an entry:
 *
 * - entries taken away are removed after the commit, which wrote an entry
 *   cleanup item (items/entry-cleanup.ts) naming them: by the request when
 *   they take one round of transactions, else by the sweeper;
 * - entries added are written ahead of the commit, held (`heldUntil`)
 *   against every cleanup until it, with a cleanup item of their own for the
 *   case the commit does not come.
 */
import { SHARING_TRAIT } from '../../domain/standard-catalog.js';
import { config } from '../../config.js';
import { deleteItem, isTransactionCanceled, putItem, tableName, transactWriteItems } from '../dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from '../consumed-capacity.js';
import { timeLeftMs } from '../deadline.js';
import { Expression } from '../expression.js';
import { getItem, queryAll } from '../reads.js';
import { eachConcurrently, FENCE_ATTRIBUTE, OutOfTime, partsOfSize, TIME_KEPT_MS, TRANSACTION_CONCURRENCY } from '../commit/journal.js';
import { MAX_TRANSACTION_ITEMS } from '../commit/transact.js';
import { commitInOneTransaction } from '../commit/transaction.js';
import type { Write } from '../commit/write.js';
import { decodeProvider, ProviderAttribute as A, providerKey } from '../items/provider.js';
import { decodeEntryCleanup, encodeEntryCleanup, ENTRY_CLEANUPS_PK, type EntryCleanup } from '../items/entry-cleanup.js';
import { encodeSearchEntry, SearchEntryAttribute } from '../items/search-entry.js';
import { searchEntriesOf, type SearchEntry } from './search-entries.js';

/** How long before the invocation's deadline a cleanup stops, leaving the rest to the sweeper. */
const CLEANUP_TIME_KEPT_MS = 1_000;
/** Entry deletes of one cleanup transaction, beside its check of the provider. */
const ENTRIES_PER_TRANSACTION = MAX_TRANSACTION_ITEMS - 1;
/** Aggregates and traits one cleanup transaction checks: three operators each, of the 300 a DynamoDB expression may hold. */
const SUBJECTS_PER_TRANSACTION = 90;
/** The most entries a request removes itself: one round of transactions. More are left to the sweeper. */
export const ENTRIES_REMOVED_BY_THE_REQUEST = TRANSACTION_CONCURRENCY * ENTRIES_PER_TRANSACTION;

/** The longest an entry written ahead of its change is held for it; the change commits before the hold ends, by a lease to spare for clocks. */
const LONGEST_HOLD_MS = 60_000;

/** When entries written ahead of a change now stop being held: within the invocation's time, and LONGEST_HOLD_MS, plus one lease. */
export const holdUntil = (): number => Date.now() + Math.min(timeLeftMs(), LONGEST_HOLD_MS) + config.changeLeaseMs;

/** The entries a cleanup removes. */
export const entriesOf = (cleanup: Omit<EntryCleanup, 'key' | 'due'>): SearchEntry[] => searchEntriesOf(cleanup.uuid, cleanup);

/**
 * Writes the entries a change adds ahead of its commit, 100 a transaction,
 * eight at a time. No reader takes them before the commit (the provider does
 * not list their aggregates or traits yet: readers check), and no entry
 * cleanup removes them until `heldUntil`, so that an earlier change's
 * cleanup, which sees a provider that lists none of them yet, cannot take
 * them away between this write and the commit. First, the addition's own
 * cleanup item is written, due when the hold ends: should the change not
 * commit (a conflict, or its request dies), the sweeper removes them then;
 * its commit deletes the item, and fails if the item is gone. Each put
 * requires that no multi-step change holds the entry (guarded), like every
 * write. A change that could no longer commit well within the hold gives up
 * with nothing of it in sight.
 */
export async function addEntriesAhead(addition: EntryCleanup): Promise<void> {
  recordConsumedCapacity(
    (await putItem({ TableName: tableName(), Item: encodeEntryCleanup(addition), ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY })).ConsumedCapacity,
    'write',
  );
  const puts = entriesOf(addition).map(({ key }): Write => ({
    item: { Put: { TableName: tableName(), Item: encodeSearchEntry(key, addition.uuid, addition.due) } },
  }));
  await eachConcurrently(partsOfSize(puts, MAX_TRANSACTION_ITEMS), commitInOneTransaction, TRANSACTION_CONCURRENCY);
  if (Date.now() > addition.due - config.changeLeaseMs - TIME_KEPT_MS) throw new OutOfTime();
}

/** What an entry is about, once, for the provider check of its cleanup (the sharing marker: neither). */
const subjectOf = (entry: SearchEntry): string =>
  entry.aggregate !== undefined ? `a ${entry.aggregate}` : entry.trait !== undefined ? `t ${entry.trait}` : 'marker';

/** The entries in parts of one transaction each, an aggregate's two entries always in the same part. */
function cleanupParts(entries: SearchEntry[]): SearchEntry[][] {
  const parts: SearchEntry[][] = [];
  let part: SearchEntry[] = [];
  let subjects = new Set<string>();
  for (const entry of entries) {
    const subject = subjectOf(entry);
    if (part.length > 0 && !subjects.has(subject) && (part.length + 2 > ENTRIES_PER_TRANSACTION || subjects.size >= SUBJECTS_PER_TRANSACTION)) {
      parts.push(part);
      part = [];
      subjects = new Set();
    }
    part.push(entry);
    subjects.add(subject);
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

/** Whether a provider in this state (undefined: gone) lists what the entry is about. */
function listsSubject(provider: { aggregates: readonly string[]; traits: readonly string[] } | undefined, entry: SearchEntry): boolean {
  if (provider === undefined) return false;
  if (entry.aggregate !== undefined) return provider.aggregates.includes(entry.aggregate);
  return provider.traits.includes(entry.trait ?? SHARING_TRAIT);
}

/**
 * Deletes one part's entries in one transaction, on condition that the
 * provider (or its absence) does not list their aggregates or traits, nor
 * share when the part holds its sharing marker, and that no multi-step
 * change holds them. A provider that lists some of them again by now (added
 * again, or created again under the same uuid) keeps those: the provider is
 * read and the part sent again without them.
 */
async function removeEntries(uuid: string, entries: SearchEntry[]): Promise<void> {
  const notHeld = `attribute_not_exists(${FENCE_ATTRIBUTE}) AND (attribute_not_exists(${SearchEntryAttribute.heldUntil}) OR ${SearchEntryAttribute.heldUntil} < :now)`;
  for (let attempt = 0; entries.length > 0; attempt++) {
    if (timeLeftMs() < CLEANUP_TIME_KEPT_MS) throw new Error('out of time');
    const e = new Expression();
    const conditions = [...new Map(entries.map((entry) => [subjectOf(entry), entry])).values()].map((entry) =>
      entry.aggregate !== undefined
        ? `NOT contains(${e.name(A.aggregates)}, ${e.value(entry.aggregate)})`
        : `NOT contains(${e.name(A.traits)}, ${e.value(entry.trait ?? SHARING_TRAIT)})`,
    );
    const check = { ConditionCheck: { TableName: tableName(), Key: providerKey(uuid), ConditionExpression: conditions.join(' AND '), ...e.attributes() } };
    const deletes = entries.map(({ key }) => ({
      Delete: { TableName: tableName(), Key: key, ConditionExpression: notHeld, ExpressionAttributeValues: { ':now': Date.now() } },
    }));
    try {
      const output = await transactWriteItems({ TransactItems: [check, ...deletes], ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
      recordConsumedCapacity(output.ConsumedCapacity, 'write');
      return;
    } catch (error) {
      const providerDisagrees = isTransactionCanceled(error) && error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
      if (!providerDisagrees || attempt >= 2) throw error;
      const item = await getItem(providerKey(uuid));
      const provider = item && decodeProvider(item);
      entries = entries.filter((entry) => !listsSubject(provider, entry));
    }
  }
}

/**
 * Removes a cleanup's entries (removeEntries), then its item; true when
 * done. Whatever stops it (the invocation's time, a throttle, a change
 * holding an entry, a lost connection), it returns false and leaves the
 * item for the sweeper: the change it follows has committed and must not
 * be answered as a failure.
 */
export async function cleanUpEntries(cleanup: Omit<EntryCleanup, 'due'>): Promise<boolean> {
  try {
    await eachConcurrently(cleanupParts(entriesOf(cleanup)), (part) => removeEntries(cleanup.uuid, part), TRANSACTION_CONCURRENCY);
    recordConsumedCapacity(
      (await deleteItem({ TableName: tableName(), Key: cleanup.key, ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY })).ConsumedCapacity,
      'write',
    );
    return true;
  } catch {
    return false;
  }
}

/** The cleanups of search entries not done yet, strongly consistently. */
export const openEntryCleanups = async (): Promise<EntryCleanup[]> =>
  (await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': ENTRY_CLEANUPS_PK }, ConsistentRead: true })).map(
    decodeEntryCleanup,
  );

/** Finishes the entry cleanups whose request did not (their `due` passed); returns how many it finished. The sweeper runs it. */
export async function sweepEntryCleanups(): Promise<number> {
  let finished = 0;
  for (const cleanup of await openEntryCleanups()) {
    if (cleanup.due < Date.now() && (await cleanUpEntries(cleanup))) finished++;
  }
  return finished;
}
