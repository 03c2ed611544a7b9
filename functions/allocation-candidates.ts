/**
 * GET /allocation_candidates (1.10): the providers that can satisfy a
 * request, as allocation requests ready for PUT /allocations and summaries
 * of the providers involved. Parsing is shared/domain/candidate-request.ts,
 * the search shared/search/candidate-search.ts.
 *
 * GET /explain/allocation_candidates (ours, not upstream's): the same query
 * explained, constraint by constraint (shared/domain/candidate-explanation.ts,
 * docs/operators/explain.md); an empty GET /allocation_candidates logs it.
 */
import { badRequest } from '../shared/api/errors.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { logger } from '../shared/http/logger.js';
import type { JsonSchema } from '../shared/api/json-schema.js';
import { validateQuery } from '../shared/http/validation.js';
import type { AllocationRequest } from '../shared/domain/allocation-candidates.js';
import { parseCandidateRequest, type CandidateRequest } from '../shared/domain/candidate-request.js';
import { ExplanationTracer, type Explanation } from '../shared/domain/candidate-explanation.js';
import { capacity } from '../shared/domain/capacity.js';
import { entryOf, type SearchProvider } from '../shared/domain/model.js';
import * as schemas from '../shared/schemas/allocation-candidate.js';
import { config } from '../shared/config.js';
import { searchCandidates, someProviderInEvery, someRootMatches, type SearchResult } from '../shared/search/candidate-search.js';
import { escapedBytes, MAX_RESPONSE_BYTES } from '../shared/http/middleware/response-size.js';
import { resourceClasses, traits } from '../shared/storage/catalog.js';

/** The body's share of a response (see response-size.ts), room left for the headers. */
const BODY_BYTES = MAX_RESPONSE_BYTES - 100_000;
/** Depth-first steps one request may take (each is a few comparisons). */
const SEARCH_STEPS = 2_000_000;

function querySchema(request: PlacementRequest): JsonSchema {
  const versions = [
    ['1.36', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_36],
    ['1.35', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_35],
    ['1.33', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_33],
    ['1.31', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_31],
    ['1.25', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_25],
    ['1.21', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_21],
    ['1.17', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_17],
    ['1.16', schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_16],
  ] as const;
  return versions.find(([since]) => request.isAtLeast(since))?.[1] ?? schemas.LIST_ALLOCATION_CANDIDATES_QUERY_1_10;
}

/**
 * Unknown names are 400s, but upstream looks them up group by group as it
 * searches (root_required's lookup and filter first) and stops at the first group nothing
 * satisfies: an unknown name in a later group then gives an empty answer,
 * not an error. Within a group: an unknown class (400), a member_of no
 * provider matches (empty), an unknown trait (400). Returns true when the
 * answer is empty.
 */
async function emptyBeforeUnknownName(request: CandidateRequest): Promise<boolean> {
  const groupTraits = (group: CandidateRequest['groups'][number]) => [...group.required.flat(), ...group.forbidden];
  const [missingClasses, missingTraits] = await Promise.all([
    resourceClasses.missing(request.groups.flatMap((group) => Object.keys(group.resources))),
    traits.missing([...request.rootRequired, ...request.rootForbidden, ...request.groups.flatMap(groupTraits)]),
  ]);
  if (missingClasses.length === 0 && missingTraits.length === 0) return false;
  const unknownTrait = (names: string[]) => names.find((name) => missingTraits.includes(name));
  const rootTrait = unknownTrait([...request.rootRequired, ...request.rootForbidden]);
  if (rootTrait) throw badRequest(`No such trait(s): ${rootTrait}.`);
  const rootFiltered = request.rootRequired.length > 0 || request.rootForbidden.length > 0;
  if (rootFiltered && !(await someRootMatches(request))) return true;
  for (const group of request.groups) {
    const resourceClass = Object.keys(group.resources).find((name) => missingClasses.includes(name));
    const trait = unknownTrait(groupTraits(group));
    if (resourceClass === undefined && trait === undefined) {
      const alone = { ...request, groups: [group], groupPolicy: undefined, sameSubtrees: [], limit: 1 };
      if ((await searchCandidates(alone, { maxCandidates: 1, maxSteps: SEARCH_STEPS, deadlineMs: config.searchDeadlineMs })).candidates.length === 0)
        return true;
      continue;
    }
    if (resourceClass) throw badRequest(`Invalid resource class in resources parameter: No such resource class ${resourceClass}.`);
    if (group.memberOf.length > 0 && !(await someProviderInEvery(group.memberOf))) return true;
    throw badRequest(`No such trait(s): ${trait}.`);
  }
  return false;
}

