/**
 * The allocation history's storage (docs/operators/history.md): the events
 * the history function makes from the table's change stream, and the
 * reads of the history routes.
 *
 * The stream's record of a consumer item holds the item before and after
 * the commit. The write stamps the item with its time (`updatedAt`) and its
 * request; a consumer that goes leaves a removal note with both
 * (items/consumer-removal.ts). A version without a stamp of its own (a
 * class renamed in place, or a removal by release 1.0.0) takes the stream's
 * time of the record, to the second, and no request id.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { allocationEvent, type AllocationEvent, type ChangeStamp } from '../domain/history.js';
import type { Consumer } from '../domain/model.js';
import { config } from '../config.js';
import { putItem, tableName, updateItem } from './dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from './consumed-capacity.js';
import { batchGet, getItem, queryAll, queryPage } from './reads.js';
import { putAll } from './commit/journal.js';
import { TYPE_ATTRIBUTE, type Item } from './items/fields.js';
import { CONSUMER_TYPE, consumerRequestId, decodeConsumer } from './items/consumer.js';
import { consumerRemovalKey, decodeConsumerRemoval } from './items/consumer-removal.js';
import {
  consumerHistoryPk,
  decodeAllocationEvent,
  encodeAllocationEvent,
  projectHistoryPk,
  providerHistoryPk,
  referredEvent,
  sortKeyFrom,
} from './items/allocation-event.js';
import { decodeStreamCheckpoint, encodeStreamCheckpoint, streamCheckpointKey, type StreamCheckpoint } from './items/stream-checkpoint.js';
import { decodeHistoryPosition, encodeHistoryPosition, historyPositionKey, type HistoryPosition } from './items/history-position.js';
import {
  decodeHistoryHeartbeat,
  encodeHistoryHeartbeat,
  HEARTBEAT_LANES,
  heartbeatLane,
  historyHeartbeatKey,
  isHistoryHeartbeat,
  type HistoryHeartbeat,
} from './items/history-heartbeat.js';
import { decodeHistoryLanes, historyLanesKey, laneAttribute } from './items/history-lanes.js';

/** What the history reads of a change stream record: Lambda's event and DynamoDB Streams' GetRecords give the same. */
export interface ChangeRecord {
  dynamodb?: {
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    SequenceNumber?: string;
    /** Seconds since the epoch in Lambda's event; a time in text where the AWS CLI printed the records (a replay). */
    ApproximateCreationDateTime?: number | string;
  };
}

/** A consumer item of a record's image; undefined for none, and for a multi-step change's placeholder (journal.ts: no type), which stands for none. */
function consumerImage(raw: Record<string, unknown> | undefined): Item | undefined {
  const item = raw === undefined ? undefined : unmarshall(raw as Record<string, AttributeValue>);
  return item?.[TYPE_ATTRIBUTE] === CONSUMER_TYPE ? item : undefined;
}

/** The sweeper's heartbeat of a record's new image and its lane (items/history-heartbeat.ts); undefined for anything else. */
function heartbeatImage(raw: Record<string, unknown> | undefined): (HistoryHeartbeat & { lane: number }) | undefined {
  const item = raw === undefined ? undefined : unmarshall(raw as Record<string, AttributeValue>);
  return isHistoryHeartbeat(item) ? { ...decodeHistoryHeartbeat(item!), lane: heartbeatLane(item!) } : undefined;
}

/** When the commit was and which request made it (see the module's comment). */
async function stampOf(beforeItem: Item | undefined, before: Consumer | undefined, afterItem: Item | undefined, streamAt: string): Promise<ChangeStamp> {
  const unstamped = { at: streamAt, requestId: null };
  if (afterItem === undefined) {
    const note = await getItem(consumerRemovalKey(before!.uuid, before!.updatedAt));
    return note === undefined ? unstamped : decodeConsumerRemoval(note);
  }
  const after = decodeConsumer(afterItem);
  if (beforeItem !== undefined && before!.updatedAt === after.updatedAt) return unstamped;
  return { at: after.updatedAt, requestId: consumerRequestId(afterItem) ?? null };
}

