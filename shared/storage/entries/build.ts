/**
 * The build of storage format 3's entries (capacity and trait holder
 * entries) over the providers a region already has, the last step of the
 * operator's finalize to format 3 (docs/operators/upgrade.md). From the
 * finalize on, every write keeps the entries of what it changes; the build
 * writes those of everything else, once no function can still write an
 * older format:
 *
 * - it starts at `from` in the format record: the finalize's time plus the
 *   longest a function keeps the format it read (config.storageFormatSeconds)
 *   and the longest a request that read it runs
 *   (config.longestRequestSeconds), and once no multi-step change begun
 *   before then is open (its staged writes were planned in the older format);
 * - it walks the byShard index, shard by shard, a page at a time, reads the
 *   page's providers strongly, names a holder on the catalog entry of each
 *   trait they hold that names none (trait-holders.ts: release 1.1.0 names
 *   none), and writes each one's entries in a
 *   transaction that also requires the provider to be as read (a write
 *   meanwhile makes it read again), so no entry it writes is stale;
 * - after each page it records where the shard got to in the format
 *   record, on condition that nobody recorded more: a build killed at any
 *   point goes on from its last page when started again, rewriting at most
 *   that page's entries, which are the same items (puts of the same keys).
 *
 * Readers take the entries only once the record says the build is done
 * (entriesBuilt).
 */
import { config } from '../../config.js';
import type { Provider } from '../../domain/model.js';
import { formatRecordRequests, isConditionalCheckFailed, tableName, updateItem } from '../dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY, takeConsumedCapacity, trackConsumedCapacity } from '../consumed-capacity.js';
import { Expression } from '../expression.js';
import { projectionOf, queryPage, withProjection, type Item } from '../reads.js';
import { BY_SHARD_INDEX } from '../table-definition.js';
import { storageFormatRecord } from '../storage-format.js';
import { ConcurrentUpdate } from '../errors.js';
import { eachConcurrently, openChanges, TRANSACTION_CONCURRENCY } from '../commit/journal.js';
import { MAX_TRANSACTION_ITEMS } from '../commit/transact.js';
import { commitInOneTransaction } from '../commit/transaction.js';
import type { Write } from '../commit/write.js';
import { allShards, ProviderAttribute } from '../items/provider.js';
import { EntriesBuildAttribute as B, SHARD_DONE, STORAGE_FORMAT_KEY, StorageFormatAttribute, type EntriesBuild } from '../items/storage-format.js';
import { getProviders, providerStillAsRead } from '../providers.js';
import { entriesOfProvider } from './of-provider.js';
import { noteTraitHolders } from '../trait-holders.js';

/** Providers read per page of a shard: one strongly consistent batch read and a few transactions. */
const PAGE_PROVIDERS = 100;
/** Times a provider that keeps changing under the build is read again before the build gives up for now (409; the next run goes on). */
const ATTEMPTS = 5;

export interface BuildProgress {
  /** waiting: not started yet (`waitingSeconds`, `waitingFor` say why); building: started; built: done, or nothing to build. */
  state: 'waiting' | 'building' | 'built';
  waitingSeconds?: number;
  waitingFor?: string;
  shards: number;
  shardsDone: number;
  providers: number;
  entries: number;
  writeUnits: number;
}

const shardNumber = (shard: string): string => shard.slice(shard.indexOf('#') + 1);

/** What the record says of the build (none to do: built). */
export function progressOf(build: EntriesBuild | undefined): BuildProgress {
  const shards = allShards().length;
  if (build === undefined) return { state: 'built', shards, shardsDone: shards, providers: 0, entries: 0, writeUnits: 0 };
  const shardsDone = Object.values(build.shards).filter((cursor) => cursor === SHARD_DONE).length;
  const waiting = build.state === 'building' && Date.now() < build.from;
  return {
    state: build.state === 'built' ? 'built' : waiting ? 'waiting' : 'building',
    ...(waiting && {
      waitingSeconds: Math.ceil((build.from - Date.now()) / 1000),
      waitingFor: 'every function to write storage format 3 (a function keeps the format it read, and a request runs, for a while)',
    }),
    shards,
    shardsDone,
    providers: build.providers,
    entries: build.entries,
    writeUnits: build.writeUnits,
  };
}

