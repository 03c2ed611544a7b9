/**
 * How far the local service has read one shard of DynamoDB Local's change
 * stream into the allocation history (local/change-stream.ts), so that a
 * service started again on the same database goes on where the last one
 * stopped. In AWS, Lambda's event source mapping keeps this itself.
 *
 *   pk HISTORY_STREAM   sk SHARD#<shard id>
 */
import { booleanField, optionalStringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const STREAM_CHECKPOINT_TYPE = 'streamCheckpoint';

export interface StreamCheckpoint {
  /** The last record read and handled; absent: none yet. */
  sequenceNumber?: string;
  /** The shard is closed and every record of it was read. */
  finished: boolean;
}

export const streamCheckpointKey = (shardId: string): Key => ({ pk: 'HISTORY_STREAM', sk: `SHARD#${shardId}` });

export const encodeStreamCheckpoint = (shardId: string, { sequenceNumber, finished }: StreamCheckpoint): Item => ({
  ...streamCheckpointKey(shardId),
  [TYPE_ATTRIBUTE]: STREAM_CHECKPOINT_TYPE,
  sequenceNumber,
  finished,
});

export const decodeStreamCheckpoint = (item: Item): StreamCheckpoint => ({
  sequenceNumber: optionalStringField(item, 'sequenceNumber'),
  finished: booleanField(item, 'finished'),
});
