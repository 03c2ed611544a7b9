/**
 * Consumers and their allocations, and the claim's writes: the one place
 * allocations are written.
 */
import { isCustomName } from '../domain/catalog-names.js';
import { entryOf, type Consumer, type ConsumerChange, type Provider, type ProviderUsageChange, type Resources } from '../domain/model.js';
import { tableName } from './dynamodb.js';
import { Expression } from './expression.js';
import { batchGet, getItem, queryAll } from './reads.js';
import { BY_GROUP_INDEX } from './table-definition.js';
import type { Write } from './commit/write.js';
import type { Key } from './items/fields.js';
import { AllocationAttribute, allocationKey, decodeAllocation, encodeAllocation, isAllocationItem } from './items/allocation.js';
import { keepsEntries, writesFormat } from './storage-format.js';
import { capacityEntryChanges } from './entries/capacity-entries.js';
import { ConsumerAttribute, consumerKey, decodeConsumer, encodeConsumer, projectGroup, userPrefix } from './items/consumer.js';
import { encodeConsumerRemoval } from './items/consumer-removal.js';
import type { ChangeStamp } from '../domain/history.js';
import { decodeProvider, packInventories, PROVIDER_SK, ProviderAttribute, providerKey, providerPartition } from './items/provider.js';
import { providerChangeWrites, providerChangesWrites, type ProviderChange, type ProviderChangeErrors } from './providers.js';

export async function getConsumer(uuid: string): Promise<Consumer | undefined> {
  const item = await getItem(consumerKey(uuid));
  return item ? decodeConsumer(item) : undefined;
}

export async function getConsumers(uuids: string[]): Promise<Map<string, Consumer>> {
  const items = await batchGet([...new Set(uuids)].map(consumerKey));
  return new Map(items.map(decodeConsumer).map((consumer) => [consumer.uuid, consumer]));
}

/** A provider and what each consumer holds on it (consumer uuid to resources). */
export interface ProviderAllocations {
  provider: Provider;
  allocations: Map<string, Resources>;
}

/**
 * A provider and its allocations in one strongly consistent query: the
 * provider item and its allocation items share a partition, so one request
 * reads both and pays for their summed size once. Undefined when there is no
 * such provider.
 */
export async function getProviderAllocations(providerUuid: string): Promise<ProviderAllocations | undefined> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': providerPartition(providerUuid) },
    ConsistentRead: true,
  });
  let provider: Provider | undefined;
  const allocations = new Map<string, Resources>();
  for (const item of items) {
    if (item.sk === PROVIDER_SK) provider = decodeProvider(item);
    else if (isAllocationItem(item)) {
      const allocation = decodeAllocation(item);
      allocations.set(allocation.consumerUuid, allocation.resources);
    }
  }
  return provider && { provider, allocations };
}

/** The consumers of a project, optionally of one user (eventually consistent index). */
export async function listProjectConsumers(projectId: string, userId?: string): Promise<Consumer[]> {
  const items = await queryAll({
    IndexName: BY_GROUP_INDEX.name,
    KeyConditionExpression: userId === undefined ? '#pk = :project' : '#pk = :project AND begins_with(#sk, :user)',
    ExpressionAttributeNames: { '#pk': BY_GROUP_INDEX.partitionKey, ...(userId === undefined ? {} : { '#sk': BY_GROUP_INDEX.sortKey }) },
    ExpressionAttributeValues: { ':project': projectGroup(projectId), ...(userId === undefined ? {} : { ':user': userPrefix(userId) }) },
  });
  return items.map(decodeConsumer);
}

/**
 * The consumer item's write (conditioned on the generation read), stamped
 * with the request; a consumer that goes leaves a removal note beside it
 * for the allocation history (items/consumer-removal.ts).
 */
function consumerWrites(change: ConsumerChange, stamp: ChangeStamp): Write[] {
  const { before, after } = change;
  const e = new Expression();
  const condition = before === undefined ? 'attribute_not_exists(pk)' : `${e.name(ConsumerAttribute.generation)} = ${e.value(before.generation)}`;
  if (after === undefined) {
    return [
      { item: { Delete: { TableName: tableName(), Key: consumerKey(before!.uuid), ConditionExpression: condition, ...e.attributes() } } },
      { item: { Put: { TableName: tableName(), Item: encodeConsumerRemoval(before!.uuid, before!.updatedAt, stamp) } } },
    ];
  }
  const item = encodeConsumer(after, stamp.requestId ?? undefined);
  return [{ item: { Put: { TableName: tableName(), Item: item, ConditionExpression: condition, ...e.attributes() } } }];
}

