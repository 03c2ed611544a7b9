/**
 * Claims: turning the allocations a request wants for its consumers into the
 * consumer and provider changes of one claim transaction. Pure: the caller
 * reads the consumers and providers, this decides (or refuses) what to write.
 *
 * The rules follow upstream Placement's allocation replacement:
 * - a consumer named in a request loses all its allocations and gets the
 *   requested ones (empty: none);
 * - every allocation is checked against the provider's inventory (class
 *   present, min_unit/max_unit/step_size, capacity), counting what the other
 *   consumers of the same request take from the same inventory;
 * - providers holding any of the written (or, for an emptied consumer, the
 *   removed) allocations get a new generation; a provider that only loses a
 *   consumer which moved elsewhere keeps its generation;
 * - consumers holding allocations get a new generation; a consumer left
 *   without allocations is deleted; a consumer that never had allocations
 *   and gets none is kept (created) as it is, generation 0 when new.
 */
import { checkAllocation } from './capacity.js';
import { STANDARD_RESOURCE_CLASSES } from './standard-catalog.js';
import { conflict, badRequest, ErrorCode, type HttpError } from '../api/errors.js';
import { pythonSetOrder } from '../api/python-set.js';
import type { Microversion } from '../api/microversion.js';
import { entryOf, type Consumer, type ConsumerChange, type Provider, type ProviderUsageChange, type Resources } from './model.js';
import { foldUuidCase } from './uuid.js';

/** Project and user recorded for consumers written before 1.8, which could not name them. */
const INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000';

/** What one request wants for one consumer. */
export interface DesiredConsumer {
  uuid: string;
  projectId: string;
  userId: string;
  /**
   * The consumer generation the client expects (checked from 1.28): null when
   * it expects the consumer not to exist; undefined when it is not checked.
   */
  expectedGeneration?: number | null;
  /** The consumer type (from 1.38); undefined keeps the stored one. */
  consumerType?: string;
  /** Provider uuid to resources; empty removes all the consumer's allocations. */
  allocations: Record<string, Resources>;
}

/** Every resource class the consumers ask for. */
export function allocatedClasses(desired: DesiredConsumer[]): string[] {
  return [...new Set(desired.flatMap((want) => Object.values(want.allocations).flatMap((resources) => Object.keys(resources))))];
}

/** One consumer's entry of a PUT /allocations/{uuid}, POST /allocations or POST /reshaper body, after schema validation. */
export interface ConsumerBody {
  allocations: Record<string, { resources: Resources; generation?: number }> | { resource_provider: { uuid: string }; resources: Resources }[];
  project_id?: string;
  user_id?: string;
  consumer_generation?: number | null;
  consumer_type?: string;
  mappings?: Record<string, string[]>;
}

/**
 * The body's wishes for one consumer. Mappings (1.34) are validated by the
 * schema and, as upstream, not kept. Consumer and provider uuids in any case
 * name the same objects (see foldUuidCase).
 */
export function desiredConsumer(uuid: string, body: ConsumerBody, version: Microversion): DesiredConsumer {
  const entries: [string, Resources][] = Array.isArray(body.allocations)
    ? body.allocations.map((entry) => [entry.resource_provider.uuid, entry.resources])
    : Object.entries(body.allocations).map(([providerUuid, entry]) => [providerUuid, entry.resources]);
  const allocations = Object.fromEntries(entries.map(([providerUuid, resources]) => [foldUuidCase(providerUuid), resources]));
  const complete = body.project_id !== undefined;
  return {
    uuid: foldUuidCase(uuid),
    projectId: complete ? body.project_id! : INCOMPLETE_CONSUMER_ID,
    userId: complete ? body.user_id! : INCOMPLETE_CONSUMER_ID,
    expectedGeneration: version.isAtLeast('1.28') ? (body.consumer_generation ?? null) : undefined,
    consumerType: version.isAtLeast('1.38') ? body.consumer_type : undefined,
    allocations,
  };
}

/**
 * A body's consumers keyed by consumer uuid (POST /allocations, a reshape's
 * allocations), one wish each: keys spelling one uuid in two cases name one
 * consumer, and, as of a key given twice, the last counts, where the first
 * stood. (Two wishes would plan two writes of one item, which DynamoDB
 * refuses in one transaction.)
 */
export function desiredConsumers(body: Record<string, ConsumerBody>, version: Microversion): DesiredConsumer[] {
  const byUuid = new Map<string, DesiredConsumer>();
  for (const [uuid, entry] of Object.entries(body)) {
    const want = desiredConsumer(uuid, entry, version);
    byUuid.set(want.uuid, want);
  }
  return [...byUuid.values()];
}

/** The providers a claim for `desired` must read: those named, and those the consumers hold now. */
export function providersInvolved(desired: readonly DesiredConsumer[], consumers: ReadonlyMap<string, Consumer>): Set<string> {
  const uuids = new Set<string>();
  for (const want of desired) {
    for (const uuid of Object.keys(want.allocations)) uuids.add(uuid);
    for (const uuid of Object.keys(consumers.get(want.uuid)?.allocations ?? {})) uuids.add(uuid);
  }
  return uuids;
}

