/**
 * Traits: the catalog (GET /traits, GET/PUT/DELETE /traits/{name}) and the
 * trait set of one provider (GET/PUT/DELETE /resource_providers/{uuid}/traits).
 */
import { badRequest, conflict, ErrorCode, notFound } from '../shared/api/errors.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { validateQuery } from '../shared/http/validation.js';
import {
  distinct,
  filterTraits,
  INVALID_CUSTOM_TRAIT,
  isCustomName,
  isValidCustomName,
  latestChange,
  parseAssociated,
  parseTraitNameFilter,
  sameNames,
  unknownNames,
  type TraitListFilter,
} from '../shared/domain/catalog-names.js';
import type { Provider } from '../shared/domain/model.js';
import * as schemas from '../shared/schemas/trait.js';
import { traits, type CatalogEntry } from '../shared/storage/catalog.js';
import { listProviders, providerChangePlan } from '../shared/storage/providers.js';
import { entriesBuilt } from '../shared/storage/storage-format.js';
import { traitsHeld } from '../shared/storage/trait-holders.js';
import { deleteUnused } from '../shared/storage/commit/count-changes.js';
import { readPlanCommit } from '../shared/storage/commit/transaction.js';
import { loadProvider } from '../shared/http/provider-lookup.js';

const NO_CACHE = { 'cache-control': 'no-cache' };

const traitNotFound = (name: string) => notFound(`No such trait(s): ${name}.`);

/**
 * The body listing trait names; from 1.15 Last-Modified is the latest change
 * among the listed traits (now when there are none).
 */
function traitsReply(request: PlacementRequest, entries: CatalogEntry[], extra: Record<string, unknown> = {}): Reply {
  return {
    status: 200,
    body: { traits: entries.map((entry) => entry.name), ...extra },
    lastModified: request.isAtLeast('1.15') ? (latestChange(entries) ?? new Date()) : undefined,
  };
}

/** Thrown by the create of PUT /traits/{name} when the name was taken meanwhile. */
class TraitExists extends Error {}

/** The catalog entries of a provider's traits, in the provider's order. */
async function providerTraitEntries(provider: Provider): Promise<CatalogEntry[]> {
  const found = await traits.getMany(provider.traits);
  return provider.traits.flatMap((name) => found.get(name) ?? []);
}

/** Which of the listed traits some provider holds: from the holders their entries name once the entries are built; else from every provider. */
async function associatedTraits(listed: readonly CatalogEntry[]): Promise<Set<string>> {
  if (entriesBuilt()) return traitsHeld(listed);
  return new Set((await listProviders()).flatMap((provider) => provider.traits));
}

async function listTraits(request: PlacementRequest): Promise<Reply> {
  validateQuery(schemas.LIST_TRAITS_QUERY_1_6, request.query.toRecord());
  const name = request.query.get('name');
  const associated = request.query.get('associated');
  const filter: TraitListFilter = {
    ...(name === undefined ? {} : parseTraitNameFilter(name)),
    ...(associated === undefined ? {} : { associated: parseAssociated(associated) }),
  };
  // nova asks for its traits by name (name=in:), which reads those entries, not the catalog.
  const listed = await (filter.nameIn === undefined ? traits.list() : traits.listNamed(filter.nameIn));
  return traitsReply(request, filterTraits(listed, filter, filter.associated === undefined ? new Set() : await associatedTraits(listed)));
}

async function showTrait(request: PlacementRequest): Promise<Reply> {
  const name = request.param('name');
  const entry = await traits.get(name);
  if (entry === undefined) throw traitNotFound(name);
  if (!request.isAtLeast('1.15')) return { status: 204 };
  return { status: 204, headers: NO_CACHE, lastModified: new Date(entry.createdAt) };
}

