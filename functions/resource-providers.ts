/** Resource providers: list, create, show, update (rename, re-parent), delete. */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, ErrorCode, notFound } from '../shared/api/errors.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { validateQuery } from '../shared/http/validation.js';
import type { Provider } from '../shared/domain/model.js';
import { checkNewParent, newProvider } from '../shared/domain/provider-tree.js';
import { parseInTree, parseMemberOf, parseRequiredTraits, parseResources, satisfies } from '../shared/domain/query-filters.js';
import { fitsCapacity } from '../shared/domain/capacity.js';
import { normalizeUuid } from '../shared/domain/uuid.js';
import { SHARING_TRAIT } from '../shared/domain/standard-catalog.js';
import * as schemas from '../shared/schemas/resource-provider.js';
import {
  findProviderUuidByName,
  getDescendants,
  getLineage,
  getProvider,
  getProviders,
  listAggregateProviders,
  listProviders,
  listTreeOf,
  providerChangeWrites,
  providerChangePlan,
} from '../shared/storage/providers.js';
import { resourceClasses, traits } from '../shared/storage/catalog.js';
import { readPlanCommit } from '../shared/storage/commit/transaction.js';
import { getProviderAllocations } from '../shared/storage/consumers.js';
import { loadProvider } from '../shared/http/provider-lookup.js';
import { someProviderInEvery } from '../shared/search/candidate-search.js';

const providerPath = (uuid: string) => `/resource_providers/${uuid}`;

function links(request: PlacementRequest, uuid: string) {
  const self = providerPath(uuid);
  const related = [
    ['inventories', '1.0'],
    ['usages', '1.0'],
    ['aggregates', '1.1'],
    ['traits', '1.6'],
    ['allocations', '1.11'],
  ] as const;
  return [{ rel: 'self', href: self }, ...related.filter(([, since]) => request.isAtLeast(since)).map(([rel]) => ({ rel, href: `${self}/${rel}` }))];
}

function serialize(request: PlacementRequest, provider: Provider) {
  return {
    uuid: provider.uuid,
    name: provider.name,
    generation: provider.generation,
    ...(request.isAtLeast('1.14') ? { parent_provider_uuid: provider.parentUuid, root_provider_uuid: provider.rootUuid } : {}),
    links: links(request, provider.uuid),
  };
}

const latest = (providers: Provider[]) =>
  providers.length === 0 ? undefined : new Date(Math.max(...providers.map((provider) => Date.parse(provider.updatedAt))));

function listQuerySchema(request: PlacementRequest) {
  if (request.isAtLeast('1.18')) return schemas.LIST_RESOURCE_PROVIDERS_QUERY_1_18;
  if (request.isAtLeast('1.14')) return schemas.LIST_RESOURCE_PROVIDERS_QUERY_1_14;
  if (request.isAtLeast('1.4')) return schemas.LIST_RESOURCE_PROVIDERS_QUERY_1_4;
  if (request.isAtLeast('1.3')) return schemas.LIST_RESOURCE_PROVIDERS_QUERY_1_3;
  return schemas.LIST_RESOURCE_PROVIDERS_QUERY_1_0;
}

/** Upstream looks traits up one by one and names the first it does not know. */
const unknownTrait = (name: string) => badRequest(`Invalid trait(s) in "required" parameter: No such trait(s): ${name}.`);

/**
 * Unknown names are 400s, but upstream looks them up as it applies the
 * filters and stops at one no provider passes, so an unknown name after such
 * a filter gives an empty list. Its order: in_tree, required traits (then
 * whether any provider has them), forbidden traits, member_of, resources.
 * Returns true when the answer is the empty list.
 */
async function emptyBeforeUnknownName(
  inTree: string | undefined,
  required: ReturnType<typeof parseRequiredTraits>,
  memberOf: ReturnType<typeof parseMemberOf>,
  resources: Record<string, number> | undefined,
): Promise<boolean> {
  const [missingTraits, missingClasses]: string[][] = await Promise.all([
    required ? traits.missing([...required.anyOf.flat(), ...required.forbidden]) : [],
    resources ? resourceClasses.missing(Object.keys(resources)) : [],
  ]);
  if (missingTraits.length === 0 && missingClasses.length === 0) return false;
  if (inTree !== undefined && (await getProvider(inTree)) === undefined) return true;
  if (required) {
    const missingRequired = required.anyOf.flat().find((name) => missingTraits.includes(name));
    if (missingRequired !== undefined) throw unknownTrait(missingRequired);
    const anyOf = { anyOf: required.anyOf, forbidden: [] };
    if (required.anyOf.length > 0 && !(await listProviders()).some((provider) => satisfies(provider.traits, anyOf))) return true;
    const missingForbidden = required.forbidden.find((name) => missingTraits.includes(name));
    if (missingForbidden !== undefined) throw unknownTrait(missingForbidden);
  }
  if (memberOf && memberOf.anyOf.length > 0 && !(await someProviderInEvery(memberOf.anyOf))) return true;
  throw badRequest(`Invalid resource class in resources parameter: No such resource class ${missingClasses[0]}.`);
}

