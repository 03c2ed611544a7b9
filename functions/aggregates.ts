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
import { providerChangeWrites } from '../shared/storage/providers.js';
import { commit, withRetries } from '../shared/storage/transaction.js';
import { loadProvider } from '../shared/http/provider-lookup.js';

/** How often a pre-1.19 PUT (which has no generation to conflict on) re-reads and tries again. */
const UNVERSIONED_RETRIES = 5;

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
  let provider = await loadProvider(uuid);
  const now = () => new Date().toISOString();

  if (request.isAtLeast(WITH_GENERATION)) {
    const body = request.json<AggregatesBody>(schemas.PUT_AGGREGATES_1_19);
    if (provider.generation !== body.resource_provider_generation) {
      throw conflict("Resource provider's generation already changed. Please update the generation and try again.", ErrorCode.CONCURRENT_UPDATE);
    }
    const after: Provider = { ...provider, aggregates: body.aggregates, generation: provider.generation + 1, updatedAt: now() };
    await commit(providerChangeWrites(provider, after));
    return aggregatesReply(request, after, body.aggregates);
  }

  const aggregates = request.json<string[]>(schemas.PUT_AGGREGATES_1_1);
  // Same generation: the write only has to land on the state it was read at, so re-read on a race.
  await withRetries(UNVERSIONED_RETRIES, async () => {
    // Upstream keeps aggregates in a table of their own: the provider's update time stays.
    const after: Provider = { ...provider, aggregates };
    try {
      await commit(providerChangeWrites(provider, after));
    } catch (error) {
      provider = await loadProvider(uuid);
      throw error;
    }
  });
  return aggregatesReply(request, provider, aggregates);
}

export const operations: Operations<'aggregates'> = {
  'GET /resource_providers/{uuid}/aggregates': listAggregates,
  'PUT /resource_providers/{uuid}/aggregates': setAggregates,
};

export const handler = lambdaHandler(operations);
