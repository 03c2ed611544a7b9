/**
 * Read primitives every storage module uses: strongly consistent gets, batch
 * gets and paged queries. Every item they return has had its multi-step
 * change fences resolved (journal.ts): callers see each item as it is before
 * or after such a change, never a fence.
 */
import { recordConsumedCapacity, recordItemsRead, RETURN_CONSUMED_CAPACITY } from './consumed-capacity.js';
import * as dynamodb from './dynamodb.js';
import { tableName, type QueryInput } from './dynamodb.js';
import { usedPlaceholders } from './expression.js';
import { eachConcurrently, FENCE_ATTRIBUTE, partsOfSize, resolveFences } from './commit/journal.js';
import { untilAllProcessed } from './retry.js';
import { TYPE_ATTRIBUTE, type Item, type Key } from './items/fields.js';

export type { Item } from './items/fields.js';

/** Which attributes a read returns. */
export interface Projection {
  ProjectionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
}

/** The projection of these attributes, and of the keys, type and fence every read resolves fences by (names as placeholders: some are reserved words). */
export function projectionOf(attributes: readonly string[]): Projection {
  const all = [...new Set(['pk', 'sk', TYPE_ATTRIBUTE, FENCE_ATTRIBUTE, ...attributes])];
  return {
    ProjectionExpression: all.map((_, n) => `#a${n}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(all.map((name, n) => [`#a${n}`, name])),
  };
}

/** A query input that returns only the projection's attributes. */
export function withProjection<T extends { ExpressionAttributeNames?: Record<string, string> }>(input: T, projection: Projection): T & Projection {
  return {
    ...input,
    ProjectionExpression: projection.ProjectionExpression,
    ExpressionAttributeNames: { ...input.ExpressionAttributeNames, ...projection.ExpressionAttributeNames },
  };
}

async function getRaw(key: Key, consistent: boolean): Promise<Item | undefined> {
  const output = await dynamodb.getItem({ TableName: tableName(), Key: key, ConsistentRead: consistent, ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
  recordConsumedCapacity(output.ConsumedCapacity, 'read');
  recordItemsRead(output.Item ? 1 : 0);
  return output.Item;
}

/** One item, strongly consistent unless `consistent` is false (then at half the read units). */
export async function getItem(key: Key, { consistent = true }: { consistent?: boolean } = {}): Promise<Item | undefined> {
  const asList = (item: Item | undefined) => (item === undefined ? [] : [item]);
  const [resolved] = await resolveFences(asList(await getRaw(key, consistent)), async () => asList(await getRaw(key, true)));
  return resolved;
}

export interface BatchGetOptions {
  projection?: Projection;
  /** Strongly consistent (the default), or eventually consistent at half the read units. */
  consistent?: boolean;
}

type BatchRequest = Record<string, { Keys: Item[]; ConsistentRead: boolean } & Partial<Projection>>;

async function batchGetRaw(keys: Key[], { projection, consistent = true }: BatchGetOptions): Promise<Item[]> {
  const items: Item[] = [];
  await eachConcurrently(partsOfSize(keys, 100), async (part) => {
    const request: BatchRequest = { [tableName()]: { Keys: part.map((key) => ({ ...key })), ConsistentRead: consistent, ...projection } };
    await untilAllProcessed(request, async (pending) => {
      const output = await dynamodb.batchGetItem({ RequestItems: pending, ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
      recordConsumedCapacity(output.ConsumedCapacity, 'read');
      recordItemsRead(output.Responses?.[tableName()]?.length ?? 0);
      items.push(...(output.Responses?.[tableName()] ?? []));
      return output.UnprocessedKeys as BatchRequest | undefined;
    });
  });
  return items;
}

/** Reads of many keys, 100 a request, the requests side by side; keys DynamoDB leaves unprocessed are asked for again, with the retry policy's backoff. */
export async function batchGet(keys: Key[], options: BatchGetOptions = {}): Promise<Item[]> {
  const items = await batchGetRaw(keys, options);
  return resolveFences(items, () => batchGetRaw(keys, { ...options, consistent: true }));
}

export interface QueryPage {
  items: Item[];
  /** Items DynamoDB read for this page, before any filter expression. */
  scanned: number;
  /** Where the next page starts; undefined after the last page. */
  next: Item | undefined;
}

/**
 * One page of a query on the table or one of its indexes. Fences met are
 * resolved by querying the page again, strongly consistent, on the table; an
 * index cannot be read so, and its page is read again by its items' keys
 * from the table (an index read was only ever eventually consistent).
 */
export async function queryPage(input: Omit<QueryInput, 'TableName'>, start?: Item): Promise<QueryPage> {
  const query = async (consistent: boolean) => {
    const output = await dynamodb.query({
      ...input,
      ...(consistent ? { ConsistentRead: true } : {}),
      TableName: tableName(),
      ExclusiveStartKey: start,
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    });
    recordConsumedCapacity(output.ConsumedCapacity, 'read');
    recordItemsRead(output.ScannedCount ?? 0);
    return output;
  };
  let output = await query(false);
  const firstItems = output.Items ?? [];
  const items = await resolveFences(firstItems, async () => {
    if (input.IndexName === undefined) {
      output = await query(true);
      return output.Items ?? [];
    }
    return batchGetRaw(firstItems.map(keyOf), { projection: tableProjection(input), consistent: true });
  });
  return { items, scanned: output.ScannedCount ?? 0, next: output.LastEvaluatedKey };
}

const keyOf = (item: Item): Key => ({ pk: item.pk as string, sk: item.sk as string });

/** A query's projection as a read of the table by keys takes it: a query's names may also serve its key condition and filter, which a batch read refuses. */
function tableProjection(input: Omit<QueryInput, 'TableName'>): Projection | undefined {
  if (!input.ProjectionExpression) return undefined;
  return {
    ProjectionExpression: input.ProjectionExpression,
    ExpressionAttributeNames: usedPlaceholders(input.ExpressionAttributeNames ?? {}, input.ProjectionExpression),
  };
}

/** Every page of a query on the table or one of its indexes; `onPage` hears how many items each page read. */
export async function queryAll(input: Omit<QueryInput, 'TableName'>, onPage?: (scanned: number) => void): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await queryPage(input, start);
    onPage?.(page.scanned);
    items.push(...page.items);
    start = page.next;
  } while (start);
  return items;
}
