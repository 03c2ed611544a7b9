/**
 * Every key of the single-table design, in one place.
 *
 *   item            pk                 sk              gpk / gsk (byGroup)           spk / ssk (byShard)
 *   provider        RP#<uuid>          PROVIDER        TREE#<root> / RP#<uuid>        SHARD#<n> / <root>#<uuid>
 *   provider name   RPNAME#<name>      RPNAME
 *   allocation      RP#<uuid>          ALLOC#<consumer>
 *   consumer        CONSUMER#<uuid>    CONSUMER        PROJECT#<p> / USER#<u>#<uuid>
 *   resource class  RESOURCE_CLASSES   <name>
 *   trait           TRAITS             <name>
 *   sharing marker  SHARING            <uuid>                  (providers with MISC_SHARES_VIA_AGGREGATE)
 *                   SHARING#<aggregate> <uuid>                 (the same, per aggregate)
 *   aggregate member AGG#<aggregate>   RP#<uuid>
 */
import { createHash } from 'node:crypto';
import { PROVIDER_SHARDS } from './table-definition.js';

export interface Key {
  pk: string;
  sk: string;
}

export const PROVIDER_SK = 'PROVIDER';
export const ALLOCATION_PREFIX = 'ALLOC#';

export const providerKey = (uuid: string): Key => ({ pk: `RP#${uuid}`, sk: PROVIDER_SK });
export const providerNameKey = (name: string): Key => ({ pk: `RPNAME#${name}`, sk: 'RPNAME' });
export const allocationKey = (providerUuid: string, consumerUuid: string): Key => ({
  pk: `RP#${providerUuid}`,
  sk: `${ALLOCATION_PREFIX}${consumerUuid}`,
});
export const providerAllocationsPartition = (providerUuid: string): string => `RP#${providerUuid}`;
export const consumerKey = (uuid: string): Key => ({ pk: `CONSUMER#${uuid}`, sk: 'CONSUMER' });

/** The candidate search starts from these: sharing providers, and the members of an aggregate. */
export const SHARING_PK = 'SHARING';
export const sharingMarkerKey = (uuid: string): Key => ({ pk: SHARING_PK, sk: uuid });
export const sharingPartition = (aggregate: string): string => `${SHARING_PK}#${aggregate}`;
export const sharingInAggregateKey = (aggregate: string, uuid: string): Key => ({ pk: sharingPartition(aggregate), sk: uuid });
export const aggregatePartition = (aggregate: string): string => `AGG#${aggregate}`;
export const aggregateMemberKey = (aggregate: string, uuid: string): Key => ({ pk: aggregatePartition(aggregate), sk: `RP#${uuid}` });

export const RESOURCE_CLASSES_PK = 'RESOURCE_CLASSES';
export const TRAITS_PK = 'TRAITS';
export const resourceClassKey = (name: string): Key => ({ pk: RESOURCE_CLASSES_PK, sk: name });
export const traitKey = (name: string): Key => ({ pk: TRAITS_PK, sk: name });

export const treeGroup = (rootUuid: string): string => `TREE#${rootUuid}`;
export const projectGroup = (projectId: string): string => `PROJECT#${projectId}`;
export const userPrefix = (userId: string): string => `USER#${userId}#`;

/** Index keys of a provider item: its tree (byGroup) and its shard (byShard). */
export function providerIndexKeys(uuid: string, rootUuid: string) {
  return {
    gpk: treeGroup(rootUuid),
    gsk: `RP#${uuid}`,
    spk: shardOf(rootUuid),
    ssk: `${rootUuid}#${uuid}`,
  };
}

export function consumerIndexKeys(uuid: string, projectId: string, userId: string) {
  return { gpk: projectGroup(projectId), gsk: `${userPrefix(userId)}${uuid}` };
}

/** Trees, not providers, are sharded, so a whole tree sits in one index partition. */
export function shardOf(rootUuid: string): string {
  const digest = createHash('sha1').update(rootUuid).digest();
  return `SHARD#${digest.readUInt16BE(0) % PROVIDER_SHARDS}`;
}

export const allShards = (): string[] => Array.from({ length: PROVIDER_SHARDS }, (_, n) => `SHARD#${n}`);