/** What the claim is computed against, read just before (strongly consistent). */
export interface ClaimState {
  /** The existing consumers among the desired ones (absent: new). */
  consumers: ReadonlyMap<string, Consumer>;
  /** Every provider named in the desired allocations or holding an allocation of a desired consumer. */
  providers: ReadonlyMap<string, Provider>;
  /** Whether a resource class exists at all (standard or custom). */
  classExists: (name: string) => boolean;
}

export interface ClaimOptions {
  /**
   * How an unknown resource class is reported: PUT /allocations/{uuid} names
   * the consumer ("put"), POST /allocations does not ("post"), POST /reshaper
   * calls the body malformed ("reshape").
   */
  form?: 'put' | 'post' | 'reshape';
}

export interface ClaimPlan {
  consumers: ConsumerChange[];
  providers: ProviderUsageChange[];
}

/** One allocation as upstream lists them before checking: zero marks a removal. */
interface Line {
  consumer: string;
  provider: string;
  resourceClass: string;
  used: number;
}

function generationConflict(expected: string, got: number | null): HttpError {
  return conflict(`consumer generation conflict - expected ${expected} but got ${got === null ? 'None' : got}`, ErrorCode.CONCURRENT_UPDATE);
}

/** Upstream's consumer generation check (1.28+): 409 placement.concurrent_update on mismatch. */
export function checkConsumerGeneration(existing: Consumer | undefined, expected: number | null | undefined): void {
  if (expected === undefined) return;
  if (existing === undefined) {
    if (expected !== null) throw conflict(`consumer generation conflict - expected null but got ${expected}`, ErrorCode.CONCURRENT_UPDATE);
    return;
  }
  if (existing.generation !== expected) throw generationConflict(String(existing.generation), expected);
}

const standardIds = new Map(STANDARD_RESOURCE_CLASSES.map((name, index) => [name, index]));

/**
 * The classes as upstream names them in "Unable to allocate inventory": their
 * database ids gathered in a Python set. Standard classes have their catalog
 * position as id; custom ones (10000 on) are numbered here in order of
 * appearance, upstream's ids being unknown to this service.
 */
function upstreamClassOrder(classes: readonly string[]): string[] {
  const customIds = new Map<string, number>();
  const idOf = (name: string) => standardIds.get(name) ?? customIds.get(name) ?? customIds.set(name, 10000 + customIds.size).get(name)!;
  const byId = new Map(classes.map((name) => [idOf(name), name]));
  return pythonSetOrder(classes.map(idOf)).map((id) => byId.get(id)!);
}

const add = (target: Resources, resourceClass: string, amount: number) => {
  target[resourceClass] = (target[resourceClass] ?? 0) + amount;
};

const nestedAdd = (target: Map<string, Resources>, key: string, resourceClass: string, amount: number) => {
  let inner = target.get(key);
  if (inner === undefined) target.set(key, (inner = {}));
  add(inner, resourceClass, amount);
};

/**
 * The checks upstream makes before it writes anything: every consumer's
 * generation first (409), then the existence of every provider named (400).
 */
export function checkClaimTargets(desired: readonly DesiredConsumer[], state: Pick<ClaimState, 'consumers' | 'providers'>): void {
  for (const want of desired) checkConsumerGeneration(state.consumers.get(want.uuid), want.expectedGeneration);
  for (const want of desired) {
    for (const providerUuid of Object.keys(want.allocations)) {
      if (!state.providers.has(providerUuid)) {
        throw badRequest(`Allocation for resource provider '${providerUuid}' that does not exist.`);
      }
    }
  }
}

/** How each form reports a class that does not exist. */
const UNKNOWN_CLASS_MESSAGES: Record<NonNullable<ClaimOptions['form']>, (consumer: string, detail: string) => string> = {
  put: (consumer, detail) => `Unable to allocate inventory for consumer ${consumer}: ${detail}`,
  post: (_consumer, detail) => `Unable to allocate inventory ${detail}`,
  reshape: (_consumer, detail) => `malformed reshaper data: ${detail}`,
};

/**
 * Computes the claim for `desired` (in request order), or throws the error
 * upstream answers with: 409 consumer generation conflict, 400 unknown
 * provider, 400 unknown resource class, 409 "Unable to allocate inventory: …".
 */