/** A new build, to start once every function writes format 3: after the format's reading and the longest request have passed. */
export function newEntriesBuild(now = Date.now()): EntriesBuild {
  return {
    state: 'building',
    from: now + (config.storageFormatSeconds + config.longestRequestSeconds) * 1000,
    shards: {},
    providers: 0,
    entries: 0,
    writeUnits: 0,
  };
}

/** The writes that put one provider's format 3 entries, each part beside a check that the provider is still as read. */
function buildParts(provider: Provider): Write[][] {
  const puts = entriesOfProvider(provider)
    .filter((entry) => entry.sinceFormat3)
    .map((entry): Write => ({ item: { Put: { TableName: tableName(), Item: entry.item } } }));
  const parts: Write[][] = [];
  for (let start = 0; start === 0 || start < puts.length; start += MAX_TRANSACTION_ITEMS - 1) {
    parts.push([providerStillAsRead(provider), ...puts.slice(start, start + MAX_TRANSACTION_ITEMS - 1)]);
  }
  return parts;
}

/** Parts in transactions of at most 100 actions, a part never split; with the providers each transaction is about. */
function inTransactions(parts: { uuid: string; writes: Write[] }[]): { uuids: Set<string>; writes: Write[] }[] {
  const transactions: { uuids: Set<string>; writes: Write[] }[] = [];
  for (const part of parts) {
    const last = transactions.at(-1);
    if (last !== undefined && last.writes.length + part.writes.length <= MAX_TRANSACTION_ITEMS) {
      last.writes.push(...part.writes);
      last.uuids.add(part.uuid);
    } else transactions.push({ uuids: new Set([part.uuid]), writes: [...part.writes] });
  }
  return transactions;
}

/**
 * Writes the entries of these providers, read strongly; a provider changed
 * between its read and the transaction (which then wrote nothing) is read
 * again. Returns how many providers and entries it built.
 */
async function buildProviders(uuids: string[]): Promise<{ providers: number; entries: number }> {
  let pending = uuids;
  const built = { providers: 0, entries: 0 };
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= ATTEMPTS) throw new ConcurrentUpdate();
    const providers = [...(await getProviders(pending)).values()];
    // A holder named for each trait held, before readers take the entries (trait-holders.ts).
    await noteTraitHolders(new Map(providers.flatMap((provider) => provider.traits.map((trait) => [trait, provider.uuid] as const))));
    const parts = providers.flatMap((provider) => buildParts(provider).map((writes) => ({ uuid: provider.uuid, writes })));
    const failed = new Set<string>();
    await eachConcurrently(
      inTransactions(parts),
      async ({ uuids: about, writes }) => {
        try {
          await commitInOneTransaction(writes);
          built.entries += writes.filter((write) => write.item.Put).length;
        } catch (error) {
          if (!(error instanceof ConcurrentUpdate)) throw error;
          for (const uuid of about) failed.add(uuid);
        }
      },
      TRANSACTION_CONCURRENCY,
    );
    built.providers += providers.filter((provider) => !failed.has(provider.uuid)).length;
    pending = [...failed];
  }
  return built;
}

/**
 * Records that one shard's build got past a page (`next`: the index key to
 * start after, or SHARD_DONE), and what it built, on condition that the
 * shard is still where this run found it; false when another run moved it.
 */
