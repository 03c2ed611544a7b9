/**
 * Use counts outside a provider change's commit (items/count-change.ts): a
 * provider change that starts or stops using thousands of custom traits
 * moved as many use-count shards, and with them in its commit it was a
 * multi-step change of thousands of staged and fenced writes (11 s for 3,000
 * traits on DynamoDB Local). A use count is read only to refuse deleting (or
 * renaming) a name in use, so it may run ahead of the uses for a moment,
 * never behind: the counts a change raises go before its commit, the counts
 * it lowers are owed after it (providerChangePlan, providers.ts). The
 * request answers once its commit stands and leaves what it owes to the
 * sweeper; a deletion or rename of a name lowers what is owed to it first
 * (lowerCountsOwed), so it sees the uses that stand, as upstream does. A name
 * is then refused deletion only while a change that adds it is in flight,
 * and never deleted while a provider uses it.
 *
 * Each part (99 counts and its mark, one TransactWriteItems) is counted
 * exactly once: the mark is written with the counts on condition that it is
 * not there, and taken away with them on condition that it is. So the
 * request and the sweeper may both go through the same change.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../../config.js';
import { deleteItem, isConditionalCheckFailed, putItem, tableName, updateItem } from '../dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from '../consumed-capacity.js';
import { timeLeftMs } from '../deadline.js';
import { ConcurrentUpdate } from '../errors.js';
import { eachConcurrently, OutOfTime, partsOfSize, TIME_KEPT_MS, TRANSACTION_CONCURRENCY } from './journal.js';
import { pauseBeforeRetry, retryPolicy } from '../retry.js';
import { queryAll } from '../reads.js';
import { MAX_TRANSACTION_ITEMS } from './transact.js';
import { commitInOneTransaction } from './transaction.js';
import type { Write } from './write.js';
import { resourceClasses, traits, type Catalog } from '../catalog.js';
import {
  COUNT_CHANGES_PK,
  CountChangeAttribute,
  countChangeKey,
  countPartKey,
  decodeCountChange,
  encodeCountChange,
  encodeCountPart,
  type CountChange,
} from '../items/count-change.js';

/** Counts a part moves, beside its mark. */
const COUNTS_PER_PART = MAX_TRANSACTION_ITEMS - 1;
/** How long a part's mark outlives its write: far beyond any change's own time and the sweeper's next round. */
const MARK_SECONDS = 24 * 3600;

/** What the change's counts mean when one is missing: the name it would count is unknown (deleted meanwhile). */
export interface CountErrors {
  onUnknownResourceClass?: (name: string) => Error;
  onUnknownTrait?: (name: string) => Error;
}

/** A count change of one provider's names, in its shard, with a new id; not yet written. */
export function newCountChange(shard: number, classes: string[], names: string[], delta: 1 | -1, due: number): CountChange {
  return { changeId: randomUUID(), shard, classes, traits: names, delta, state: delta > 0 ? 'ahead' : 'committed', due };
}

/** The change's counts in parts of COUNTS_PER_PART, in a fixed order. */
function partsOf(change: CountChange, sign: 1 | -1, errors: CountErrors): Write[][] {
  const delta = change.delta * sign;
  const counts = [
    ...change.classes.map((name) =>
      resourceClasses.countUses(name, change.shard, delta, () => errors.onUnknownResourceClass?.(name) ?? new Error(`unknown resource class ${name}`)),
    ),
    ...change.traits.map((name) => traits.countUses(name, change.shard, delta, () => errors.onUnknownTrait?.(name) ?? new Error(`unknown trait ${name}`))),
  ];
  return partsOfSize(counts, COUNTS_PER_PART);
}

/** The mark of a part, already there or already gone: that part was counted, or taken back, by someone else. */
class PartDoneMeanwhile extends Error {}

/**
 * Sends one part: its counts, and its mark written (apply) or taken away
 * (undo). Nothing when the mark says it is done already. A part a
 * multi-step change holds an item of (ConcurrentUpdate) is sent again
 * under the retry policy.
 */
