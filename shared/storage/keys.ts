/**
 * Every key of the single-table design, in one place.
 *
 *   item            pk                 sk              gpk / gsk (byGroup)           spk / ssk (byShard)
 *   provider        RP#<uuid>          PROVIDER                                       SHARD#<n> / <root>#<uuid>
 *   provider name   RPNAME#<name>      RPNAME
 *   allocation      RP#<uuid>          ALLOC#<consumer>
 *   consumer        CONSUMER#<uuid>    CONSUMER        PROJECT#<p> / USER#<u>#<uuid>
 *   resource class  RESOURCE_CLASSES   <name>
 *   trait           TRAITS             <name>
 *   sharing marker  SHARING            <uuid>                  (providers with MISC_SHARES_VIA_AGGREGATE)
 *                   SHARING#<aggregate> <uuid>                 (the same, per aggregate)
 *   aggregate member AGG#<aggregate>   RP#<uuid>
 *
 * Provider and consumer uuids are keyed in lower case (see foldUuidCase).
 * A client's string that could pass DynamoDB's key limits is keyed by its
 * digest instead (see clientPart).
 */
import { createHash } from 'node:crypto';
import { foldUuidCase } from '../domain/uuid.js';
import { PROVIDER_SHARDS } from './table-definition.js';

export interface Key {
  pk: string;
  sk: string;
}

export const PROVIDER_SK = 'PROVIDER';
export const ALLOCATION_PREFIX = 'ALLOC#';

/** Bytes of a client's string kept as they are in a partition key (DynamoDB's limit: 2048). */
const PARTITION_PART_BYTES = 1024;
/** In a sort key (limit 1024), which may also hold a uuid. */
const SORT_PART_BYTES = 400;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * `<prefix>#<value>`, the value being a string a client chose (a path
 * segment, a name, a project or user id), as long as it fits; a longer one
 * (which only a query can name, or a user id of 255 four-byte characters)
 * is keyed `<prefix>@<SHA-256>` instead, so that every key fits DynamoDB's
 * limits and no short string can pose as a long one's digest. The items keep
 * the value itself.
 */
function clientPart(prefix: string, value: string, maxBytes = PARTITION_PART_BYTES): string {
  return Buffer.byteLength(value) <= maxBytes ? `${prefix}#${value}` : `${prefix}@${sha256(value)}`;
}

const uuidPart = (prefix: string, uuid: string) => clientPart(prefix, foldUuidCase(uuid));

export const providerKey = (uuid: string): Key => ({ pk: uuidPart('RP', uuid), sk: PROVIDER_SK });
export const providerNameKey = (name: string): Key => ({ pk: clientPart('RPNAME', name), sk: 'RPNAME' });
export const providerAllocationsPartition = (providerUuid: string): string => uuidPart('RP', providerUuid);
export const allocationKey = (providerUuid: string, consumerUuid: string): Key => ({
  pk: providerAllocationsPartition(providerUuid),
  sk: `${ALLOCATION_PREFIX}${foldUuidCase(consumerUuid)}`,
});
export const consumerKey = (uuid: string): Key => ({ pk: uuidPart('CONSUMER', uuid), sk: 'CONSUMER' });

/** The candidate search starts from these: sharing providers, and the members of an aggregate. */
export const SHARING_PK = 'SHARING';
export const sharingMarkerKey = (uuid: string): Key => ({ pk: SHARING_PK, sk: uuid });
export const sharingPartition = (aggregate: string): string => clientPart(SHARING_PK, aggregate);
export const sharingInAggregateKey = (aggregate: string, uuid: string): Key => ({ pk: sharingPartition(aggregate), sk: uuid });
export const aggregatePartition = (aggregate: string): string => clientPart('AGG', aggregate);
export const aggregateMemberKey = (aggregate: string, uuid: string): Key => ({ pk: aggregatePartition(aggregate), sk: `RP#${uuid}` });

export const RESOURCE_CLASSES_PK = 'RESOURCE_CLASSES';
export const TRAITS_PK = 'TRAITS';

export const projectGroup = (projectId: string): string => clientPart('PROJECT', projectId);
/** The start of the byGroup sort keys of one user's consumers. */
export const userPrefix = (userId: string): string => `${clientPart('USER', userId, SORT_PART_BYTES)}#`;

/**
 * Index keys of a provider item: its shard (byShard), whose sort key keeps
 * each tree together, which is how a tree is listed. Providers are in no
 * other index, so that a claim, which changes a provider's usage, rewrites
 * one index entry only (an index entry is rewritten whenever its item is).
 */
export function providerIndexKeys(uuid: string, rootUuid: string) {
  return { spk: shardOf(rootUuid), ssk: `${treeSortPrefix(rootUuid)}${uuid}` };
}

/** The byShard sort keys of one tree's providers begin with this. */
export const treeSortPrefix = (rootUuid: string): string => `${rootUuid}#`;

export function consumerIndexKeys(uuid: string, projectId: string, userId: string) {
  return { gpk: projectGroup(projectId), gsk: `${userPrefix(userId)}${uuid}` };
}

/** Trees, not providers, are sharded, so a whole tree sits in one index partition. */
export function shardOf(rootUuid: string): string {
  const digest = createHash('sha1').update(rootUuid).digest();
  return `SHARD#${digest.readUInt16BE(0) % PROVIDER_SHARDS}`;
}

export const allShards = (): string[] => Array.from({ length: PROVIDER_SHARDS }, (_, n) => `SHARD#${n}`);
