/** Usages: one provider's usage per class, and a project's (or user's) total usage. */
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { validateQuery } from '../shared/http/validation.js';
import { providerUsages, totalUsages, usagesByConsumerType } from '../shared/domain/usages.js';
import * as schemas from '../shared/schemas/usage.js';
import { listProjectConsumers } from '../shared/storage/consumers.js';
import { loadProvider } from '../shared/http/provider-lookup.js';

// Usage is "what is held now": no Last-Modified is passed, so the response says now (from 1.15).

async function listProviderUsages(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  const provider = await loadProvider(uuid, ': ');
  return { status: 200, body: { resource_provider_generation: provider.generation, usages: providerUsages(provider) } };
}

async function totalUsagesOfProject(request: PlacementRequest): Promise<Reply> {
  const byConsumerType = request.isAtLeast('1.38');
  validateQuery(byConsumerType ? schemas.LIST_USAGES_QUERY_1_38 : schemas.LIST_USAGES_QUERY_1_9, request.query.toRecord());
  const projectId = request.query.get('project_id')!;
  const userId = request.query.get('user_id');
  const consumers = await listProjectConsumers(projectId, userId);
  // listProjectConsumers matches the user id as a key prefix: keep only exact matches.
  const selected = userId === undefined ? consumers : consumers.filter((consumer) => consumer.userId === userId);
  const usages = byConsumerType ? usagesByConsumerType(selected, request.query.get('consumer_type')) : totalUsages(selected);
  return { status: 200, body: { usages } };
}

export const operations: Operations<'usages'> = {
  'GET /resource_providers/{uuid}/usages': listProviderUsages,
  'GET /usages': totalUsagesOfProject,
};

export const handler = lambdaHandler(operations);
