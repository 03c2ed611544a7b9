/**
 * POST /reshaper (1.30): replaces the inventories of some providers and the
 * allocations of some consumers in one transaction (shared/domain/reshape.ts
 * plans it, storage's reshapeWrites writes it).
 */
import { badRequest, conflict, ErrorCode } from '../shared/api/errors.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import type { JsonSchema } from '../shared/api/json-schema.js';
import { allocatedClasses, desiredConsumers, providersInvolved, type ConsumerBody } from '../shared/domain/claims.js';
import { inventoriesFromRecords, ratioProblem } from '../shared/domain/inventory.js';
import { planReshape, unknownReshapeClass, type DesiredInventories } from '../shared/domain/reshape.js';
import * as schemas from '../shared/schemas/reshaper.js';
import { foldUuidCase } from '../shared/domain/uuid.js';
import { resourceClasses } from '../shared/storage/catalog.js';
import { getConsumers, reshapeWrites } from '../shared/storage/consumers.js';
import { getProviders } from '../shared/storage/providers.js';
import { readPlanCommit } from '../shared/storage/commit/transaction.js';

interface ReshaperBody {
  inventories: Record<string, { resource_provider_generation: number; inventories: Record<string, unknown> }>;
  allocations: Record<string, ConsumerBody>;
}

function schema(request: PlacementRequest): JsonSchema {
  if (request.isAtLeast('1.38')) return schemas.POST_RESHAPER_1_38;
  if (request.isAtLeast('1.34')) return schemas.POST_RESHAPER_1_34;
  return schemas.POST_RESHAPER_1_30;
}

async function reshape(request: PlacementRequest): Promise<Reply> {
  const body = request.json<ReshaperBody>(schema(request));
  // A provider's uuid in either case is one provider: the last of its spellings counts, as for consumers (desiredConsumers).
  const byProvider = new Map(Object.entries(body.inventories).map(([providerUuid, entry]) => [foldUuidCase(providerUuid), entry]));
  const inventories: DesiredInventories[] = [...byProvider].map(([providerUuid, entry]) => ({
    providerUuid,
    generation: entry.resource_provider_generation,
    inventories: inventoriesFromRecords(entry.inventories, unknownReshapeClass),
  }));
  for (const want of inventories) {
    for (const [resourceClass, inventory] of Object.entries(want.inventories)) {
      const problem = ratioProblem(resourceClass, want.providerUuid, inventory);
      if (problem !== undefined) throw badRequest(problem);
    }
  }
  const desired = desiredConsumers(body.allocations, request.version);
  const missing = new Set(await resourceClasses.missing([...inventories.flatMap((want) => Object.keys(want.inventories)), ...allocatedClasses(desired)]));

  // A retry reads afresh and checks the client's generations again, so only
  // changes that left them intact (as upstream's allocation retries) succeed.
  await readPlanCommit(
    async () => {
      const consumers = await getConsumers(desired.map((want) => want.uuid));
      const providers = await getProviders([...inventories.map((want) => want.providerUuid), ...providersInvolved(desired, consumers)]);
      const now = new Date().toISOString();
      const plan = planReshape(inventories, desired, { consumers, providers, classExists: (name) => !missing.has(name) }, now);
      return { writes: reshapeWrites(plan, { at: now, requestId: request.requestId }, { onUnknownResourceClass: unknownReshapeClass }) };
    },
    (error) => conflict(`update conflict: ${error.message}`, ErrorCode.CONCURRENT_UPDATE),
  );
  return { status: 204 };
}

export const operations: Operations<'reshaper'> = {
  'POST /reshaper': reshape,
};

export const handler = lambdaHandler(operations);
