/**
 * What the history function makes of the table's change stream
 * (docs/operators/history.md): the allocation events, their hour totals
 * (hour-totals.ts), and how far it has read the stream.
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
import { allocationEvent, type ChangeStamp } from '../../domain/history.js';
import type { Consumer } from '../../domain/model.js';
import { config } from '../../config.js';
import { isConditionalCheckFailed, putItem, tableName, updateItem } from '../dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from '../consumed-capacity.js';
import { getItem } from '../reads.js';
import { putAll } from '../commit/journal.js';
import { TYPE_ATTRIBUTE, type Item } from '../items/fields.js';
import { CONSUMER_TYPE, consumerRequestId, decodeConsumer } from '../items/consumer.js';
import { consumerRemovalKey, decodeConsumerRemoval } from '../items/consumer-removal.js';
import { encodeAllocationEvent } from '../items/allocation-event.js';
import { decodeStreamCheckpoint, encodeStreamCheckpoint, streamCheckpointKey, type StreamCheckpoint } from '../items/stream-checkpoint.js';
import { decodeHistoryPosition, encodeHistoryPosition, historyPositionKey, type HistoryPosition } from '../items/history-position.js';
import {
  decodeHistoryHeartbeat,
  encodeHistoryHeartbeat,
  HEARTBEAT_LANES,
  heartbeatLane,
  historyHeartbeatKey,
  isHistoryHeartbeat,
  type HistoryHeartbeat,
} from '../items/history-heartbeat.js';
import { decodeHistoryLanes, historyLanesKey, laneAttribute } from '../items/history-lanes.js';
import { markHourTotalsStart, recordProjectEvents, type ProjectEvent } from './hour-totals.js';

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
 * anything (under a project, with the hour totals: hour-totals.ts).
 * Returns the events written.
 */
export async function recordAllocationEvents(records: readonly ChangeRecord[]): Promise<number> {
  const items: Item[] = [];
  const events: ProjectEvent[] = [];
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
    const { items: eventItems, projectItems } = encodeAllocationEvent(event, change.SequenceNumber!, expiresAt(event.at));
    items.push(...eventItems);
    events.push({ event, projectItems });
  }
  await putAll(items);
  await recordProjectEvents(events);
  if (newest !== '') await saveHistoryPosition({ newestChangeRead: newest, readAt: new Date().toISOString(), release: config.release });
  if (lanes.size > 0) await saveLanesRead(lanes);
  return events.length;
}

/**
 * Writes how far the stream has been read. A position written before by a
 * release that keeps no hour totals (1.1.0, beside this one during a
 * deploy or after a rollback: it stamps no release) may have recorded
 * events without theirs, so the hours until the next are read from events
 * (hour-totals.ts); where no position was ever written, every hour has its
 * totals.
 */
async function saveHistoryPosition(position: HistoryPosition): Promise<void> {
  const put = (condition?: string) =>
    putItem({
      TableName: tableName(),
      Item: encodeHistoryPosition(position),
      ...(condition === undefined ? {} : { ConditionExpression: condition, ExpressionAttributeNames: { '#release': 'release' } }),
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    });
  try {
    recordConsumedCapacity((await put('attribute_exists(#release)')).ConsumedCapacity, 'write');
    return;
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
  const previous = await getItem(historyPositionKey);
  if (previous?.release === undefined) await markHourTotalsStart(previous === undefined);
  recordConsumedCapacity((await put()).ConsumedCapacity, 'write');
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