async function listResourceProviders(request: PlacementRequest) {
  validateQuery(listQuerySchema(request), request.query.toRecord());
  const query = request.query;
  const memberOf = parseMemberOf(query, request.version);
  const required = parseRequiredTraits(query, request.version);
  const resources = query.has('resources') ? parseResources(query.get('resources')!) : undefined;
  const inTree = query.has('in_tree') ? parseInTree(query.get('in_tree')!) : undefined;
  if (await emptyBeforeUnknownName(inTree, required, memberOf, resources)) return { status: 200, body: { resource_providers: [] }, lastModified: latest([]) };

  let candidates: Provider[];
  const uuid = query.get('uuid');
  // Upstream filters by name only when it is not empty.
  const name = query.get('name') || undefined;
  if (uuid !== undefined) {
    candidates = [...(await getProviders([uuid])).values()];
  } else if (name !== undefined) {
    const found = await findProviderUuidByName(name);
    candidates = found ? [...(await getProviders([found])).values()] : [];
  } else if (inTree !== undefined) {
    candidates = (await listTreeOf(inTree)) ?? [];
  } else if (memberOf && memberOf.anyOf.length > 0) {
    // Every match is a member of one of the aggregates of each any-of list: the shortest list is read. When every match
    // must share via aggregate, only the aggregates' sharing providers are.
    const sharingOnly = required?.anyOf.some((names) => names.length === 1 && names[0] === SHARING_TRAIT) ?? false;
    candidates = await listAggregateProviders([...memberOf.anyOf].sort((a, b) => a.length - b.length)[0]!, { sharingOnly });
  } else {
    candidates = await listProviders();
  }
  if (inTree !== undefined && (uuid !== undefined || name !== undefined)) {
    const anchor = await getProvider(inTree);
    candidates = candidates.filter((provider) => provider.rootUuid === anchor?.rootUuid);
  }
  const selected = candidates.filter((provider) => {
    if (name !== undefined && provider.name !== name) return false;
    // Only the provider's own aggregates count here (a root's count for its tree only in allocation candidates).
    if (memberOf && !satisfies(provider.aggregates, memberOf)) return false;
    if (!satisfies(provider.traits, required)) return false;
    if (resources && !Object.entries(resources).every(([rc, amount]) => fitsCapacity(provider, rc, amount))) return false;
    return true;
  });
  selected.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.uuid.localeCompare(b.uuid));
  return {
    status: 200,
    body: { resource_providers: selected.map((provider) => serialize(request, provider)) },
    lastModified: latest(selected),
  };
}

const duplicate = (what: string) => conflict(`Conflicting resource provider ${what} already exists.`, ErrorCode.DUPLICATE_NAME);

async function createResourceProvider(request: PlacementRequest) {
  const body = request.json<{ name: string; uuid?: string; parent_provider_uuid?: string | null }>(
    request.isAtLeast('1.14') ? schemas.POST_RESOURCE_PROVIDER_1_14 : schemas.POST_RESOURCE_PROVIDER_1_0,
  );
  const uuid = body.uuid ? normalizeUuid(body.uuid) : randomUUID();
  const parentUuid = body.parent_provider_uuid ? normalizeUuid(body.parent_provider_uuid) : null;
  const failure = (reason: string) => badRequest(`Unable to create resource provider "${body.name}", ${uuid}: Object action create failed because: ${reason}`);
  if (body.name === '') throw failure('name is required');
  if (parentUuid === uuid) throw failure('parent provider UUID cannot be same as UUID. Please either remove parent provider UUID or specify a different UUID.');
  // The child takes its parent's root, on condition that the parent still has it when the child is written.
  const provider = await readPlanCommit(async () => {
    const parent = parentUuid ? await getProvider(parentUuid) : undefined;
    if (parentUuid && parent === undefined) throw failure('parent provider UUID does not exist.');
    if ((await getProvider(uuid)) !== undefined) throw duplicate(`uuid: ${uuid}`);
    const now = new Date().toISOString();
    const created = newProvider(uuid, body.name, parent, now);
    const errors = { onStale: () => duplicate(`uuid: ${uuid}`), onDuplicateName: (name: string) => duplicate(`name: ${name}`) };
    return { writes: providerChangeWrites(undefined, created, errors, parent ? [parent] : []), result: created };
  });
  const headers = { location: `${request.baseUrl}${providerPath(uuid)}` };
  if (request.isBefore('1.20')) return { status: 201, headers };
  return { status: 200, headers, body: serialize(request, provider), lastModified: new Date(provider.createdAt) };
}

