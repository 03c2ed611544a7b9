/**
 * Reads a region's entries against its providers and names each
 * disagreement (placement-admin upgrade verify, GET /upgrade/entries), a
 * page at a time, so that a region of any size is read in calls that each
 * fit a function's time:
 *
 * 1. providers: each provider of the byShard index, read strongly, and
 *    every entry it should have (entries/of-provider.ts): one missing, or a
 *    capacity entry that says other than the provider, is a disagreement;
 * 2. capacity: each class's capacity entries, and the providers they name:
 *    an entry whose provider is gone, has no inventory of the class, or has
 *    another amount free, is one;
 * 3. traits: each trait's holder entries: one whose provider is gone or
 *    does not hold the trait is one, unless a cleanup of a committed change
 *    still has to remove it, or a change writing ahead holds it (those are
 *    counted as pending: the bound the design gives them, at most a sweep);
 *    so is a trait held whose catalog entry names no holder
 *    (trait-holders.ts).
 *
 * A disagreement is read again once before it is named, so that a write
 * between the two reads of a live region is not taken for one.
 */
import type { Provider } from '../../domain/model.js';
import { timeLeftMs } from '../deadline.js';
import { queryPage, projectionOf, withProjection, batchGet, type Item } from '../reads.js';
import { BY_SHARD_INDEX } from '../table-definition.js';
import { resourceClasses, traits } from '../catalog.js';
import type { Key } from '../items/fields.js';
import { allShards, ProviderAttribute } from '../items/provider.js';
import { capacityPartition, CAPACITY_SHARDS, decodeCapacityEntry } from '../items/capacity-entry.js';
import { decodeSearchEntry, SearchEntryAttribute, traitPartition } from '../items/search-entry.js';
import { getProviders } from '../providers.js';
import { entriesOfProvider, type ProviderEntry } from './of-provider.js';
import { openEntryCleanups } from './outside-commit.js';

/** Where a verify goes on: the phase, the shard or name in it, and the key its next page starts after. */
export type VerifyCursor =
  | { phase: 'providers'; shard: number; after?: Item }
  | { phase: 'capacity'; name: string; shard: number; after?: Item }
  | { phase: 'traits'; name: string; after?: Item };

export interface Disagreement {
  provider: string;
  /** The entry's key, `pk sk`. */
  entry: string;
  /** What it says of the provider: `capacity VCPU`, `trait HW_CPU_X86_AVX2`, `aggregate <uuid>`. */
  subject: string;
  problem: string;
}

export interface VerifyPage {
  providers: number;
  entries: number;
  /** Entries a committed change's cleanup still has to remove, or held for a change writing ahead. */
  pending: number;
  disagreements: Disagreement[];
  /** Undefined once everything was read. */
  next?: VerifyCursor;
}

const PAGE = 100;
const keyName = (key: Key) => `${key.pk} ${key.sk}`;

/** The entries of these providers that are missing or say other than the provider, read strongly. */
async function providerDisagreements(providers: Provider[]): Promise<Disagreement[]> {
  const expected = providers.flatMap((provider) => entriesOfProvider(provider).map((entry) => ({ provider: provider.uuid, entry })));
  const found = new Map((await batchGet(expected.map(({ entry }) => entry.key))).map((item) => [keyName(item as unknown as Key), item]));
  return expected.flatMap(({ provider, entry }): Disagreement[] => {
    const item = found.get(keyName(entry.key));
    if (item === undefined) return [{ provider, entry: keyName(entry.key), subject: entry.subject, problem: 'missing' }];
    if (entry.whole && !sameItem(item, entry)) {
      return [
        { provider, entry: keyName(entry.key), subject: entry.subject, problem: `stored ${JSON.stringify(item)}, expected ${JSON.stringify(entry.item)}` },
      ];
    }
    return [];
  });
}

const sameItem = (item: Item, entry: ProviderEntry) => JSON.stringify(Object.entries(item).sort()) === JSON.stringify(Object.entries(entry.item).sort());

