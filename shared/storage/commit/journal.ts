/**
 * Multi-step changes: a change too big for one TransactWriteItems committed
 * atomically in several requests, through a journal. The protocol, its
 * states and what a crash at each point leaves are in
 * docs/design/multi-step-changes.md; in short:
 *
 *   begin (head pending) → stage every write → fence every target
 *   → commit (head committed: the commit point) → apply every write → finish
 *
 * Every read resolves the fences it meets (resolveFences): before the
 * commit point an item reads as it was, after it as the change left it, and
 * whoever meets what a dead writer left behind finishes or undoes it.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../../config.js';
import { batchGetItem, batchWriteItem, isConditionalCheckFailed, isTransactionCanceled, putItem, query, tableName, updateItem } from '../dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from '../consumed-capacity.js';
import { untilAllProcessed } from '../retry.js';
import { usedPlaceholders } from '../expression.js';
import { ConcurrentUpdate, DependencyUnavailable } from '../errors.js';
import { timeLeftMs } from '../deadline.js';
import { isItemTooLargeReason, isTooLargeForOneTransaction, MAX_TRANSACTION_ITEMS, sendTransaction } from './transact.js';
import type { Write, WriteAction } from './write.js';
import { ItemTooLarge, TYPE_ATTRIBUTE, type Item, type Key } from '../items/fields.js';
import { PROVIDER_SK } from '../items/provider.js';
import {
  ChangeAttribute,
  changeKey,
  CHANGES_PK,
  decodeChangeHead,
  decodeStagedWrite,
  encodeChangeHead,
  encodeStagedWrite,
  stagedPartition,
  stagedWriteKey,
  type ChangeHead,
  type ChangeState,
  type StagedAction,
  type StagedWrite,
} from '../items/change.js';

/** The attribute a multi-step change sets on every item it will write, holding its id. */
export const FENCE_ATTRIBUTE = 'fence';
const FENCE = '#fence';
const CHANGE_ID = ':fenceChange';
const TYPE = '#fenceType';

/** Requests of one step under way at once. */
const CONCURRENCY = 32;
/**
 * Transactions under way at once: each carries up to 100 writes, and
 * DynamoDB Local, which the service also runs on, serialises transactions
 * behind a lock it gives up waiting on under load (a 500).
 */
export const TRANSACTION_CONCURRENCY = 8;
/** Items of one BatchWriteItem, DynamoDB's most. */
const BATCH_WRITES = 25;
/**
 * The request bytes one transaction of fences or applied writes is cut at:
 * DynamoDB refuses a transaction past 4 MB, and the estimate (bytesOf) is
 * rough; one refused all the same is sent in halves.
 */
const TRANSACTION_BYTES = 3_000_000;
/** How long a finished change's head (and any staged write a crash left) stays before the table's TTL removes it. */
const TOMBSTONE_SECONDS = 24 * 3600;
/** Rounds of reading fenced items again before a read gives up (503). */
const RESOLVE_ROUNDS = 5;
/**
 * What a writer keeps of its invocation's time (deadline.ts): it starts no
 * part and does not commit with less left, and stops waiting on its applied
 * writes once committed. Enough for the parts under way to end (a
 * transaction of 100 and its batch writes) and the head's abort.
 */
export const TIME_KEPT_MS = 2_000;

const keyOf = (item: Item): Key => ({ pk: item.pk as string, sk: item.sk as string });

/** The change holding an item (as the document client reads it), if any. */
const fenceOf = (item: Item): string | undefined => (typeof item[FENCE_ATTRIBUTE] === 'string' ? (item[FENCE_ATTRIBUTE] as string) : undefined);

/** The change holding an item as DynamoDB returns it raw (a failed condition's item), if any. */
export const rawFenceOf = (item: Record<string, { S?: string }> | undefined): string | undefined => item?.[FENCE_ATTRIBUTE]?.S;

// ---------------------------------------------------------------- actions

