/**
 * Allocations: what a consumer holds (GET/PUT/DELETE /allocations/{consumer_uuid}),
 * several consumers changed at once (POST /allocations, 1.13), and what a
 * provider has handed out (GET /resource_providers/{uuid}/allocations).
 *
 * Every change is one claim transaction (storage's claimWrites), computed by
 * shared/domain/claims.ts from a strongly consistent read and retried on
 * fresh state when a concurrent claim cancels it.
 */
import { badRequest, conflict, ErrorCode, notFound } from '../shared/api/errors.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import type { JsonSchema } from '../shared/api/json-schema.js';
import {
  allocatedClasses,
  desiredConsumer,
  desiredConsumers,
  planClaim,
  planRemoval,
  providersInvolved,
  type ConsumerBody,
  type DesiredConsumer,
} from '../shared/domain/claims.js';
import { UNKNOWN_CONSUMER_TYPE, type Consumer, type Resources } from '../shared/domain/model.js';
import { isUuidLike, normalizeUuid } from '../shared/domain/uuid.js';
import * as schemas from '../shared/schemas/allocation.js';
import { resourceClasses } from '../shared/storage/catalog.js';
import { claimWrites, getConsumer, getConsumers, getProviderAllocations } from '../shared/storage/consumers.js';
import { getProviders } from '../shared/storage/providers.js';
import { readPlanCommit } from '../shared/storage/commit/transaction.js';

function putSchema(request: PlacementRequest): JsonSchema {
  if (request.isAtLeast('1.38')) return schemas.PUT_ALLOCATIONS_1_38;
  if (request.isAtLeast('1.34')) return schemas.PUT_ALLOCATIONS_1_34;
  if (request.isAtLeast('1.28')) return schemas.PUT_ALLOCATIONS_1_28;
  if (request.isAtLeast('1.12')) return schemas.PUT_ALLOCATIONS_1_12;
  if (request.isAtLeast('1.8')) return schemas.PUT_ALLOCATIONS_1_8;
  return schemas.PUT_ALLOCATIONS_1_0;
}

function postSchema(request: PlacementRequest): JsonSchema {
  if (request.isAtLeast('1.38')) return schemas.POST_ALLOCATIONS_1_38;
  if (request.isAtLeast('1.34')) return schemas.POST_ALLOCATIONS_1_34;
  if (request.isAtLeast('1.28')) return schemas.POST_ALLOCATIONS_1_28;
  return schemas.POST_ALLOCATIONS_1_13;
}

/**
 * Reads the consumers and providers involved, plans the claim and writes it,
 * again on fresh state while concurrent claims get in the way.
 */
async function claim(desired: DesiredConsumer[], form: 'put' | 'post', requestId: string): Promise<void> {
  const unknown = new Set(await resourceClasses.missing(allocatedClasses(desired)));
  await readPlanCommit(
    async () => {
      const consumers = await getConsumers(desired.map((want) => want.uuid));
      const providers = await getProviders(providersInvolved(desired, consumers));
      const now = new Date().toISOString();
      const plan = planClaim(desired, { consumers, providers, classExists: (name) => !unknown.has(name) }, now, { form });
      return { writes: claimWrites(plan.consumers, plan.providers, { at: now, requestId }) };
    },
    // Out of retries: upstream's wording for a claim that kept losing the race.
    (error) => conflict(`Inventory and/or allocations changed while attempting to allocate: ${error.message}`, ErrorCode.CONCURRENT_UPDATE),
  );
}

const noContent = (): Reply => ({ status: 204 });

async function putAllocations(request: PlacementRequest): Promise<Reply> {
  const raw = request.param('consumer_uuid');
  if (!isUuidLike(raw)) throw badRequest(`Malformed consumer_uuid: ${raw}`);
  const body = request.json<ConsumerBody>(putSchema(request));
  await claim([desiredConsumer(normalizeUuid(raw), body, request.version)], 'put', request.requestId);
  return noContent();
}

async function postAllocations(request: PlacementRequest): Promise<Reply> {
  const body = request.json<Record<string, ConsumerBody>>(postSchema(request));
  await claim(desiredConsumers(body, request.version), 'post', request.requestId);
  return noContent();
}

async function deleteAllocations(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('consumer_uuid');
  await readPlanCommit(async () => {
    const consumer = await getConsumer(uuid);
    if (consumer === undefined || Object.keys(consumer.allocations).length === 0) {
      throw notFound(`No allocations for consumer '${uuid}'`);
    }
    const providers = await getProviders(Object.keys(consumer.allocations));
    const plan = planRemoval(consumer, providers);
    return { writes: claimWrites(plan.consumers, plan.providers, { at: new Date().toISOString(), requestId: request.requestId }) };
  });
  return noContent();
}

async function showConsumerAllocations(request: PlacementRequest): Promise<Reply> {
  const consumer = await getConsumer(request.param('consumer_uuid'));
  if (consumer === undefined || Object.keys(consumer.allocations).length === 0) {
    return { status: 200, body: { allocations: {} }, lastModified: new Date() };
  }
  // The consumer is read strongly consistent: clients send its generation back. The providers' generations here are
  // informational (no request takes them as a condition; a stale one costs a client at most a 409 and a re-read), so
  // they are read eventually consistent, at half the units: this is nova-compute's most frequent call.
  const providers = await getProviders(Object.keys(consumer.allocations), { consistent: false });
  const allocations: Record<string, { resources: Resources; generation: number }> = {};
  for (const [uuid, resources] of Object.entries(consumer.allocations)) {
    const provider = providers.get(uuid);
    if (provider !== undefined) allocations[uuid] = { resources, generation: provider.generation };
  }
  const body: Record<string, unknown> = { allocations };
  if (request.isAtLeast('1.12')) {
    body.project_id = consumer.projectId;
    body.user_id = consumer.userId;
    if (request.isAtLeast('1.28')) body.consumer_generation = consumer.generation;
    if (request.isAtLeast('1.38')) body.consumer_type = consumer.consumerType ?? UNKNOWN_CONSUMER_TYPE;
  }
  return { status: 200, body, lastModified: new Date(consumer.updatedAt) };
}

async function showProviderAllocations(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const found = await getProviderAllocations(uuid);
  if (found === undefined) {
    throw notFound(`Resource provider '${uuid}' not found: No resource provider with uuid ${uuid} found`);
  }
  const { provider, allocations: held } = found;
  const consumers: Map<string, Consumer> = held.size > 0 && request.isAtLeast('1.15') ? await getConsumers([...held.keys()]) : new Map();
  const allocations: Record<string, { resources: Resources; consumer_generation?: number | null }> = {};
  for (const [consumerUuid, resources] of held) {
    allocations[consumerUuid] = request.isAtLeast('1.28') ? { resources, consumer_generation: consumers.get(consumerUuid)?.generation ?? null } : { resources };
  }
  const times = [...consumers.values()].map((consumer) => Date.parse(consumer.updatedAt));
  return {
    status: 200,
    body: { allocations, resource_provider_generation: provider.generation },
    lastModified: times.length > 0 ? new Date(Math.max(...times)) : new Date(),
  };
}

export const operations: Operations<'allocations'> = {
  'GET /allocations/{consumer_uuid}': showConsumerAllocations,
  'PUT /allocations/{consumer_uuid}': putAllocations,
  'DELETE /allocations/{consumer_uuid}': deleteAllocations,
  'POST /allocations': postAllocations,
  'GET /resource_providers/{uuid}/allocations': showProviderAllocations,
};

export const handler = lambdaHandler(operations);