function allocationRequestBody(request: PlacementRequest, candidate: AllocationRequest) {
  const byProvider = new Map<string, Record<string, number>>();
  for (const { provider, resourceClass, amount } of candidate.resources) {
    byProvider.set(provider, { ...byProvider.get(provider), [resourceClass]: amount });
  }
  if (request.isBefore('1.12')) {
    return { allocations: [...byProvider].map(([uuid, resources]) => ({ resource_provider: { uuid }, resources })) };
  }
  const allocations = Object.fromEntries([...byProvider].map(([uuid, resources]) => [uuid, { resources }]));
  return request.isAtLeast('1.34') ? { allocations, mappings: candidate.mappings } : { allocations };
}

function providerSummary(request: PlacementRequest, provider: SearchProvider, requestedClasses: Set<string>) {
  const resources = Object.fromEntries(
    Object.entries(provider.inventories)
      .filter(([resourceClass]) => request.isAtLeast('1.27') || requestedClasses.has(resourceClass))
      .map(([resourceClass, inventory]) => [
        resourceClass,
        {
          capacity: capacity(inventory),
          used: entryOf(provider.usages, resourceClass) ?? 0,
        },
      ]),
  );
  return {
    resources,
    ...(request.isAtLeast('1.17') ? { traits: provider.traits } : {}),
    ...(request.isAtLeast('1.29') ? { parent_provider_uuid: provider.parentUuid, root_provider_uuid: provider.rootUuid } : {}),
  };
}

interface CandidateEntry {
  body: unknown;
  /** Summaries of the providers this candidate is the first to involve. */
  summaries: [string, unknown][];
}

/**
 * The response body as JSON, cut short if it would pass Lambda's response
 * limit. From 1.29 the summaries cover the whole trees of the returned
 * candidates. Before, upstream summarises the providers candidates use, then
 * cuts at `limit` keeping those of the returned candidates' trees: providers
 * that only candidates left out use stay.
 */
function responseBody(request: PlacementRequest, parsed: CandidateRequest, { candidates, providers }: Pick<SearchResult, 'candidates' | 'providers'>) {
  const requestedClasses = new Set(parsed.groups.flatMap((group) => Object.keys(group.resources)));
  const trees = new Map<string, SearchProvider[]>();
  for (const provider of providers.values()) {
    const tree = trees.get(provider.rootUuid);
    if (tree) tree.push(provider);
    else trees.set(provider.rootUuid, [provider]);
  }
  const usedByAny = new Set(candidates.flatMap((candidate) => candidate.resources.map((resource) => resource.provider)));
  const summarizedAlready = new Set<string>();
  const entries: CandidateEntry[] = candidates.slice(0, parsed.limit).map((candidate) => {
    const roots = new Set(candidate.resources.map((resource) => providers.get(resource.provider)!.rootUuid));
    const inTrees = [...roots].flatMap((root) => trees.get(root)!);
    const summarized = parsed.nestedAware ? inTrees : inTrees.filter((provider) => usedByAny.has(provider.uuid));
    const added = summarized.filter((provider) => !summarizedAlready.has(provider.uuid));
    for (const provider of added) summarizedAlready.add(provider.uuid);
    const summaries = added.map((provider): [string, unknown] => [provider.uuid, providerSummary(request, provider, requestedClasses)]);
    return { body: allocationRequestBody(request, candidate), summaries };
  });
  // Measuring each candidate costs more than the whole response; only an oversized one is cut.
  const whole = JSON.stringify(assemble(entries));
  return escapedBytes(whole) <= BODY_BYTES ? whole : JSON.stringify(assemble(entriesWithin(entries, BODY_BYTES)));
}