/** Named once read twice: a disagreement whose provider changed between the reads is read again with it. */
async function confirmed(found: Disagreement[], again: (uuids: string[]) => Promise<Disagreement[]>): Promise<Disagreement[]> {
  if (found.length === 0) return [];
  const second = new Set((await again([...new Set(found.map((d) => d.provider))])).map((d) => `${d.entry} ${d.problem}`));
  return found.filter((d) => second.has(`${d.entry} ${d.problem}`));
}

const readProviders = async (uuids: string[]) => [...(await getProviders(uuids)).values()];

/** One page of the providers phase. */
async function providersPage(cursor: Extract<VerifyCursor, { phase: 'providers' }>) {
  const shard = allShards()[cursor.shard]!;
  const page = await queryPage(
    withProjection(
      {
        IndexName: BY_SHARD_INDEX.name,
        KeyConditionExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': BY_SHARD_INDEX.partitionKey },
        ExpressionAttributeValues: { ':shard': shard },
        Limit: PAGE,
      },
      projectionOf([ProviderAttribute.uuid]),
    ),
    cursor.after,
  );
  const providers = await readProviders(page.items.map((item) => item[ProviderAttribute.uuid] as string));
  const disagreements = await confirmed(await providerDisagreements(providers), async (uuids) => providerDisagreements(await readProviders(uuids)));
  return { providers: providers.length, entries: 0, pending: 0, disagreements, after: page.next };
}

/** The entry of one class or trait partition, and what its provider (undefined: gone) says of it: a problem, pending, or nothing. */
type Judge = (item: Item, provider: Provider | undefined) => string | 'pending' | undefined;

