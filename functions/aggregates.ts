/**
 * The aggregates of one provider: GET and PUT /resource_providers/{uuid}/aggregates.
 * From 1.19 the body carries the provider generation, which PUT checks and bumps;
 * before 1.19 PUT neither checks nor bumps it.
 */
import { conflict, ErrorCode } from '../shared/api/errors.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import type { Provider } from '../shared/domain/model.js';
import * as schemas from '../shared/schemas/aggregate.js';
import { providerChangePlan } from '../shared/storage/providers.js';
import { readPlanCommit } from '../shared/storage/commit/transaction.js';
import { loadProvider } from '../shared/http/provider-lookup.js';

const WITH_GENERATION = '1.19';

function aggregatesReply(request: PlacementRequest, provider: Provider, aggregates: string[]): Reply {
  const body: Record<string, unknown> = { aggregates };
  if (request.isAtLeast(WITH_GENERATION)) body.resource_provider_generation = provider.generation;
  // Upstream records no time for an association, so Last-Modified (1.15+) is now: the middleware's default.
  return { status: 200, body };
}

async function listAggregates(request: PlacementRequest): Promise<Reply> {
  const provider = await loadProvider(request.param('uuid'));
  return aggregatesReply(request, provider, provider.aggregates);
}

interface AggregatesBody {
  aggregates: string[];
  resource_provider_generation: number;
}

async function setAggregates(request: PlacementRequest): Promise<Reply> {
  const uuid = request.param('uuid');
  // Upstream looks the provider up before it reads the body.
  const provider = await loadProvider(uuid);
  const withGeneration = request.isAtLeast(WITH_GENERATION);
  const body: { aggregates: string[]; resource_provider_generation?: number } = withGeneration
    ? request.json<AggregatesBody>(schemas.PUT_AGGREGATES_1_19)
    : { aggregates: request.json<string[]>(schemas.PUT_AGGREGATES_1_1) };
  // From 1.19 every read must still carry the client's generation, which the write bumps;
  // before, the write only has to land on the state it was read at.
  const after = await readPlanCommit(async (retry) => {
    const current = retry === 0 ? provider : await loadProvider(uuid);
    if (withGeneration && current.generation !== body.resource_provider_generation) {
      throw conflict("Resource provider's generation already changed. Please update the generation and try again.", ErrorCode.CONCURRENT_UPDATE);
    }
    // Before 1.19 upstream (aggregates in a table of their own) leaves the provider's generation and update time alone.
    const next: Provider = withGeneration
      ? { ...current, aggregates: body.aggregates, generation: current.generation + 1, updatedAt: new Date().toISOString() }
      : { ...current, aggregates: body.aggregates };
    return { ...providerChangePlan(current, next), result: next };
  });
  return aggregatesReply(request, after, body.aggregates);
}

export const operations: Operations<'aggregates'> = {
  'GET /resource_providers/{uuid}/aggregates': listAggregates,
  'PUT /resource_providers/{uuid}/aggregates': setAggregates,
};

export const handler = lambdaHandler(operations);
