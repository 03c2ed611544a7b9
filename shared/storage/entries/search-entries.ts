/**
 * The search entries of a provider (items/search-entry.ts): its aggregate
 * memberships, its sharing marker and sharing entries, and from storage
 * format 3 on one holder entry per trait. A provider change writes the
 * difference in its commit (searchEntryWrites), or just before and after
 * it when they are many (outside-commit.ts). A reader takes an entry only
 * as far as the provider it names, read, agrees (agreesWithEntries).
 */
import type { Provider } from '../../domain/model.js';
import { SHARING_TRAIT } from '../../domain/standard-catalog.js';
import { tableName } from '../dynamodb.js';
import { queryAll } from '../reads.js';
import { keepsEntries } from '../storage-format.js';
import type { Write } from '../commit/write.js';
import type { Key } from '../items/fields.js';
import { aggregateMemberKey, decodeSearchEntry, encodeSearchEntry, sharingInAggregateKey, sharingMarkerKey, traitHolderKey } from '../items/search-entry.js';

/** A search entry with what it is about: an aggregate (a membership or a sharing entry), a trait, or neither (the sharing marker). */
export interface SearchEntry {
  aggregate?: string;
  trait?: string;
  key: Key;
}

/** What a provider's search entries follow from. */
export interface EntrySubjects {
  aggregates: readonly string[];
  /** Traits whose holder entries there are (none before format 3). */
  traits: readonly string[];
  /** Whether it shares through its aggregates (a sharing entry in each). */
  sharing: boolean;
  /** Whether its sharing marker (in no aggregate) is among them. */
  marker: boolean;
}

/** The search entries these subjects give a provider. */
export function searchEntriesOf(uuid: string, { aggregates, traits, sharing, marker }: EntrySubjects): SearchEntry[] {
  const entries: SearchEntry[] = marker ? [{ key: sharingMarkerKey(uuid) }] : [];
  for (const aggregate of aggregates) {
    entries.push({ aggregate, key: aggregateMemberKey(aggregate, uuid) });
    if (sharing) entries.push({ aggregate, key: sharingInAggregateKey(aggregate, uuid) });
  }
  for (const trait of traits) entries.push({ trait, key: traitHolderKey(trait, uuid) });
  return entries;
}

/** What a provider in this state has search entries for, in the table's format. */
export function subjectsOf(provider: Pick<Provider, 'aggregates' | 'traits'>): EntrySubjects {
  const sharing = provider.traits.includes(SHARING_TRAIT);
  return { aggregates: provider.aggregates, traits: keepsEntries() ? provider.traits : [], sharing, marker: sharing };
}

/** The search entries a provider change adds (puts) and removes (deletes). */
export function searchEntryWrites(before: Provider | undefined, after: Provider | undefined): Write[] {
  const entries = (provider: Provider | undefined): Map<string, Key> =>
    new Map(provider === undefined ? [] : searchEntriesOf(provider.uuid, subjectsOf(provider)).map(({ key }) => [`${key.pk} ${key.sk}`, key]));
  const old = entries(before);
  const next = entries(after);
  const writes: Write[] = [];
  for (const [name, key] of next) {
    if (!old.has(name)) writes.push({ item: { Put: { TableName: tableName(), Item: encodeSearchEntry(key, after!.uuid) } } });
  }
  for (const [name, key] of old) {
    if (!next.has(name)) writes.push({ item: { Delete: { TableName: tableName(), Key: key } } });
  }
  return writes;
}

/** The uuids the search entries of these partitions name; `onPage` hears how many items each page read. */
export async function listSearchEntries(partitions: string[], onPage?: (scanned: number) => void): Promise<string[]> {
  const pages = await Promise.all(partitions.map((pk) => queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }, onPage)));
  return [...new Set(pages.flat().map(decodeSearchEntry))];
}

/**
 * Whether a provider, read, agrees with the search entries it was found by:
 * it is in one of the aggregates (when they are given) and, for sharing
 * entries, shares through them. Readers take an entry only as far as this:
 * a deleted provider's entries outlive it for a moment (outside-commit.ts),
 * and one created again under the same uuid is a new provider.
 */
export function agreesWithEntries(provider: Pick<Provider, 'aggregates' | 'traits'>, aggregates: readonly string[] | undefined, sharing: boolean): boolean {
  if (sharing && !provider.traits.includes(SHARING_TRAIT)) return false;
  return aggregates === undefined || provider.aggregates.some((aggregate) => aggregates.includes(aggregate));
}