interface ActionBody {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

interface ActionParts {
  kind: 'Put' | 'Update' | 'Delete' | 'ConditionCheck';
  key: Key;
  body: ActionBody;
}

function partsOf(action: WriteAction): ActionParts {
  if (action.Put) return { kind: 'Put', key: keyOf(action.Put.Item!), body: action.Put };
  if (action.Update) return { kind: 'Update', key: action.Update.Key as Key, body: action.Update };
  if (action.Delete) return { kind: 'Delete', key: action.Delete.Key as Key, body: action.Delete };
  if (action.ConditionCheck) return { kind: 'ConditionCheck', key: action.ConditionCheck.Key as Key, body: action.ConditionCheck };
  throw new Error('a write without an action');
}

/** The key of the item an action writes. */
export const targetOf = (action: WriteAction): Key => partsOf(action).key;

const nonEmpty = <T>(map: Record<string, T>) => (Object.keys(map).length > 0 ? map : undefined);

/**
 * The action as either path sends it: it also requires its item to carry no
 * fence, and returns the item when a condition fails, so that a failure
 * caused by a fence is told apart from what the condition means.
 */
export function guarded(action: WriteAction): WriteAction {
  const { kind, body } = partsOf(action);
  const condition = body.ConditionExpression ? `(${body.ConditionExpression}) AND attribute_not_exists(${FENCE})` : `attribute_not_exists(${FENCE})`;
  const guardedBody = {
    ...body,
    ConditionExpression: condition,
    ExpressionAttributeNames: { ...body.ExpressionAttributeNames, [FENCE]: FENCE_ATTRIBUTE },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
  return { [kind]: guardedBody } as WriteAction;
}

/** What a committed change does to one target, kept in its staged write. */
function stagedActionOf(action: WriteAction): StagedAction {
  if (action.Put) return { kind: 'put', item: action.Put.Item! };
  if (action.Update) {
    const expression = action.Update.UpdateExpression!;
    return {
      kind: 'update',
      expression,
      names: nonEmpty(usedPlaceholders(action.Update.ExpressionAttributeNames, expression)),
      values: nonEmpty(usedPlaceholders(action.Update.ExpressionAttributeValues, expression)),
    };
  }
  return action.Delete ? { kind: 'delete' } : { kind: 'check' };
}

// ---------------------------------------------------------------- requests

type Consumed = Parameters<typeof recordConsumedCapacity>[0];

/** A write, its units counted; false when its condition failed (the work was done, or is not this change's to do). */
async function unlessDone(request: () => Promise<{ ConsumedCapacity?: Consumed }>): Promise<boolean> {
  try {
    recordConsumedCapacity((await request()).ConsumedCapacity, 'write');
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/** A read, its units counted. */
async function read<T extends { ConsumedCapacity?: Consumed }>(request: () => Promise<T>): Promise<T> {
  const output = await request();
  recordConsumedCapacity(output.ConsumedCapacity, 'read');
  return output;
}

/**
 * Runs `work` on every item, CONCURRENCY at a time, in order. After a failure
 * no further item is started, and the call returns only once every started
 * one has ended, so that nothing of this step is still under way when the
 * caller decides what to do next.
 */
export async function eachConcurrently<T>(items: readonly T[], work: (item: T, index: number) => Promise<void>, concurrency = CONCURRENCY): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const index = next++;
      try {
        await work(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure) throw failure.error;
}

/** The items in order, cut into parts of at most `size` each. */
export function partsOfSize<T>(items: readonly T[], size: number): T[][] {
  const parts: T[][] = [];
  for (let start = 0; start < items.length; start += size) parts.push(items.slice(start, start + size));
  return parts;
}

/** Items by key, strongly consistent, 100 a request; those missing are left out. */
async function readKeys(keys: Key[]): Promise<Item[]> {
  const items: Item[] = [];
  await eachConcurrently(partsOfSize(keys, 100), async (part) => {
    const request = { [tableName()]: { Keys: part, ConsistentRead: true } };
    await untilAllProcessed(request, async (pending) => {
      const output = await read(() => batchGetItem({ RequestItems: pending, ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY }));
      items.push(...(output.Responses?.[tableName()] ?? []));
      return output.UnprocessedKeys as typeof request | undefined;
    });
  });
  return items;
}

/** Puts items, 25 a batch request, the batches concurrently (also the allocation history's writes). */
export async function putAll(items: Item[]): Promise<void> {
  await eachConcurrently(partsOfSize(items, BATCH_WRITES), async (part) => {
    const request = { [tableName()]: part.map((item) => ({ PutRequest: { Item: item } })) };
    await untilAllProcessed(request, async (pending) => {
      const output = await batchWriteItem({ RequestItems: pending, ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
      recordConsumedCapacity(output.ConsumedCapacity, 'write');
      return output.UnprocessedItems as typeof request | undefined;
    });
  });
}

// ---------------------------------------------------------------- transactions

type RawItem = Record<string, { S?: string }>;

/** About the bytes an action takes in a request, what DynamoDB's 4 MB bound on a transaction is checked against. */
const bytesOf = (action: WriteAction): number => JSON.stringify(action).length;

/** The actions in order, cut into transactions of at most 100 actions and TRANSACTION_BYTES (an action bigger alone goes alone). */
function inTransactions<T>(items: readonly T[], bytes: (item: T) => number): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let size = 0;
  for (const item of items) {
    const itemBytes = bytes(item);
    if (group.length > 0 && (group.length === MAX_TRANSACTION_ITEMS || size + itemBytes > TRANSACTION_BYTES)) {
      groups.push(group);
      group = [];
      size = 0;
    }
    group.push(item);
    size += itemBytes;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * Sends independent actions (a fence each, or a staged write each) in one
 * TransactWriteItems: one request for up to 100 of them, none of which needs
 * the others to land with it, sent until DynamoDB decides it
 * (sendTransaction). Returns the actions whose condition failed, by index,
 * with their items as they were; the transaction then wrote nothing. One
 * DynamoDB refuses as too large goes in two halves.
 */
async function transact(actions: WriteAction[]): Promise<{ index: number; item: RawItem | undefined }[]> {
  try {
    await sendTransaction(actions);
    return [];
  } catch (error) {
    if (isTooLargeForOneTransaction(error) && actions.length > 1) {
      const half = Math.ceil(actions.length / 2);
      const first = await transact(actions.slice(0, half));
      const second = await transact(actions.slice(half));
      return [...first, ...second.map((failed) => ({ ...failed, index: failed.index + half }))];
    }
    if (!isTransactionCanceled(error)) throw error;
    const reasons = error.CancellationReasons ?? [];
    const failed = reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [{ index, item: reason.Item as RawItem | undefined }] : []));
    if (failed.length > 0) return failed;
    if (reasons.some(isItemTooLargeReason)) throw new ItemTooLarge('A record this change writes');
    throw error;
  }
}

/**
 * Writes each action whose condition holds, in transactions of up to 100
 * (concurrently): a transaction cancelled on some actions' conditions is
 * sent again without them. Returns the indexes of the actions not written.
 */
async function writeEach(actions: WriteAction[]): Promise<number[]> {
  const notWritten: number[] = [];
  const indexed = actions.map((action, index) => ({ action, index }));
  await eachConcurrently(
    inTransactions(indexed, ({ action }) => bytesOf(action)),
    async (group) => {
      let left = group;
      while (left.length > 0) {
        const failed = new Set((await transact(left.map(({ action }) => action))).map(({ index }) => index));
        if (failed.size === 0) return;
        notWritten.push(...left.filter((_, n) => failed.has(n)).map(({ index }) => index));
        left = left.filter((_, n) => !failed.has(n));
      }
    },
    TRANSACTION_CONCURRENCY,
  );
  return notWritten;
}

// ---------------------------------------------------------------- heads

const now = () => Date.now();
const expiry = () => Math.floor(now() / 1000) + TOMBSTONE_SECONDS;

async function readHeads(ids: string[]): Promise<Map<string, ChangeHead>> {
  return new Map((await readKeys(ids.map(changeKey))).map((item) => [item.sk as string, decodeChangeHead(item)]));
}

const readHead = async (id: string): Promise<ChangeHead | undefined> => (await readHeads([id])).get(id);

/** Moves the head from `from` to `to` (with a new lease); false when it was not in `from` (or, with `ifLeaseBefore`, its lease had not passed). */
function moveHead(id: string, from: ChangeState, to: ChangeState | 'renewed', ifLeaseBefore?: number): Promise<boolean> {
  const conditions = [`#state = :from`, ...(ifLeaseBefore === undefined ? [] : ['#lease < :before'])];
  const sets = ['#lease = :lease', ...(to === 'renewed' ? [] : ['#state = :to'])];
  return unlessDone(() =>
    updateItem({
      TableName: tableName(),
      Key: changeKey(id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: { '#state': ChangeAttribute.state, '#lease': ChangeAttribute.leaseUntil },
      ExpressionAttributeValues: {
        ':from': from,
        ':lease': now() + config.changeLeaseMs,
        ...(to === 'renewed' ? {} : { ':to': to }),
        ...(ifLeaseBefore === undefined ? {} : { ':before': ifLeaseBefore }),
      },
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    }),
  );
}

/** Takes over the follow-up work of a change whose actor's lease passed; false when another actor took it first. */
function takeOver(head: ChangeHead): Promise<boolean> {
  return unlessDone(() =>
    updateItem({
      TableName: tableName(),
      Key: changeKey(head.id),
      UpdateExpression: 'SET #lease = :lease',
      ConditionExpression: '#state = :state AND #lease = :read',
      ExpressionAttributeNames: { '#state': ChangeAttribute.state, '#lease': ChangeAttribute.leaseUntil },
      ExpressionAttributeValues: { ':state': head.state, ':read': head.leaseUntil, ':lease': now() + config.changeLeaseMs },
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    }),
  );
}

/** Marks a change whose targets are all written (or undone) as finished, to lapse after a day. */
async function markFinished(id: string, state: ChangeState): Promise<void> {
  await unlessDone(() =>
    updateItem({
      TableName: tableName(),
      Key: changeKey(id),
      UpdateExpression: 'SET #finished = :true, #expires = :expires',
      ConditionExpression: '#state = :state',
      ExpressionAttributeNames: { '#state': ChangeAttribute.state, '#finished': ChangeAttribute.finished, '#expires': ChangeAttribute.expiresAt },
      ExpressionAttributeValues: { ':state': state, ':true': true, ':expires': expiry() },
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    }),
  );
}

// ---------------------------------------------------------------- per target

/** The fence of one target for the change, with the write's own condition. */
function fenceAction(id: string, write: Write): WriteAction {
  const { key, body } = partsOf(write.item);
  const condition = body.ConditionExpression;
  return {
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: `SET ${FENCE} = ${CHANGE_ID}`,
      ConditionExpression: condition ? `(${condition}) AND attribute_not_exists(${FENCE})` : `attribute_not_exists(${FENCE})`,
      ExpressionAttributeNames: { ...usedPlaceholders(body.ExpressionAttributeNames, condition), [FENCE]: FENCE_ATTRIBUTE },
      ExpressionAttributeValues: { ...usedPlaceholders(body.ExpressionAttributeValues, condition), [CHANGE_ID]: id },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** One staged write, conditioned on its target still carrying this change's fence, which it removes. */
function applyAction(id: string, { target, action }: StagedWrite): WriteAction {
  const guarded = { TableName: tableName(), ConditionExpression: `${FENCE} = ${CHANGE_ID}` };
  const names = { [FENCE]: FENCE_ATTRIBUTE };
  const values = { [CHANGE_ID]: id };
  switch (action.kind) {
    case 'put':
      return { Put: { ...guarded, Item: action.item, ExpressionAttributeNames: names, ExpressionAttributeValues: values } };
    case 'update': {
      const expression = /\bREMOVE\b/.test(action.expression)
        ? action.expression.replace(/\bREMOVE\b/, `REMOVE ${FENCE},`)
        : `${action.expression} REMOVE ${FENCE}`;
      const update = { ...guarded, Key: target, UpdateExpression: expression };
      return { Update: { ...update, ExpressionAttributeNames: { ...action.names, ...names }, ExpressionAttributeValues: { ...action.values, ...values } } };
    }
    case 'delete':
      return { Delete: { ...guarded, Key: target, ExpressionAttributeNames: names, ExpressionAttributeValues: values } };
    case 'check':
      return { Update: { ...guarded, Key: target, UpdateExpression: `REMOVE ${FENCE}`, ExpressionAttributeNames: names, ExpressionAttributeValues: values } };
  }
}

/** Writes the staged writes whose targets still carry this change's fence (the others were written already). */
async function applyAll(id: string, staged: StagedWrite[]): Promise<void> {
  await writeEach(staged.map((write) => applyAction(id, write)));
}

/**
 * Lifts this change's fence from the targets that still carry it: an item
 * that existed is left as it was; a placeholder (an item without a type) is
 * deleted.
 */
async function undoAll(id: string, targets: Key[]): Promise<void> {
  const names = { [FENCE]: FENCE_ATTRIBUTE, [TYPE]: TYPE_ATTRIBUTE };
  const values = { [CHANGE_ID]: id };
  const lift = (target: Key): WriteAction => ({
    Update: {
      TableName: tableName(),
      Key: target,
      UpdateExpression: `REMOVE ${FENCE}`,
      ConditionExpression: `${FENCE} = ${CHANGE_ID} AND attribute_exists(${TYPE})`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  });
  const drop = (target: Key): WriteAction => ({
    Delete: {
      TableName: tableName(),
      Key: target,
      ConditionExpression: `${FENCE} = ${CHANGE_ID} AND attribute_not_exists(${TYPE})`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  });
  const notLifted = await writeEach(targets.map(lift));
  await writeEach(notLifted.map((index) => drop(targets[index]!)));
}

/** The staged writes of these targets that are there. */
async function readStaged(id: string, targets: Key[]): Promise<StagedWrite[]> {
  return (await readKeys(targets.map((target) => stagedWriteKey(id, target)))).map(decodeStagedWrite);
}

/** Every item of one partition, strongly consistent, the filter applied. */
async function queryPartition(pk: string, filter?: { FilterExpression: string; ExpressionAttributeNames: Record<string, string> }): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const output = await read(() =>
      query({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ...filter,
        ConsistentRead: true,
        ExclusiveStartKey: start,
        ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
      }),
    );
    items.push(...(output.Items ?? []));
    start = output.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The heads of changes not finished yet. */
const UNFINISHED = { FilterExpression: 'attribute_not_exists(#finished)', ExpressionAttributeNames: { '#finished': ChangeAttribute.finished } };

const listStaged = async (id: string): Promise<StagedWrite[]> => (await queryPartition(stagedPartition(id))).map(decodeStagedWrite);

// ---------------------------------------------------------------- whole changes

// A finished change's staged writes are left to the table's TTL, like those a crash leaves: nothing reads them once its
// head is finished, and TTL deletes cost nothing where deleting them would cost a write unit each.

/** Writes every staged write of a committed change and marks it finished. Idempotent. */
async function rollForward(id: string, known?: StagedWrite[]): Promise<void> {
  await applyAll(id, known ?? (await listStaged(id)));
  await markFinished(id, 'committed');
}

/** Lifts every fence of an aborted change (on every target staged, or those given) and marks it finished. Idempotent. */
async function rollBack(id: string, held?: Key[]): Promise<void> {
  await undoAll(id, held ?? (await listStaged(id)).map((write) => write.target));
  await markFinished(id, 'aborted');
}

/**
 * Brings a change a fenced target belongs to as far as is due, so that the
 * target can be read again: a committed change's write of it is applied
 * (every write, when the change's actor is gone), an aborted change's fence
 * is lifted (likewise), and with `abortExpired` a pending change whose writer
 * is gone is aborted and rolled back. A pending change with a live writer is
 * left alone.
 */
async function settle(id: string, head: ChangeHead | undefined, targets: Key[], { abortExpired }: { abortExpired: boolean }): Promise<void> {
  const expired = head !== undefined && !head.finished && head.leaseUntil < now();
  if (head === undefined) {
    // Only an aborted change can leave a fence once its head is gone (a late fence of a writer it outlived).
    await undoAll(id, targets);
  } else if (head.state === 'pending') {
    if (!abortExpired || !expired) return;
    if (await moveHead(id, 'pending', 'aborted', now())) await rollBack(id);
    else await settle(id, await readHead(id), targets, { abortExpired });
  } else if (head.state === 'committed') {
    if (expired && (await takeOver(head))) await rollForward(id);
    else await applyAll(id, await readStaged(id, targets));
  } else if (expired && (await takeOver(head))) await rollBack(id);
  else await undoAll(id, targets);
}

/**
 * What a writer does after its write failed on another change's fence:
 * settle that change as far as is due (a dead writer's pending change is
 * aborted), then let the retry policy run the write again.
 */
export async function settleFence(id: string, target: Key): Promise<void> {
  await settle(id, await readHead(id), [target], { abortExpired: true });
}

/**
 * The items of one read with their fences resolved: each as before every
 * change it meets, or as after it, never a mix. An item a pending change
 * holds reads as before the change (a placeholder: no item). A committed or
 * aborted change (or one whose head is gone) is settled for the items seen,
 * and then the whole read is done again with `redo` (strongly consistent):
 * the same read may hold items of that change that were not fenced yet when
 * it ran (fencing precedes the commit point), which read as before while the
 * fenced ones would read as after. Read again after the commit point, every
 * target of the change is fenced or applied. The heads are read after the
 * items, so a change pending then was pending while the items were read.
 */
export async function resolveFences(items: Item[], redo: () => Promise<Item[]>): Promise<Item[]> {
  let current = items;
  for (let round = 0; round < RESOLVE_ROUNDS; round++) {
    const fenced = new Map<string, Key[]>();
    for (const item of current) {
      const id = fenceOf(item);
      if (id !== undefined) fenced.set(id, [...(fenced.get(id) ?? []), keyOf(item)]);
    }
    if (fenced.size === 0) return current;
    const heads = await readHeads([...fenced.keys()]);
    const settled = [...fenced].filter(([id]) => heads.get(id)?.state !== 'pending');
    if (settled.length === 0) return current.flatMap(beforeFence);
    await Promise.all(settled.map(([id, targets]) => settle(id, heads.get(id), targets, { abortExpired: false })));
    current = await redo();
  }
  throw new DependencyUnavailable('Items stayed held by changes in progress through every read.');
}

/** An item a pending change holds, as it was before the change: fencing left it untouched; a placeholder stands for no item. */
function beforeFence(item: Item): Item[] {
  if (fenceOf(item) === undefined) return [item];
  if (item[TYPE_ATTRIBUTE] === undefined) return [];
  const { [FENCE_ATTRIBUTE]: _fence, ...before } = item;
  return [before];
}

/** The writer ran out of its invocation's time before the commit point: the change is aborted, so nothing of it lands. */
export class OutOfTime extends DependencyUnavailable {
  constructor() {
    super('The change could not be written in the time this function has, and nothing of it was. Please retry.');
  }
}

/**
 * Renews the writer's lease when half of it has passed; a change aborted
 * meanwhile is a ConcurrentUpdate. Refuses to go on (OutOfTime) once the
 * invocation has less than TIME_KEPT_MS left.
 */
class Lease {
  private renewAfter = now() + config.changeLeaseMs / 2;

  constructor(private readonly id: string) {}

  async keep(): Promise<void> {
    if (timeLeftMs() < TIME_KEPT_MS) throw new OutOfTime();
    if (now() < this.renewAfter) return;
    this.renewAfter = now() + config.changeLeaseMs / 2;
    if (!(await moveHead(this.id, 'pending', 'renewed'))) throw new ConcurrentUpdate();
  }
}

/**
 * Stages and fences the writes at `indexes`, in parts of one transaction
 * each (up to 100 writes), several parts at once: a part's staged writes
 * (batch writes of 25) are put first, then its targets are fenced in one
 * transaction, each with its write's condition, once the head is there
 * (`begun`). `held` gathers the targets that may carry the fence (those of
 * parts whose fencing was sent and not cancelled), which are all a rollback
 * has to lift. The error of the first write (in the plan's order) that
 * failed: what its condition means, or a ConcurrentUpdate when another
 * change holds the item (settled first, so a dead writer's change does not
 * stand in the way of the retry).
 */
async function stageAndFence(
  id: string,
  writes: Write[],
  staged: StagedWrite[],
  indexes: number[],
  begun: Promise<unknown>,
  lease: Lease,
  held: Set<Key>,
): Promise<void> {
  const expiresAt = expiry();
  const failures: { index: number; failed: RawItem | undefined }[] = [];
  const actions = new Map(indexes.map((index) => [index, fenceAction(id, writes[index]!)]));
  const parts = inTransactions(indexes, (index) => bytesOf(actions.get(index)!));
  await eachConcurrently(
    parts,
    async (part) => {
      await lease.keep();
      await putAll(part.map((index) => encodeStagedWrite(id, staged[index]!, expiresAt)));
      await begun;
      await lease.keep();
      const targets = part.map((index) => staged[index]!.target);
      for (const target of targets) held.add(target);
      // A fence already this change's was set by an attempt whose answer was lost.
      const failed = (await transact(part.map((index) => actions.get(index)!))).filter(({ item }) => rawFenceOf(item) !== id);
      if (failed.length === 0) return;
      for (const target of targets) held.delete(target);
      failures.push(...failed.map(({ index, item }) => ({ index: part[index]!, failed: item })));
      throw new ConcurrentUpdate();
    },
    // Each part is up to four batch writes at once, then a transaction.
    TRANSACTION_CONCURRENCY,
  ).catch((error: unknown) => {
    if (!(error instanceof ConcurrentUpdate) || failures.length === 0) throw error;
  });
  if (failures.length === 0) return;
  const first = failures.reduce((a, b) => (a.index < b.index ? a : b));
  const other = rawFenceOf(first.failed);
  if (other !== undefined) {
    await settleFence(other, targetOf(writes[first.index]!.item));
    throw new ConcurrentUpdate();
  }
  throw writes[first.index]!.onConditionFailed?.() ?? new ConcurrentUpdate();
}

/**
 * After a failure before the commit point: aborts the change and rolls it
 * back (out of time, only aborts it: readers and the sweeper roll an aborted
 * change back). True when the change turned out committed after all (the
 * commit's answer was lost): it is then rolled forward, and the change stands.
 */
async function abandon(id: string, targets: Key[], staged: StagedWrite[], outOfTime: boolean): Promise<boolean> {
  try {
    if (await moveHead(id, 'pending', 'aborted')) {
      if (!outOfTime) await rollBack(id, targets);
      return false;
    }
    const head = await readHead(id);
    if (head?.state === 'committed') {
      await rollForward(id, staged);
      return true;
    }
    if (head?.state === 'aborted') await rollBack(id, targets);
  } catch {
    // DynamoDB is failing: the change's lease will pass, and the next request or the sweeper rolls it back.
  }
  return false;
}

/** Commits writes too many for one transaction, atomically, in several steps (see the file's comment). */
export async function commitInSteps(writes: Write[]): Promise<void> {
  const id = randomUUID();
  const lease = new Lease(id);
  const staged: StagedWrite[] = writes.map((write) => ({ target: targetOf(write.item), action: stagedActionOf(write.item) }));
  const held = new Set<Key>();
  // The id is new: a head already there is this one, written by an attempt whose answer was lost. Staging goes on
  // meanwhile (a staged write alone changes nothing); fencing waits for the head, which a reader meeting a fence reads.
  const begun = unlessDone(() =>
    putItem({
      TableName: tableName(),
      Item: encodeChangeHead(id, now() + config.changeLeaseMs, writes.length, new Date().toISOString()),
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    }),
  );
  // Awaited below; until then a failure of the head must not go unhandled.
  begun.catch(() => undefined);
  try {
    // Providers first: providers are what concurrent claims change, so fencing them early narrows the time in which a
    // claim can make the change start over.
    const isProvider = (index: number) => staged[index]!.target.sk === PROVIDER_SK;
    const indexes = [...writes.keys()];
    for (const group of [indexes.filter(isProvider), indexes.filter((index) => !isProvider(index))]) {
      await stageAndFence(id, writes, staged, group, begun, lease, held);
    }
    await begun;
    await lease.keep();
    if (!(await moveHead(id, 'pending', 'committed')) && (await readHead(id))?.state !== 'committed') throw new ConcurrentUpdate();
  } catch (error) {
    if (await abandon(id, [...held], staged, error instanceof OutOfTime)) return;
    throw error;
  }
  // Committed: the change stands whatever happens next; what is left undone here is finished by whoever meets it,
  // so the answer waits for it only while the invocation has time (a 503 now would be for a change that stands).
  const applied = rollForward(id, staged).catch(() => undefined);
  const answerBy = timeLeftMs() - TIME_KEPT_MS;
  if (answerBy === Infinity) return applied;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([applied, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, answerBy))))]);
  clearTimeout(timer);
}

/** The multi-step changes not yet finished: in progress, or waiting for whoever finishes a dead writer's. */
export const openChanges = async (): Promise<ChangeHead[]> => (await queryPartition(CHANGES_PK, UNFINISHED)).map(decodeChangeHead);

/** The multi-step changes not yet finished, by state: what an upgrade check reports before a finalize. */
export async function unfinishedChanges(): Promise<Record<ChangeState, number>> {
  const counts: Record<ChangeState, number> = { pending: 0, committed: 0, aborted: 0 };
  for (const head of await openChanges()) counts[head.state]++;
  return counts;
}

/**
 * Finishes every change whose actor's lease has passed: a committed one is
 * rolled forward, a pending or aborted one rolled back. The sweeper runs it
 * on a schedule; it covers targets no request reads. Returns how many it
 * finished.
 */
export async function sweepChanges(): Promise<number> {
  let finished = 0;
  for (const head of await openChanges()) {
    if (head.leaseUntil >= now()) continue;
    if (head.state === 'pending') {
      if (await moveHead(head.id, 'pending', 'aborted', now())) await rollBack(head.id);
      else continue;
    } else if (!(await takeOver(head))) continue;
    else if (head.state === 'committed') await rollForward(head.id);
    else await rollBack(head.id);
    finished++;
  }
  return finished;
}