async function putTrait(request: PlacementRequest): Promise<Reply> {
  const name = request.param('name');
  if (!isValidCustomName(name)) throw badRequest(INVALID_CUSTOM_TRAIT);
  let status = 204;
  let created: string | undefined = (await traits.get(name))?.createdAt;
  if (created === undefined) {
    const now = new Date().toISOString();
    try {
      await traits.create(name, now, () => new TraitExists());
      status = 201;
      created = now;
    } catch (error) {
      // Another request created it meanwhile: it exists, which is all PUT promises.
      if (!(error instanceof TraitExists)) throw error;
    }
  }
  const headers: Record<string, string> = { location: `${request.baseUrl}/traits/${name}` };
  if (!request.isAtLeast('1.15')) return { status, headers };
  return { status, headers: { ...headers, ...NO_CACHE }, lastModified: created === undefined ? new Date() : new Date(created) };
}

async function deleteTrait(request: PlacementRequest): Promise<Reply> {
  const name = request.param('name');
  const entry = await traits.get(name);
  if (entry === undefined) throw traitNotFound(name);
  if (!isCustomName(name)) throw badRequest(`Cannot delete standard trait ${name}.`);
  await deleteUnused('traits', name, () => conflict(`The trait ${name} is in use by a resource provider.`));
  return { status: 204 };
}

async function listProviderTraits(request: PlacementRequest): Promise<Reply> {
  const provider = await loadProvider(request.param('uuid'), ': ');
  const body = { traits: provider.traits, resource_provider_generation: provider.generation };
  if (!request.isAtLeast('1.15')) return { status: 200, body };
  return { status: 200, body, lastModified: latestChange(await providerTraitEntries(provider)) ?? new Date() };
}

interface SetTraitsBody {
  traits: string[];
  resource_provider_generation: number;
}

const noSuchTraits = (names: string[]) => badRequest(`No such trait ${names.join(', ')}`);

const generationChanged = () =>
  conflict("Resource provider's generation already changed. Please update the generation and try again.", ErrorCode.CONCURRENT_UPDATE);

/**
 * Writes the provider with a new trait set, bumping its generation; nothing
 * when the set is unchanged (as upstream). When the client sent a generation,
 * every read of the provider must still carry it.
 */
async function replaceTraits(provider: Provider, names: string[], generation?: number): Promise<Provider> {
  return readPlanCommit(async (retry) => {
    const before = retry === 0 ? provider : await loadProvider(provider.uuid);
    if (generation !== undefined && before.generation !== generation) throw generationChanged();
    if (sameNames(before.traits, names)) return { writes: [], result: before };
    const after: Provider = { ...before, traits: names, generation: before.generation + 1, updatedAt: new Date().toISOString() };
    return { ...providerChangePlan(before, after, { onUnknownTrait: (name) => noSuchTraits([name]) }), result: after };
  });
}

async function updateProviderTraits(request: PlacementRequest): Promise<Reply> {
  const body = request.json<SetTraitsBody>(schemas.PUT_RESOURCE_PROVIDER_TRAITS_1_6);
  const provider = await loadProvider(request.param('uuid'));
  if (provider.generation !== body.resource_provider_generation) throw generationChanged();
  const wanted = distinct(body.traits);
  const found = await traits.getMany(wanted);
  const unknown = unknownNames(wanted, new Set(found.keys()));
  if (unknown.length > 0) throw noSuchTraits(unknown);
  const updated = await replaceTraits(provider, wanted, body.resource_provider_generation);
  const entries = wanted.map((name) => found.get(name)!);
  return traitsReply(request, entries, { resource_provider_generation: updated.generation });
}

async function deleteProviderTraits(request: PlacementRequest): Promise<Reply> {
  const provider = await loadProvider(request.param('uuid'));
  await replaceTraits(provider, []);
  return { status: 204 };
}

export const operations: Operations<'traits'> = {
  'GET /traits': listTraits,
  'GET /traits/{name}': showTrait,
  'PUT /traits/{name}': putTrait,
  'DELETE /traits/{name}': deleteTrait,
  'GET /resource_providers/{uuid}/traits': listProviderTraits,
  'PUT /resource_providers/{uuid}/traits': updateProviderTraits,
  'DELETE /resource_providers/{uuid}/traits': deleteProviderTraits,
};

export const handler = lambdaHandler(operations);