/** The allocation items a consumer change puts or deletes, one per provider. */
function allocationWrites(change: ConsumerChange): Write[] {
  const uuid = (change.after ?? change.before)!.uuid;
  const before = change.before?.allocations ?? {};
  const after = change.after?.allocations ?? {};
  const writes: Write[] = [];
  for (const providerUuid of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const resources = after[providerUuid];
    if (resources === undefined) {
      writes.push({ item: { Delete: { TableName: tableName(), Key: allocationKey(providerUuid, uuid) } } });
    } else if (JSON.stringify(resources) !== JSON.stringify(before[providerUuid])) {
      writes.push({ item: { Put: { TableName: tableName(), Item: encodeAllocation(providerUuid, { consumerUuid: uuid, resources }, writesFormat()) } } });
    }
  }
  return writes;
}

/**
 * Most classes one provider's usage moves by an update expression. Each
 * class takes about 100 characters and 5 operators of it, and DynamoDB
 * refuses an expression over 4 KB or 300 operators.
 */
const MAX_CLASSES_PER_UPDATE = 30;

/**
 * The provider side of a claim: usage moves by the deltas and the generation
 * goes up, on condition that the provider is as it was read and that each
 * increase still fits the stored free capacity. A change of more classes
 * than one expression holds (a provider with dozens of custom classes)
 * writes the provider whole instead, on condition that nothing changed
 * since it was read.
 */
function providerUsageWrites(change: ProviderUsageChange, named: ReadonlySet<string>, now: string): Write[] {
  const bump = change.bumpGeneration ?? true;
  const moved = Object.entries(change.deltas).filter(([, delta]) => delta !== 0);
  const { provider } = change;
  // A custom class the claim names here must still be named here, so that a class renamed meanwhile cancels the claim. An increase
  // requires it already (free >= amount); any other class the claim names is held here before it, so it has a usage to require.
  const mustExist = [...named].filter((resourceClass) => isCustomName(resourceClass) && !((change.deltas[resourceClass] ?? 0) > 0));
  if (moved.length + mustExist.length > MAX_CLASSES_PER_UPDATE) {
    const usages = { ...provider.usages };
    for (const [resourceClass, delta] of moved) usages[resourceClass] = (entryOf(usages, resourceClass) ?? 0) + delta;
    const after = bump ? { ...provider, usages, generation: provider.generation + 1, updatedAt: now } : { ...provider, usages };
    return providerChangeWrites(provider, after);
  }
  if (moved.length === 0 && mustExist.length === 0 && !bump) return [];
  const e = new Expression();
  const A = ProviderAttribute;
  const sets = bump ? [`${e.name(A.generation)} = ${e.name(A.generation)} + ${e.value(1)}`, `${e.name(A.updatedAt)} = ${e.value(now)}`] : [];
  const conditions = bump ? [`${e.name(A.generation)} = ${e.value(provider.generation)}`] : ['attribute_exists(pk)'];
  for (const [resourceClass, delta] of moved) {
    const used = e.name(A.usages, resourceClass);
    const free = e.name(A.free, resourceClass);
    const amount = e.value(delta);
    sets.push(`${used} = if_not_exists(${used}, ${e.value(0)}) + ${amount}`, `${free} = ${free} - ${amount}`);
    if (delta > 0) conditions.push(`${free} >= ${amount}`);
  }
  for (const resourceClass of mustExist) conditions.push(`attribute_exists(${e.name(A.usages, resourceClass)})`);
  const entries = capacityEntriesMoved(provider, moved);
  for (const resourceClass of entries.classes) {
    // The entry moves from the amount read: its usage and inventory must still be as read (an allocation removed moves the usage without a new generation).
    const used = entryOf(provider.usages, resourceClass);
    conditions.push(used === undefined ? `attribute_not_exists(${e.name(A.usages, resourceClass)})` : `${e.name(A.usages, resourceClass)} = ${e.value(used)}`);
  }
  if (entries.classes.size > 0) conditions.push(`${e.name(A.inventories)} = ${e.value(packInventories(provider.inventories))}`);
  const update: Write = {
    item: {
      Update: {
        TableName: tableName(),
        Key: providerKey(provider.uuid),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: conditions.join(' AND '),
        ...e.attributes(),
      },
    },
  };
  return [update, ...entries.writes];
}