/** The retention (config.historyRetentionDays) as the TTL of an event committed at `at`, in seconds since the epoch. */
const expiresAt = (at: string): number => Math.ceil(Date.parse(at) / 1000) + config.historyRetentionDays * 86_400;

/**
 * Writes the events of a batch of stream records, in the stream's order,
 * and then how far the stream has been read; the other records are passed
 * over. Each event's items are keyed by its record's sequence number, so
 * the batch may be written again (the stream's retry) without doubling
 * anything. Returns the events written.
 */
export async function recordAllocationEvents(records: readonly ChangeRecord[]): Promise<number> {
  const items: Item[] = [];
  let events = 0;
  /** The newest commit time among the consumer records and heartbeats (ISO 8601 strings in UTC sort as times). */
  let newest = '';
  /** The newest heartbeat of each lane the batch carries. */
  const lanes = new Map<number, string>();
  for (const { dynamodb: change } of records) {
    if (change === undefined) continue;
    const heartbeat = heartbeatImage(change.NewImage);
    if (heartbeat !== undefined) {
      if (heartbeat.at > newest) newest = heartbeat.at;
      if (heartbeat.at > (lanes.get(heartbeat.lane) ?? '')) lanes.set(heartbeat.lane, heartbeat.at);
      continue;
    }
    const beforeItem = consumerImage(change.OldImage);
    const afterItem = consumerImage(change.NewImage);
    if (afterItem === undefined && beforeItem === undefined) continue;
    const before = beforeItem === undefined ? undefined : decodeConsumer(beforeItem);
    const after = afterItem === undefined ? undefined : decodeConsumer(afterItem);
    const created = change.ApproximateCreationDateTime ?? 0;
    const streamAt = new Date(typeof created === 'string' ? Date.parse(created) : created * 1000).toISOString();
    const stamp = await stampOf(beforeItem, before, afterItem, streamAt);
    if (stamp.at > newest) newest = stamp.at;
    const event = allocationEvent(before, after, stamp);
    if (event === undefined) continue;
    items.push(...encodeAllocationEvent(event, change.SequenceNumber!, expiresAt(event.at)));
    events++;
  }
  await putAll(items);
  if (newest !== '') {
    const position = { newestChangeRead: newest, readAt: new Date().toISOString(), release: config.release };
    const output = await putItem({ TableName: tableName(), Item: encodeHistoryPosition(position), ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY });
    recordConsumedCapacity(output.ConsumedCapacity, 'write');
  }
  if (lanes.size > 0) await saveLanesRead(lanes);
  return events;
}

/** Moves each lane to the newest heartbeat the batch read on it (the other lanes' shards are read by other batches). */
async function saveLanesRead(lanes: Map<number, string>): Promise<void> {
  const entries = [...lanes];
  const output = await updateItem({
    TableName: tableName(),
    Key: historyLanesKey,
    UpdateExpression: `SET ${entries.map((_, index) => `#l${index} = :l${index}`).join(', ')}`,
    ExpressionAttributeNames: Object.fromEntries(entries.map(([lane], index) => [`#l${index}`, laneAttribute(lane)])),
    ExpressionAttributeValues: Object.fromEntries(entries.map(([, at], index) => [`:l${index}`, at])),
    ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
  });
  recordConsumedCapacity(output.ConsumedCapacity, 'write');
}

/** How far each heartbeat lane has been read: the newest heartbeat time read on it (lanes never read are absent). */
export async function readHistoryLanes(): Promise<Map<number, string>> {
  const item = await getItem(historyLanesKey, { consistent: false });
  return item === undefined ? new Map() : decodeHistoryLanes(item);
}

/** A time range of commit times, ISO 8601 in UTC: from `since` on, before `until`. */
export interface HistoryRange {
  since?: string;
  until?: string;
}

/** A page of events: `next` is where the next page starts after (the last event's sort key), absent on the last page. */
export interface EventPage {
  events: AllocationEvent[];
  next?: string;
}

/** What of a partition a listing reads: its range, and a page of it (at most `limit` events after the marker `after`). */
interface EventQuery extends HistoryRange {
  limit?: number;
  after?: string;
}