/** One page of a class's or a trait's partition: each entry against its provider. */
async function entriesPage(partition: string, after: Item | undefined, uuidOf: (item: Item) => string, subject: string, judge: Judge) {
  const page = await queryPage(
    { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': partition }, ConsistentRead: true, Limit: PAGE * 5 },
    after,
  );
  const judgeAll = async (items: Item[]) => {
    const providers = await getProviders(items.map(uuidOf));
    const verdicts = items.map((item) => ({ item, verdict: judge(item, providers.get(uuidOf(item))) }));
    return {
      pending: verdicts.filter(({ verdict }) => verdict === 'pending').length,
      disagreements: verdicts.flatMap(({ item, verdict }): Disagreement[] =>
        verdict === undefined || verdict === 'pending' ? [] : [{ provider: uuidOf(item), entry: keyName(item as unknown as Key), subject, problem: verdict }],
      ),
    };
  };
  const first = await judgeAll(page.items);
  const disagreements = await confirmed(first.disagreements, async () => {
    const again = await batchGet(first.disagreements.map((d) => ({ pk: d.entry.split(' ')[0]!, sk: d.entry.slice(d.entry.indexOf(' ') + 1) })));
    return (await judgeAll(again)).disagreements;
  });
  return { providers: 0, entries: page.items.length, pending: first.pending, disagreements, after: page.next };
}

function capacityJudge(resourceClass: string): Judge {
  return (item, provider) => {
    const entry = decodeCapacityEntry(item, resourceClass);
    if (provider === undefined) return 'its provider is gone';
    const expected = entriesOfProvider(provider).find((candidate) => candidate.subject === `capacity ${resourceClass}`);
    if (expected === undefined) return `its provider has no inventory of ${resourceClass}`;
    if (expected.key.sk !== item.sk) return `says room for ${entry.room}, its provider ${decodeCapacityEntry(expected.item, resourceClass).room}`;
    return undefined;
  };
}

function traitJudge(trait: string, cleanups: Set<string>, unnamed: Set<string>): Judge {
  return (item, provider) => {
    if (provider?.traits.includes(trait)) return unnamed.has(trait) ? 'its provider holds the trait, whose catalog entry names no holder' : undefined;
    const uuid = decodeSearchEntry(item);
    const heldUntil = item[SearchEntryAttribute.heldUntil];
    if (cleanups.has(`${uuid} ${trait}`) || (typeof heldUntil === 'number' && heldUntil >= Date.now())) return 'pending';
    return provider === undefined ? 'its provider is gone' : 'its provider does not hold the trait';
  };
}

/** The first name of a catalog after `name` (undefined: none). */
const nameAfter = (names: string[], name: string | undefined) => names.find((candidate) => name === undefined || candidate > name);

/** The cursor after a page that ended at `after` (undefined: the partition or shard is read to its end); undefined at the end. */
function advance(cursor: VerifyCursor, after: Item | undefined, classes: string[], traitNames: string[]): VerifyCursor | undefined {
  if (after !== undefined) return { ...cursor, after };
  const traitsAfter = (name?: string): VerifyCursor | undefined => {
    const next = nameAfter(traitNames, name);
    return next === undefined ? undefined : { phase: 'traits', name: next };
  };
  const classesAfter = (name?: string): VerifyCursor | undefined => {
    const next = nameAfter(classes, name);
    return next === undefined ? traitsAfter() : { phase: 'capacity', name: next, shard: 0 };
  };
  switch (cursor.phase) {
    case 'providers':
      return cursor.shard + 1 < allShards().length ? { phase: 'providers', shard: cursor.shard + 1 } : classesAfter();
    case 'capacity':
      return cursor.shard + 1 < CAPACITY_SHARDS ? { ...cursor, shard: cursor.shard + 1, after: undefined } : classesAfter(cursor.name);
    case 'traits':
      return traitsAfter(cursor.name);
  }
}

/** How long one call reads before it answers with where to go on (a page more at most); less when the invocation has less left. */
const VERIFY_STEP_MS = 2_000;
const VERIFY_TIME_KEPT_MS = 5_000;

/** Verifies from `start` (undefined: the beginning) for a while (VERIFY_STEP_MS) or to the end, and says where to go on. */
export async function verifyEntries(start: VerifyCursor | undefined): Promise<VerifyPage> {
  const until = Date.now() + Math.min(VERIFY_STEP_MS, timeLeftMs() - VERIFY_TIME_KEPT_MS);
  const [classes, traitEntries, cleanups] = await Promise.all([
    resourceClasses.list().then((entries) => entries.map((entry) => entry.name).sort()),
    traits.list(),
    openEntryCleanups(),
  ]);
  const traitNames = traitEntries.map((entry) => entry.name).sort();
  const unnamed = new Set(traitEntries.filter((entry) => entry.holder === undefined).map((entry) => entry.name));
  const pendingCleanups = new Set(cleanups.flatMap((cleanup) => cleanup.traits.map((trait) => `${cleanup.uuid} ${trait}`)));
  const total: VerifyPage = { providers: 0, entries: 0, pending: 0, disagreements: [] };
  let cursor: VerifyCursor | undefined = start ?? { phase: 'providers', shard: 0 };
  do {
    const page =
      cursor.phase === 'providers'
        ? await providersPage(cursor)
        : cursor.phase === 'capacity'
          ? await entriesPage(
              capacityPartition(cursor.name, cursor.shard),
              cursor.after,
              (item) => decodeCapacityEntry(item, '').uuid,
              `capacity ${cursor.name}`,
              capacityJudge(cursor.name),
            )
          : await entriesPage(
              traitPartition(cursor.name),
              cursor.after,
              decodeSearchEntry,
              `trait ${cursor.name}`,
              traitJudge(cursor.name, pendingCleanups, unnamed),
            );
    total.providers += page.providers;
    total.entries += page.entries;
    total.pending += page.pending;
    total.disagreements.push(...page.disagreements);
    cursor = advance(cursor, page.after, classes, traitNames);
  } while (cursor !== undefined && Date.now() < until);
  return { ...total, next: cursor };
}
