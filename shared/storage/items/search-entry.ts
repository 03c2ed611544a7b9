/**
 * Search entries: the items the allocation candidate search and member_of
 * listings start from, kept by every provider change in the same commit as
 * the provider (providers.ts), or just before or after it
 * (entries/outside-commit.ts). Each names one provider:
 *
 *   aggregate member   pk AGG#<aggregate>       sk RP#<uuid>
 *   sharing provider   pk SHARING               sk <uuid>   (providers with MISC_SHARES_VIA_AGGREGATE)
 *                      pk SHARING#<aggregate>   sk <uuid>   (the same, per aggregate)
 *   trait holder       pk TRAIT#<trait>         sk RP#<uuid>   (storage format 3)
 *
 * One item per provider and aggregate or trait, never one item that many
 * providers write, so they make a change bigger but never make an item hot.
 *
 * An entry written ahead of the change that adds its aggregate
 * (providers.ts, addEntriesAhead) carries `heldUntil` (ms since the epoch):
 * until then no entry cleanup removes it, whatever the provider lists.
 */
import { stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart } from './key-parts.js';

export const SEARCH_ENTRY_TYPE = 'searchEntry';
export const SearchEntryAttribute = { uuid: 'uuid', heldUntil: 'heldUntil' } as const;

export const SHARING_PK = 'SHARING';
export const sharingMarkerKey = (uuid: string): Key => ({ pk: SHARING_PK, sk: uuid });
export const sharingPartition = (aggregate: string): string => clientPart(SHARING_PK, aggregate);
export const sharingInAggregateKey = (aggregate: string, uuid: string): Key => ({ pk: sharingPartition(aggregate), sk: uuid });
export const aggregatePartition = (aggregate: string): string => clientPart('AGG', aggregate);
export const aggregateMemberKey = (aggregate: string, uuid: string): Key => ({ pk: aggregatePartition(aggregate), sk: `RP#${uuid}` });
export const traitPartition = (trait: string): string => clientPart('TRAIT', trait);
export const traitHolderKey = (trait: string, uuid: string): Key => ({ pk: traitPartition(trait), sk: `RP#${uuid}` });

export const encodeSearchEntry = (key: Key, providerUuid: string, heldUntil?: number): Item => ({
  ...key,
  [TYPE_ATTRIBUTE]: SEARCH_ENTRY_TYPE,
  [SearchEntryAttribute.uuid]: providerUuid,
  ...(heldUntil !== undefined && { [SearchEntryAttribute.heldUntil]: heldUntil }),
});

/** The uuid of the provider the entry names. */
export const decodeSearchEntry = (item: Item): string => stringField(item, SearchEntryAttribute.uuid);