function assemble(entries: CandidateEntry[]) {
  return {
    allocation_requests: entries.map((entry) => entry.body),
    provider_summaries: Object.fromEntries(entries.flatMap((entry) => entry.summaries)),
  };
}

/** The leading entries whose JSON, escaped as a response body, fits in `bytes`. */
function entriesWithin(entries: CandidateEntry[], bytes: number): CandidateEntry[] {
  let total = 0;
  const count = entries.findIndex((entry) => {
    total += escapedBytes(JSON.stringify(entry.body)) + escapedBytes(JSON.stringify(Object.fromEntries(entry.summaries)));
    return total > bytes;
  });
  return count === -1 ? entries : entries.slice(0, count);
}

const searchLimits = () => ({ maxCandidates: config.maxAllocationCandidates, maxSteps: SEARCH_STEPS, deadlineMs: config.searchDeadlineMs });

/** The query checked as GET /allocation_candidates checks it (the same 400s, in the same order); true when its answer is empty before any search. */
async function parseQuery(request: PlacementRequest): Promise<{ parsed: CandidateRequest; empty: boolean }> {
  validateQuery(querySchema(request), request.query.toRecord());
  const parsed = parseCandidateRequest(request.query, request.version);
  return { parsed, empty: await emptyBeforeUnknownName(parsed) };
}

/** The explanation, from the search run again with a tracer: all the trees, every constraint counted. */
async function explain(request: PlacementRequest, parsed: CandidateRequest): Promise<{ explanation: Explanation; itemsRead: number; truncated: boolean }> {
  const limits = searchLimits();
  const tracer = new ExplanationTracer(request.query, request.version, parsed, limits.maxCandidates);
  const result = await searchCandidates({ ...parsed, limit: undefined }, limits, tracer);
  return { explanation: tracer.explanation(result.candidates.length), itemsRead: result.itemsRead, truncated: result.truncated };
}

async function listAllocationCandidates(request: PlacementRequest): Promise<Reply> {
  const { parsed, empty } = await parseQuery(request);
  // Before 1.29 the summaries name providers that candidates beyond `limit` use (responseBody): the search must find those too.
  const searched = parsed.nestedAware ? parsed : { ...parsed, limit: undefined };
  const result = empty
    ? { candidates: [], providers: new Map<string, SearchProvider>(), itemsRead: 0, truncated: false }
    : await searchCandidates(searched, searchLimits());
  logger.info('allocation candidate search', { candidates: result.candidates.length, itemsRead: result.itemsRead, truncated: result.truncated });
  if (result.candidates.length === 0) await logExplanation(request, parsed);
  return { status: 200, json: responseBody(request, parsed, result), lastModified: new Date() };
}

/**
 * "No valid host": one record saying why, found by the time and the request
 * id (on every log line). A warning, so that the default log level keeps it.
 * Explaining cannot change the answer: a failure to explain is logged instead.
 */
async function logExplanation(request: PlacementRequest, parsed: CandidateRequest): Promise<void> {
  try {
    const { explanation, itemsRead, truncated } = await explain(request, parsed);
    logger.warn('no allocation candidates', { query: rawQuery(request), explanation, itemsRead, truncated });
  } catch (error) {
    logger.warn('no allocation candidates, and no explanation', { query: rawQuery(request), error: (error as Error).message });
  }
}

/** The query as the operator wrote it, decoded (each key's values together). */
const rawQuery = (request: PlacementRequest) =>
  request.query
    .keys()
    .flatMap((key) => request.query.all(key).map((value) => `${key}=${value}`))
    .join('&');

async function explainAllocationCandidates(request: PlacementRequest): Promise<Reply> {
  const { parsed } = await parseQuery(request);
  const { explanation, itemsRead, truncated } = await explain(request, parsed);
  logger.info('allocation candidates explained', { itemsRead, truncated });
  return { status: 200, json: JSON.stringify(explanation), lastModified: null };
}

export const operations: Operations<'allocation-candidates'> = {
  'GET /allocation_candidates': listAllocationCandidates,
  'GET /explain/allocation_candidates': explainAllocationCandidates,
};

export const handler = lambdaHandler(operations);
