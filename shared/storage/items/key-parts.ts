/**
 * How the item models build keys from what clients chose. Provider and
 * consumer uuids are keyed in lower case (foldUuidCase). A client's string
 * that could pass DynamoDB's key limits is keyed by its digest instead
 * (clientPart).
 */
import { createHash } from 'node:crypto';
import { foldUuidCase } from '../../domain/uuid.js';

/** Bytes of a client's string kept as they are in a partition key (DynamoDB's limit: 2048). */
const PARTITION_PART_BYTES = 1024;
/** In a sort key (limit 1024), which may also hold a uuid. */
export const SORT_PART_BYTES = 400;

export const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/**
 * `<prefix>#<value>`, the value being a string a client chose (a path
 * segment, a name, a project or user id), as long as it fits; a longer one
 * (which only a query can name, or a user id of 255 four-byte characters)
 * is keyed `<prefix>@<SHA-256>` instead, so that every key fits DynamoDB's
 * limits and no short string can pose as a long one's digest. The items keep
 * the value itself.
 */
export function clientPart(prefix: string, value: string, maxBytes = PARTITION_PART_BYTES): string {
  return Buffer.byteLength(value) <= maxBytes ? `${prefix}#${value}` : `${prefix}@${sha256(value)}`;
}

/** `<prefix>#<uuid>`, the uuid in lower case. */
export const uuidPart = (prefix: string, uuid: string): string => clientPart(prefix, foldUuidCase(uuid));