export function planClaim(desired: DesiredConsumer[], state: ClaimState, now: string, options: ClaimOptions = {}): ClaimPlan {
  // 1–2. Consumer generations, every consumer first (upstream ensures all consumers before anything else), then providers.
  checkClaimTargets(desired, state);

  // 3. The lines upstream writes: the requested amounts, or zeroes for the allocations an emptied consumer drops.
  const lines: Line[] = [];
  for (const want of desired) {
    const source = Object.keys(want.allocations).length > 0 ? want.allocations : (state.consumers.get(want.uuid)?.allocations ?? {});
    const zero = source !== want.allocations;
    for (const [provider, resources] of Object.entries(source)) {
      if (!state.providers.has(provider)) continue; // only a removal can name a provider that is gone
      for (const [resourceClass, amount] of Object.entries(resources)) {
        lines.push({ consumer: want.uuid, provider, resourceClass, used: zero ? 0 : amount });
      }
    }
  }

  // 4. Every class must exist.
  for (const line of lines) {
    if (!state.classExists(line.resourceClass)) {
      throw badRequest(UNKNOWN_CLASS_MESSAGES[options.form ?? 'post'](line.consumer, `No such resource class ${line.resourceClass}.`));
    }
  }

  // 5. Capacity. What the request's consumers hold now is given back first.
  const released = new Map<string, Resources>();
  for (const want of desired) {
    for (const [provider, resources] of Object.entries(state.consumers.get(want.uuid)?.allocations ?? {})) {
      for (const [resourceClass, amount] of Object.entries(resources)) nestedAdd(released, provider, resourceClass, amount);
    }
  }
  const classes = upstreamClassOrder(lines.map((line) => line.resourceClass));
  const providersWithoutInventory = [...new Set(lines.map((line) => line.provider))].filter(
    (uuid) => !classes.some((resourceClass) => entryOf(state.providers.get(uuid)!.inventories, resourceClass) !== undefined),
  );
  if (providersWithoutInventory.length > 0) {
    throw conflict(
      `Unable to allocate inventory: Inventory for '${classes.join(', ')}' on resource provider '${providersWithoutInventory.join(', ')}' invalid.`,
    );
  }
  const requested = new Map<string, Resources>();
  for (const line of lines) {
    nestedAdd(requested, line.provider, line.resourceClass, line.used);
    if (line.used === 0) continue;
    const provider = state.providers.get(line.provider)!;
    const others = (entryOf(provider.usages, line.resourceClass) ?? 0) - (released.get(line.provider)?.[line.resourceClass] ?? 0);
    const earlier = requested.get(line.provider)![line.resourceClass]! - line.used;
    checkAllocation(provider, line.resourceClass, line.used, others + earlier);
  }

  // 6. Consumer changes.
  const touched = new Set(lines.map((line) => line.consumer));
  const consumers: ConsumerChange[] = [];
  for (const want of desired) {
    const before = state.consumers.get(want.uuid);
    const holds = Object.keys(want.allocations).length > 0;
    const type = want.consumerType ?? before?.consumerType;
    if (touched.has(want.uuid) && !holds) {
      consumers.push({ before, after: undefined });
      continue;
    }
    const unchanged =
      before !== undefined &&
      !touched.has(want.uuid) &&
      Object.keys(before.allocations).length === 0 &&
      before.projectId === want.projectId &&
      before.userId === want.userId &&
      before.consumerType === type;
    if (unchanged) continue;
    consumers.push({
      before,
      after: {
        uuid: want.uuid,
        projectId: want.projectId,
        userId: want.userId,
        generation: (before?.generation ?? 0) + (touched.has(want.uuid) ? 1 : 0),
        consumerType: type,
        allocations: holds ? structuredClone(want.allocations) : {},
        createdAt: before?.createdAt ?? now,
        updatedAt: now,
      },
    });
  }

  // 7. Provider usage changes: requested minus released, per provider.
  const visited = new Set(lines.map((line) => line.provider));
  const providerUuids = [...new Set([...visited, ...released.keys()])].filter((uuid) => state.providers.has(uuid));
  const providers: ProviderUsageChange[] = [];
  for (const uuid of providerUuids) {
    const deltas: Resources = {};
    for (const [resourceClass, amount] of Object.entries(requested.get(uuid) ?? {})) add(deltas, resourceClass, amount);
    for (const [resourceClass, amount] of Object.entries(released.get(uuid) ?? {})) add(deltas, resourceClass, -amount);
    for (const resourceClass of Object.keys(deltas)) if (deltas[resourceClass] === 0) delete deltas[resourceClass];
    const bumpGeneration = visited.has(uuid);
    if (!bumpGeneration && Object.keys(deltas).length === 0) continue;
    providers.push({ provider: state.providers.get(uuid)!, deltas, bumpGeneration });
  }
  return { consumers, providers };
}

/**
 * DELETE /allocations/{uuid}: the consumer and all its allocations go; the
 * providers' usage drops without a new generation, as upstream's delete.
 */
export function planRemoval(consumer: Consumer, providers: ReadonlyMap<string, Provider>): ClaimPlan {
  const changes: ProviderUsageChange[] = [];
  for (const [uuid, resources] of Object.entries(consumer.allocations)) {
    const provider = providers.get(uuid);
    if (provider === undefined) continue;
    const deltas = Object.fromEntries(Object.entries(resources).map(([resourceClass, amount]) => [resourceClass, -amount]));
    changes.push({ provider, deltas, bumpGeneration: false });
  }
  return { consumers: [{ before: consumer, after: undefined }], providers: changes };
}
