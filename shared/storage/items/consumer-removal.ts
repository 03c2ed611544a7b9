/**
 * The consumer removal note: when and by which request a consumer's last
 * allocations went. The consumer item is deleted in that commit, so the
 * change stream's record of it holds only the item as it was; the history
 * function (shared/storage/history/stream.ts) reads this note, written in the same
 * commit beside the consumer, for the event's time and request. It lapses
 * (TTL) after two days, longer than the stream keeps a record (24 hours).
 *
 *   pk CONSUMER#<uuid>   sk REMOVED#<updatedAt of the consumer removed>   expiresAt (TTL)
 *
 * Keyed by the removed version's update time, so that a consumer created
 * again and removed again gets a note of its own. Release 1.0.0 reads the
 * consumer's partition by its key alone (sk CONSUMER) and never sees it.
 */
import type { ChangeStamp } from '../../domain/history.js';
import { nullableStringField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { consumerKey } from './consumer.js';
import { TTL_ATTRIBUTE } from '../table-definition.js';

export const CONSUMER_REMOVAL_TYPE = 'consumerRemoval';

const ConsumerRemovalAttribute = { at: 'at', requestId: 'requestId', expiresAt: TTL_ATTRIBUTE } as const;
const A = ConsumerRemovalAttribute;

const KEPT_SECONDS = 2 * 24 * 3600;

export const consumerRemovalKey = (uuid: string, removedUpdatedAt: string): Key => ({ pk: consumerKey(uuid).pk, sk: `REMOVED#${removedUpdatedAt}` });

export const encodeConsumerRemoval = (uuid: string, removedUpdatedAt: string, stamp: ChangeStamp): Item => ({
  ...consumerRemovalKey(uuid, removedUpdatedAt),
  [TYPE_ATTRIBUTE]: CONSUMER_REMOVAL_TYPE,
  [A.at]: stamp.at,
  [A.requestId]: stamp.requestId,
  [A.expiresAt]: Math.ceil(Date.parse(stamp.at) / 1000) + KEPT_SECONDS,
});

export const decodeConsumerRemoval = (item: Item): ChangeStamp => ({ at: stringField(item, A.at), requestId: nullableStringField(item, A.requestId) });