/** Events of one history partition in the range, oldest first, up to the limit. */
async function listEvents(pk: string, { since, until, limit, after }: EventQuery): Promise<EventPage> {
  // A sort key is `<at>#<sequence number>`: from `since` itself it is at least `since`, and at `until` itself already more than `until`.
  const range =
    since !== undefined && until !== undefined
      ? ' AND #sk BETWEEN :since AND :until'
      : since !== undefined
        ? ' AND #sk >= :since'
        : until !== undefined
          ? ' AND #sk < :until'
          : '';
  const input = {
    KeyConditionExpression: `#pk = :pk${range}`,
    ExpressionAttributeNames: { '#pk': 'pk', ...(range === '' ? {} : { '#sk': 'sk' }) },
    ExpressionAttributeValues: {
      ':pk': pk,
      ...(since === undefined ? {} : { ':since': sortKeyFrom(since) }),
      ...(until === undefined ? {} : { ':until': sortKeyFrom(until) }),
    },
  };
  let items: Item[];
  let next: string | undefined;
  if (limit === undefined) {
    items = await queryAll(input);
  } else {
    // Pages of the query until one more than the limit is read (so that a last page says it is the last), starting
    // after the marker (inside the range: the caller checks).
    items = [];
    let start: Item | undefined = after === undefined ? undefined : { pk, sk: after };
    do {
      const page = await queryPage({ ...input, Limit: limit + 1 - items.length }, start);
      items.push(...page.items);
      start = page.next;
    } while (start !== undefined && items.length <= limit);
    if (items.length > limit) {
      items = items.slice(0, limit);
      next = items.at(-1)!.sk as string;
    }
  }
  const referred = items.map(referredEvent);
  const wanted = referred.filter((key) => key !== undefined);
  const full = new Map((wanted.length === 0 ? [] : await batchGet(wanted)).map((item) => [`${item.pk as string}/${item.sk as string}`, item]));
  const events = items.flatMap((item, n) => {
    const key = referred[n];
    const event = key === undefined ? item : full.get(`${key.pk}/${key.sk}`);
    // A referred event that lapsed (TTL) between the two reads is left out, as it would be a moment later.
    return event === undefined ? [] : [decodeAllocationEvent(event)];
  });
  return { events, next };
}

export const listConsumerEvents = (uuid: string, query: EventQuery): Promise<EventPage> => listEvents(consumerHistoryPk(uuid), query);
export const listProviderEvents = (uuid: string, query: EventQuery): Promise<EventPage> => listEvents(providerHistoryPk(uuid), query);
/** Every event of a project in the range (what its resource-hours are computed from). */
export const listProjectEvents = async (projectId: string, range: HistoryRange): Promise<AllocationEvent[]> =>
  (await listEvents(projectHistoryPk(projectId), range)).events;

/** How far the history function has read the stream; undefined before it read anything. */
export async function readHistoryPosition(): Promise<HistoryPosition | undefined> {
  const item = await getItem(historyPositionKey, { consistent: false });
  return item === undefined ? undefined : decodeHistoryPosition(item);
}

/** The sweeper's heartbeat through the stream, at every run, on every lane: when, and as which release. */
export async function writeHistoryHeartbeat(heartbeat: HistoryHeartbeat): Promise<void> {
  await putAll(Array.from({ length: HEARTBEAT_LANES }, (_, lane) => encodeHistoryHeartbeat(heartbeat, lane)));
}

/** The sweeper's last heartbeat (lane 0's); undefined before its first run. */
export async function readHistoryHeartbeat(): Promise<HistoryHeartbeat | undefined> {
  const item = await getItem(historyHeartbeatKey(0), { consistent: false });
  return item === undefined ? undefined : decodeHistoryHeartbeat(item);
}

/** Where the local service left off reading a shard of the stream; undefined: nowhere yet. */
export async function readStreamCheckpoint(shardId: string): Promise<StreamCheckpoint | undefined> {
  const item = await getItem(streamCheckpointKey(shardId));
  return item === undefined ? undefined : decodeStreamCheckpoint(item);
}

export async function saveStreamCheckpoint(shardId: string, checkpoint: StreamCheckpoint): Promise<void> {
  await putItem({ TableName: tableName(), Item: encodeStreamCheckpoint(shardId, checkpoint) });
}