async function recordPage(shard: string, from: string | undefined, next: string, built: { providers: number; entries: number; writeUnits: number }) {
  const e = new Expression();
  const build = (...path: string[]) => e.name(StorageFormatAttribute.entriesBuild, ...path);
  const cursor = build(B.shards, shardNumber(shard));
  const add = (attribute: string, amount: number) => `${build(attribute)} = ${build(attribute)} + ${e.value(amount)}`;
  try {
    const output = await updateItem({
      TableName: tableName(),
      Key: STORAGE_FORMAT_KEY,
      UpdateExpression: `SET ${cursor} = ${e.value(next)}, ${add(B.providers, built.providers)}, ${add(B.entries, built.entries)}, ${add(B.writeUnits, built.writeUnits)}`,
      ConditionExpression: `${build(B.state)} = ${e.value('building')} AND ${from === undefined ? `attribute_not_exists(${cursor})` : `${cursor} = ${e.value(from)}`}`,
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
      ...e.attributes(),
    });
    recordConsumedCapacity(output.ConsumedCapacity, 'write');
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/** Builds one shard from where the record says, a page at a time, until done, `until` (ms) or another run moving it. */
async function buildShard(shard: string, from: string | undefined, until: number): Promise<void> {
  const projection = projectionOf([ProviderAttribute.uuid]);
  const query = withProjection(
    {
      IndexName: BY_SHARD_INDEX.name,
      KeyConditionExpression: '#shard = :shard',
      ExpressionAttributeNames: { '#shard': BY_SHARD_INDEX.partitionKey },
      ExpressionAttributeValues: { ':shard': shard },
      Limit: PAGE_PROVIDERS,
    },
    projection,
  );
  let cursor = from;
  while (cursor !== SHARD_DONE && Date.now() < until) {
    const page = await queryPage(query, cursor === undefined ? undefined : (JSON.parse(cursor) as Item));
    // The build's own units, counted apart so that the record can say what the whole build took, then added to the request's.
    const { built, units } = await trackConsumedCapacity(async () => {
      const done = await buildProviders(page.items.map((item) => item[ProviderAttribute.uuid] as string));
      return { built: done, units: takeConsumedCapacity().write };
    });
    recordConsumedCapacity({ CapacityUnits: units }, 'write');
    const next = page.next === undefined ? SHARD_DONE : JSON.stringify(page.next);
    if (!(await recordPage(shard, cursor, next, { ...built, writeUnits: units }))) return;
    cursor = next;
  }
}

/** Marks the build done once every shard is; false when it is not (yet). */
async function markBuilt(): Promise<boolean> {
  const e = new Expression();
  const build = (...path: string[]) => e.name(StorageFormatAttribute.entriesBuild, ...path);
  const done = e.value(SHARD_DONE);
  const everyShard = allShards().map((shard) => `${build(B.shards, shardNumber(shard))} = ${done}`);
  try {
    await updateItem({
      TableName: tableName(),
      Key: STORAGE_FORMAT_KEY,
      UpdateExpression: `SET ${build(B.state)} = ${e.value('built')}, ${build(B.builtAt)} = ${e.value(new Date().toISOString())}`,
      ConditionExpression: [`${build(B.state)} = ${e.value('building')}`, ...everyShard].join(' AND '),
      ...e.attributes(),
    });
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/**
 * Goes on with the build until it is done or `until` (ms since the epoch)
 * has passed, and says how far it is. Several runs at once are harmless:
 * each shard's pages are recorded on condition, and the entries written
 * are the same.
 */
export async function buildEntries(until: number): Promise<BuildProgress> {
  const read = async () => (await storageFormatRecord(formatRecordRequests)).entriesBuild;
  const build = await read();
  if (build === undefined || build.state === 'built') return progressOf(build);
  if (Date.now() < build.from) return progressOf(build);
  const fromTime = new Date(build.from).toISOString();
  const older = (await openChanges()).filter((head) => head.createdAt === undefined || head.createdAt < fromTime);
  if (older.length > 0) {
    return {
      ...progressOf(build),
      state: 'waiting',
      waitingSeconds: Math.ceil(config.changeLeaseMs / 1000),
      waitingFor: `${older.length} multi-step change(s) begun in the older format to be finished (the sweeper finishes them)`,
    };
  }
  await Promise.all(allShards().map((shard) => buildShard(shard, build.shards[shardNumber(shard)], until)));
  const after = await read();
  if (after !== undefined && after.state === 'building' && progressOf(after).shardsDone === progressOf(after).shards) await markBuilt();
  return progressOf(await read());
}