/** The capacity entries (format 3) a usage change moves on one provider, and their classes. */
function capacityEntriesMoved(provider: Provider, moved: [string, number][]): ReturnType<typeof capacityEntryChanges> {
  if (!keepsEntries() || moved.length === 0) return { writes: [], classes: new Set() };
  const usages = { ...provider.usages };
  for (const [resourceClass, delta] of moved) usages[resourceClass] = (entryOf(usages, resourceClass) ?? 0) + delta;
  return capacityEntryChanges(provider, { ...provider, usages });
}

/**
 * The claim's writes: every consumer, allocation and provider change of one
 * request, committed together (readPlanCommit) so that a claim lands whole
 * or not at all. Any consumer or provider changed since it was read (or a
 * capacity race) cancels it as a ConcurrentUpdate, and the claim is planned
 * again on fresh state.
 */
export function claimWrites(consumers: ConsumerChange[], providers: ProviderUsageChange[], stamp: ChangeStamp): Write[] {
  const named = classesNamedPerProvider(consumers);
  return [
    ...consumers.flatMap((change) => consumerWrites(change, stamp)),
    ...consumers.flatMap(allocationWrites),
    ...providers.flatMap((change) => providerUsageWrites(change, named.get(change.provider.uuid) ?? new Set(), stamp.at)),
  ];
}

/** The classes the consumers hold on each provider, before or after their change. */
function classesNamedPerProvider(consumers: ConsumerChange[]): Map<string, Set<string>> {
  const named = new Map<string, Set<string>>();
  for (const { before, after } of consumers) {
    for (const allocations of [before?.allocations ?? {}, after?.allocations ?? {}]) {
      for (const [providerUuid, resources] of Object.entries(allocations)) {
        const classes = named.get(providerUuid) ?? new Set<string>();
        for (const resourceClass of Object.keys(resources)) classes.add(resourceClass);
        named.set(providerUuid, classes);
      }
    }
  }
  return named;
}

/**
 * A class renamed in the maps of one item that hold it (`held`: the path of
 * each map and the resources read there): only those entries are written,
 * on condition that each still holds the amount read, so that other changes
 * of the item do not cancel the rename. A consumer's generation and update
 * time stay, as upstream's rename leaves them.
 */
function renameHeldWrite(key: Key, held: [path: string[], resources: Resources][], from: string, to: string): Write {
  const e = new Expression();
  const sets: string[] = [];
  const removes: string[] = [];
  const conditions: string[] = [];
  for (const [path, resources] of held) {
    const amount = e.value(entryOf(resources, from));
    sets.push(`${e.name(...path, to)} = ${amount}`);
    removes.push(e.name(...path, from));
    conditions.push(`${e.name(...path, from)} = ${amount}`);
  }
  const update = `SET ${sets.join(', ')} REMOVE ${removes.join(', ')}`;
  return { item: { Update: { TableName: tableName(), Key: key, UpdateExpression: update, ConditionExpression: conditions.join(' AND '), ...e.attributes() } } };
}

/** A class renamed in a consumer item, on every provider it holds the class on (provider uuid and resources there, as read). */
export const renameInConsumerWrite = (consumerUuid: string, held: [providerUuid: string, resources: Resources][], from: string, to: string): Write =>
  renameHeldWrite(
    consumerKey(consumerUuid),
    held.map(([providerUuid, resources]) => [[ConsumerAttribute.allocations, providerUuid], resources]),
    from,
    to,
  );

/** A class renamed in one allocation item (its resources as read). */
export const renameInAllocationWrite = (providerUuid: string, consumerUuid: string, resources: Resources, from: string, to: string): Write =>
  renameHeldWrite(allocationKey(providerUuid, consumerUuid), [[[AllocationAttribute.resources], resources]], from, to);

/** What one reshape writes (shared/domain/reshape.ts plans it). */
export interface ReshapeChange {
  consumers: ConsumerChange[];
  /** Providers whose inventories are replaced, in their final state (usage included). */
  providers: ProviderChange[];
  /** Providers only reached through allocations. */
  usages: ProviderUsageChange[];
}

/**
 * The reshape's writes: a claim in which the providers whose inventories are
 * replaced are written whole instead of by usage deltas, since one change may
 * write each provider item only once. Like a claim it is cancelled as a
 * ConcurrentUpdate when anything changed since it was read.
 */
export function reshapeWrites(change: ReshapeChange, stamp: ChangeStamp, errors: ProviderChangeErrors): Write[] {
  return [...claimWrites(change.consumers, change.usages, stamp), ...providerChangesWrites(change.providers, errors)];
}