async function sendPart(change: CountChange, index: number, counts: Write[], how: 'apply' | 'undo'): Promise<void> {
  const key = countPartKey(change.changeId, index);
  const mark: Write =
    how === 'apply'
      ? {
          item: {
            Put: {
              TableName: tableName(),
              Item: encodeCountPart(change.changeId, index, Math.floor(Date.now() / 1000) + MARK_SECONDS),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: () => new PartDoneMeanwhile(),
        }
      : {
          item: { Delete: { TableName: tableName(), Key: key, ConditionExpression: 'attribute_exists(pk)' } },
          onConditionFailed: () => new PartDoneMeanwhile(),
        };
  const policy = retryPolicy();
  for (let retry = 0; ; retry++) {
    try {
      return await commitInOneTransaction([...counts, mark]);
    } catch (error) {
      if (error instanceof PartDoneMeanwhile) return;
      if (!(error instanceof ConcurrentUpdate) || retry >= policy.retries) throw error;
      await pauseBeforeRetry(policy, retry);
    }
  }
}

async function writeItem(item: CountChange): Promise<void> {
  const output = await putItem({ TableName: tableName(), Item: encodeCountChange(item), ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
  recordConsumedCapacity(output.ConsumedCapacity, 'write');
}

async function deleteChange(change: CountChange): Promise<void> {
  const output = await deleteItem({ TableName: tableName(), Key: countChangeKey(change.changeId), ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
  recordConsumedCapacity(output.ConsumedCapacity, 'write');
}

/**
 * Raises the counts of a change ahead of its commit: the count change item
 * first (`ahead`, due when the request's time and a lease have passed),
 * then the parts, eight at a time. An unknown name is its error, once what
 * was raised is taken back (undoCountsAhead, by the caller's plan). A change
 * that could no longer commit well before `due` gives up (OutOfTime): past
 * it the sweeper may take the counts back.
 */
export async function raiseCountsAhead(change: CountChange, errors: CountErrors): Promise<void> {
  await writeItem(change);
  await eachConcurrently(partsOf(change, 1, errors), (counts, index) => sendPart(change, index, counts, 'apply'), TRANSACTION_CONCURRENCY);
  if (Date.now() > change.due - config.changeLeaseMs - TIME_KEPT_MS) throw new OutOfTime();
}

/** The commit's write of a change whose counts went ahead: the item deleted, on condition that nobody began taking them back. */
export function commitCountsAhead(change: CountChange, onUndone: () => Error): Write {
  return {
    item: {
      Delete: {
        TableName: tableName(),
        Key: countChangeKey(change.changeId),
        ConditionExpression: '#state = :ahead',
        ExpressionAttributeNames: { '#state': CountChangeAttribute.state },
        ExpressionAttributeValues: { ':ahead': 'ahead' },
      },
    },
    onConditionFailed: onUndone,
  };
}

/**
 * Takes back the counts a change raised ahead of a commit that did not
 * come: the item turns `undoing` (unless the commit deleted it: then there
 * is nothing to take back), every part marked is lowered again, and the
 * item goes. Never fails: whatever stops it is left to the sweeper.
 */
export async function undoCountsAhead(change: CountChange): Promise<boolean> {
  try {
    if (change.state === 'ahead') {
      const output = await updateItem({
        TableName: tableName(),
        Key: countChangeKey(change.changeId),
        UpdateExpression: 'SET #state = :undoing',
        ConditionExpression: '#state = :ahead',
        ExpressionAttributeNames: { '#state': CountChangeAttribute.state },
        ExpressionAttributeValues: { ':undoing': 'undoing', ':ahead': 'ahead' },
        ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
      });
      recordConsumedCapacity(output.ConsumedCapacity, 'write');
    }
    await eachConcurrently(partsOf(change, -1, {}), (counts, index) => sendPart(change, index, counts, 'undo'), TRANSACTION_CONCURRENCY);
    await deleteChange(change);
    return true;
  } catch (error) {
    // The commit came first: the counts stand.
    if (isConditionalCheckFailed(error)) return true;
    return false;
  }
}

/** The commit's write of a change whose counts go after it: its item, `committed`, due at once (the sweeper lowers them). */
export const commitCountsAfter = (change: CountChange): Write => ({ item: { Put: { TableName: tableName(), Item: encodeCountChange(change) } } });

/** Lowers the counts of a committed change, then deletes its item. Each part once, whoever else lowers the same change meanwhile. */
async function lowerCounts(change: CountChange): Promise<void> {
  await eachConcurrently(
    partsOf(change, 1, {}),
    async (counts, index) => {
      if (timeLeftMs() < TIME_KEPT_MS) throw new OutOfTime();
      await sendPart(change, index, counts, 'apply');
    },
    TRANSACTION_CONCURRENCY,
  );
  await deleteChange(change);
}

/** The count changes not finished yet, strongly consistently. */
export async function openCountChanges(): Promise<CountChange[]> {
  const items = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': COUNT_CHANGES_PK }, ConsistentRead: true });
  return items.map(decodeCountChange);
}

/** The two catalogs whose names a count change counts, by the change's field for them. */
export type CountedNames = 'classes' | 'traits';
const CATALOGS: Record<CountedNames, Catalog> = { classes: resourceClasses, traits };

/**
 * Lowers now what committed changes still owe the use counts of one custom
 * class or trait, so that whoever reads them next sees the uses that stand
 * (a deletion or rename of the name). True when something was owed.
 */
export async function lowerCountsOwed(kind: CountedNames, name: string): Promise<boolean> {
  const owed = (await openCountChanges()).filter((change) => change.state === 'committed' && change[kind].includes(name));
  await Promise.all(owed.map(lowerCounts));
  return owed.length > 0;
}

/**
 * Deletes a custom class or trait that nothing uses (Catalog.delete). One
 * whose count a provider change that stopped using it still owes is lowered
 * first, then deleted: upstream deletes such a name at once.
 */
export async function deleteUnused(kind: CountedNames, name: string, onInUse: () => Error): Promise<void> {
  let inUse = false;
  const refuse = () => ((inUse = true), onInUse());
  await CATALOGS[kind].delete(name, refuse).catch(async (error: unknown) => {
    if (!inUse || !(await lowerCountsOwed(kind, name))) throw error;
    await CATALOGS[kind].delete(name, onInUse);
  });
}

/** Finishes the count changes that are due: lowers what committed ones owe, takes back what dead requests raised ahead. Returns how many. The sweeper runs it. */
export async function sweepCountChanges(): Promise<number> {
  let finished = 0;
  for (const change of await openCountChanges()) {
    if (change.due >= Date.now()) continue;
    // What fails (a throttle, the sweep's own time) is left for the next sweep.
    const done =
      change.state === 'committed'
        ? await lowerCounts(change).then(
            () => true,
            () => false,
          )
        : await undoCountsAhead(change);
    if (done) finished++;
  }
  return finished;
}