async function showResourceProvider(request: PlacementRequest) {
  const provider = await loadProvider(request.param('uuid'));
  return { status: 200, body: serialize(request, provider), lastModified: new Date(provider.updatedAt) };
}

/**
 * Renames and moves a provider. A move reads the new parent's lineage
 * strongly consistently (never from the tree index, which may lag) to refuse
 * loops, and commits on condition that all of it still hangs as read; a move
 * to another root rewrites every descendant's root, each conditioned on its
 * children as read, so a child created meanwhile cancels the move.
 */
async function updateResourceProvider(request: PlacementRequest) {
  const uuid = request.param('uuid');
  const loaded = await loadProvider(uuid);
  const body = request.json<{ name: string; parent_provider_uuid?: string | null }>(
    request.isAtLeast('1.14') ? schemas.PUT_RESOURCE_PROVIDER_1_14 : schemas.PUT_RESOURCE_PROVIDER_1_0,
  );
  const failure = (reason: string) => badRequest(`Unable to save resource provider ${uuid}: Object action update failed because: ${reason}`);
  const newParentUuid = body.parent_provider_uuid == null ? body.parent_provider_uuid : normalizeUuid(body.parent_provider_uuid);
  const { before, after } = await readPlanCommit(async (retry) => {
    const before = retry === 0 ? loaded : await loadProvider(uuid);
    const now = new Date().toISOString();
    // Upstream's database writes nothing for the same name and parent, so the update time stays.
    const reparented = newParentUuid !== undefined && newParentUuid !== before.parentUuid;
    const unchanged = body.name === before.name && !reparented;
    const moved: Provider = { ...before, name: body.name, updatedAt: unchanged ? before.updatedAt : now };
    let lineage: Provider[] = [];
    let descendants: Provider[] = [];
    if (reparented) {
      const found = newParentUuid === null ? { providers: [], damaged: false } : await getLineage(newParentUuid);
      const problem = checkNewParent(before, newParentUuid, found, request.isAtLeast('1.37'));
      if (problem)
        throw problem.action === 'create'
          ? badRequest(`Unable to save resource provider ${uuid}: Object action create failed because: ${problem.reason}`)
          : failure(problem.reason);
      lineage = found.providers;
      moved.parentUuid = newParentUuid;
      moved.rootUuid = lineage[0]?.rootUuid ?? uuid;
      if (moved.rootUuid !== before.rootUuid) descendants = await getDescendants(before);
    }
    const writes = providerChangeWrites(before, moved, { onDuplicateName: (name) => duplicate(name) }, lineage);
    for (const descendant of descendants) {
      writes.push(...providerChangeWrites(descendant, { ...descendant, rootUuid: moved.rootUuid, updatedAt: now }));
    }
    return { writes, result: { before, after: moved } };
  });
  // Upstream answers with the update time the provider had before this change, and none
  // when it never had one: a child is created by a single insert, a root by an insert and
  // an update (of its root id), so only a child untouched since its creation has none.
  const neverUpdated = before.parentUuid !== null && before.updatedAt === before.createdAt;
  return { status: 200, body: serialize(request, after), lastModified: neverUpdated ? null : new Date(before.updatedAt) };
}

async function deleteResourceProvider(request: PlacementRequest) {
  const uuid = request.param('uuid');
  const hasChildren = () =>
    conflict(`Unable to delete parent resource provider ${uuid}: It has child resource providers.`, ErrorCode.PROVIDER_CANNOT_DELETE_PARENT);
  // The delete requires the generation and the empty children read: a claim or a child landing meanwhile sends it round again.
  await readPlanCommit(async () => {
    const found = await getProviderAllocations(uuid);
    if (found === undefined) throw notFound(`No resource provider with uuid ${uuid} found for delete`);
    const { provider, allocations } = found;
    if (provider.children.length > 0) throw hasChildren();
    if (allocations.size > 0) {
      throw conflict(`Unable to delete resource provider ${uuid}: Resource provider has allocations.`, ErrorCode.PROVIDER_IN_USE);
    }
    return providerChangePlan(provider, undefined);
  });
  return { status: 204 };
}

export const operations: Operations<'resource-providers'> = {
  'GET /resource_providers': listResourceProviders,
  'POST /resource_providers': createResourceProvider,
  'GET /resource_providers/{uuid}': showResourceProvider,
  'PUT /resource_providers/{uuid}': updateResourceProvider,
  'DELETE /resource_providers/{uuid}': deleteResourceProvider,
};

export const handler = lambdaHandler(operations);
