/**
 * The allocation event item: one committed change of a consumer's
 * allocations (shared/domain/history.ts), written by the history function
 * from the table's change stream (shared/storage/history/stream.ts) and kept until
 * the table's TTL removes it.
 *
 *   pk HISTORY#CONSUMER#<uuid>    sk <commit time>#<stream sequence number>   the event
 *   pk HISTORY#RP#<uuid>          sk the same                                 one per provider before or after
 *   pk HISTORY#PROJECT#<project>  sk the same                                 one per project before or after
 *
 * The sort key orders a partition by commit time; the stream's sequence
 * number, unique per change and the same on every retry of the stream's
 * batch, makes the writes idempotent. Before and after are stored as
 * gzipped JSON: a consumer at the item bound (allocations on 2,800
 * providers) then still fits twice in one item. A provider's or project's
 * item carries them too when they are small (nova's consumers, on one to
 * three providers); otherwise it refers to the consumer's item, read by
 * the same sort key.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AllocationEvent, Holdings } from '../../domain/history.js';
import { boundedItem, MalformedItem, nullableStringField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart, uuidPart } from './key-parts.js';
import { TTL_ATTRIBUTE } from '../table-definition.js';

export const ALLOCATION_EVENT_TYPE = 'allocationEvent';

const AllocationEventAttribute = {
  at: 'at',
  consumer: 'consumer',
  projectId: 'projectId',
  userId: 'userId',
  consumerType: 'consumerType',
  requestId: 'requestId',
  previousProjectId: 'previousProjectId',
  /** Absent on events recorded before it was kept (read as null). */
  previousUserId: 'previousUserId',
  /** gzipped JSON `{before, after}`; absent on a provider's or project's item that refers to the consumer's. */
  holdings: 'holdings',
  expiresAt: TTL_ATTRIBUTE,
} as const;
const A = AllocationEventAttribute;

/** Largest gzipped before and after a provider's or project's item carries itself. */
const INLINE_HOLDINGS_BYTES = 2048;

export const consumerHistoryPk = (uuid: string): string => uuidPart('HISTORY#CONSUMER', uuid);
export const providerHistoryPk = (uuid: string): string => uuidPart('HISTORY#RP', uuid);
export const projectHistoryPk = (projectId: string): string => clientPart('HISTORY#PROJECT', projectId);

/** Sequence numbers are decimal strings of up to 40 digits: padded, they sort as numbers. */
export const eventSortKey = (at: string, sequenceNumber: string): string => `${at}#${sequenceNumber.padStart(40, '0')}`;
/** The first sort key at or after `at` (an ISO 8601 time in UTC). */
export const sortKeyFrom = (at: string): string => at;

/**
 * The event's items: the consumer's and one per provider it held resources
 * on before or after (`items`), and one per project it counted in
 * (`projectItems`, which the hour totals are added with);
 * `expiresAt` in seconds since the epoch.
 */
export function encodeAllocationEvent(event: AllocationEvent, sequenceNumber: string, expiresAt: number): { items: Item[]; projectItems: Item[] } {
  const sk = eventSortKey(event.at, sequenceNumber);
  const holdings = gzipSync(JSON.stringify({ before: event.before, after: event.after }));
  const attributes: Item = {
    sk,
    [TYPE_ATTRIBUTE]: ALLOCATION_EVENT_TYPE,
    [A.at]: event.at,
    [A.consumer]: event.consumer,
    [A.projectId]: event.projectId,
    [A.userId]: event.userId,
    [A.consumerType]: event.consumerType,
    [A.requestId]: event.requestId,
    [A.previousProjectId]: event.previousProjectId,
    [A.previousUserId]: event.previousUserId,
    [A.expiresAt]: expiresAt,
  };
  const copies = holdings.byteLength <= INLINE_HOLDINGS_BYTES ? { [A.holdings]: holdings } : {};
  const providers = new Set([...Object.keys(event.before), ...Object.keys(event.after)]);
  const projects = new Set([event.projectId, ...(event.previousProjectId === null ? [] : [event.previousProjectId])]);
  const consumerItem = boundedItem(
    { pk: consumerHistoryPk(event.consumer), ...attributes, [A.holdings]: holdings },
    () => `Allocation event of ${event.consumer}`,
  );
  return {
    items: [consumerItem, ...[...providers].map((uuid) => ({ pk: providerHistoryPk(uuid), ...attributes, ...copies }))],
    projectItems: [...projects].map((projectId) => ({ pk: projectHistoryPk(projectId), ...attributes, ...copies })),
  };
}

/** The consumer's item an item without its own before and after refers to, or undefined for one that has them. */
export function referredEvent(item: Item): Key | undefined {
  return item[A.holdings] === undefined ? { pk: consumerHistoryPk(stringField(item, A.consumer)), sk: stringField(item, 'sk') } : undefined;
}

/** The one decoder: an item with its before and after (the consumer's, or a copy carrying them). */
export function decodeAllocationEvent(item: Item): AllocationEvent {
  const stored = item[A.holdings];
  if (!(stored instanceof Uint8Array)) throw new MalformedItem(A.holdings, 'binary', item);
  const { before, after } = JSON.parse(gunzipSync(stored).toString()) as { before: Holdings; after: Holdings };
  return {
    at: stringField(item, A.at),
    consumer: stringField(item, A.consumer),
    projectId: stringField(item, A.projectId),
    userId: stringField(item, A.userId),
    consumerType: nullableStringField(item, A.consumerType),
    requestId: nullableStringField(item, A.requestId),
    previousProjectId: nullableStringField(item, A.previousProjectId),
    previousUserId: nullableStringField(item, A.previousUserId),
    before,
    after,
  };
}
