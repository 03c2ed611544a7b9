/**
 * GET /allocation_candidates' search: picks where to find trees (named
 * trees, an aggregate's members, or the sharded walk), feeds them to the
 * pure candidate generator, and stops as soon as enough candidates are
 * found. The work follows the number of candidates wanted, not the size of
 * the cloud.
 */
import {
  AnchorTree,
  candidateKey,
  candidatesForTree,
  rootPasses,
  SearchBudget,
  type AllocationRequest,
  type SearchTracer,
} from '../domain/allocation-candidates.js';
import { SHARING_TRAIT } from '../domain/standard-catalog.js';
import type { CandidateRequest } from '../domain/candidate-request.js';
import type { SearchProvider } from '../domain/model.js';
import { MAX_INT } from '../domain/inventory.js';
import { PROVIDER_SHARDS } from '../storage/table-definition.js';
import { agreesWithEntries } from '../storage/entries/search-entries.js';
import {
  getProvidersForSearch,
  listAggregateMembers,
  listSharingProviders,
  loadTrees,
  ReadCounter,
  ShardWalk,
  type WalkFilter,
} from '../storage/candidate-trees.js';

export interface SearchLimits {
  /** Most candidates one response may hold (PLACEMENT_MAX_ALLOCATION_CANDIDATES). */
  maxCandidates: number;
  /** Most steps the depth-first placement may take for one request. */
  maxSteps: number;
  /** Milliseconds the search may run (PLACEMENT_SEARCH_DEADLINE_MS); then it answers with what it found. */
  deadlineMs: number;
}

export interface SearchResult {
  candidates: AllocationRequest[];
  /** Every provider of every tree a candidate uses, by uuid. */
  providers: Map<string, SearchProvider>;
  /** Items DynamoDB read. */
  itemsRead: number;
  /** True when the search stopped before seeing every tree: limit or cap reached, step budget or time spent. */
  truncated: boolean;
}

/** Keeps distinct candidates up to a maximum. */
class Collector {
  readonly candidates: AllocationRequest[] = [];
  private readonly keys = new Set<string>();
  constructor(readonly wanted: number) {}
  get full(): boolean {
    return this.candidates.length >= this.wanted;
  }
  /** False once no more are wanted. */
  add(candidate: AllocationRequest): boolean {
    const key = candidateKey(candidate);
    if (!this.keys.has(key)) {
      this.keys.add(key);
      this.candidates.push(candidate);
    }
    return !this.full;
  }
}

/** A flat provider must hold every class no sharing provider could supply, summed over groups. */
export function walkFilter(request: CandidateRequest, sharing: SearchProvider[]): WalkFilter {
  const shareable = new Set(sharing.flatMap((provider) => Object.keys(provider.inventories)));
  const minimumFree: Record<string, number> = {};
  for (const group of request.groups) {
    for (const [resourceClass, amount] of Object.entries(group.resources)) {
      if (!shareable.has(resourceClass)) minimumFree[resourceClass] = (minimumFree[resourceClass] ?? 0) + amount;
    }
  }
  return { minimumFree, rootRequired: request.rootRequired, rootForbidden: request.rootForbidden };
}

/** The smallest any-of aggregate list of any group: every candidate's tree touches one of them. */
function narrowestAggregates(request: CandidateRequest): string[] | undefined {
  const lists = request.groups.flatMap((group) => group.memberOf);
  return lists.sort((a, b) => a.length - b.length)[0];
}

/** Trees that an unknown in_tree provider roots: none. */
const NO_TREE = '';

/**
 * The candidates of a request. With a `tracer` (an explanation) the search
 * reads every tree, without the walk's filter, and goes on past the
 * candidates wanted, so that it can count what each constraint removes; it
 * stops only at the step budget or the deadline, and reads no summaries.
 */
export async function searchCandidates(request: CandidateRequest, limits: SearchLimits, tracer?: SearchTracer): Promise<SearchResult> {
  const counter = new ReadCounter();
  // No inventory hands out more than MAX_INT at once (its max_unit), so such an amount has no candidates.
  if (tracer === undefined && request.groups.some((group) => Object.values(group.resources).some((amount) => amount > MAX_INT))) {
    return { candidates: [], providers: new Map(), itemsRead: 0, truncated: false };
  }
  const collector = new Collector(Math.min(request.limit ?? Infinity, limits.maxCandidates));
  const deadline = performance.now() + limits.deadlineMs;
  const budget = new SearchBudget(limits.maxSteps, () => performance.now() > deadline);
  const known = new Map<string, SearchProvider>();
  const treesByRoot = new Map<string, SearchProvider[]>();

  const inTreeRoots = new Map<string, string>();
  const named = [...new Set(request.groups.flatMap((group) => (group.inTree === undefined ? [] : [group.inTree])))];
  for (const provider of await getProvidersForSearch(named, counter)) inTreeRoots.set(provider.uuid, provider.rootUuid);
  if (named.some((uuid) => !inTreeRoots.has(uuid))) {
    // Upstream answers an unknown in_tree provider with no candidates.
    if (tracer === undefined) return { candidates: [], providers: new Map(), itemsRead: counter.items, truncated: false };
    for (const uuid of named) if (!inTreeRoots.has(uuid)) inTreeRoots.set(uuid, NO_TREE);
  }

  let stopped = false;
  const evaluate = (trees: SearchProvider[][], sharing: SearchProvider[]) => {
    for (const members of trees) {
      if (stopped) return;
      const tree = new AnchorTree(members, sharing);
      treesByRoot.set(tree.root.uuid, members);
      // A tracer counts on past the candidates wanted; the collector keeps the first ones.
      stopped = !candidatesForTree(tree, request, inTreeRoots, budget, (candidate) => collector.add(candidate) || tracer !== undefined, tracer);
    }
  };
  const remember = (providers: SearchProvider[]) => {
    for (const provider of providers) known.set(provider.uuid, provider);
    return providers;
  };

  const seedAggregates = narrowestAggregates(request);
  if (tracer === undefined && (inTreeRoots.size > 0 || seedAggregates !== undefined)) {
    const seeds = await seedRoots(request, inTreeRoots, seedAggregates, known, treesByRoot, counter);
    const trees = await loadTrees(seeds.roots, known, counter, treesByRoot);
    // Only the sharing providers of these trees' aggregates can take part (AnchorTree picks them). Those of an
    // aggregate whose members were listed are known already; only the trees' other aggregates need a read.
    const aggregates = new Set(trees.flat().flatMap((provider) => provider.aggregates));
    remember(
      await listSharingProviders(
        counter,
        [...aggregates].filter((aggregate) => !seeds.listed.has(aggregate)),
      ),
    );
    evaluate(
      trees,
      [...known.values()].filter((provider) => provider.traits.includes(SHARING_TRAIT)),
    );
  } else {
    const sharing = remember(await listSharingProviders(counter));
    const walk = new ShardWalk(tracer === undefined ? walkFilter(request, sharing) : { minimumFree: {}, rootRequired: [], rootForbidden: [] }, counter);
    // The first round asks for about 2 items per wanted candidate (trees have children, some providers are
    // full), so that a typical request needs one round trip; later rounds follow the hit rate.
    // A tracer reads everything: in the largest rounds.
    let round = tracer === undefined ? collector.wanted * 2 + PROVIDER_SHARDS : Infinity;
    while (!stopped && !walk.done && !budget.exhausted) {
      evaluate(await walk.next(Math.min(round, 10_000)), sharing);
      const found = collector.candidates.length;
      const remaining = collector.wanted - found;
      if (tracer === undefined) round = found > 0 ? Math.ceil((remaining * counter.items * 1.2) / found) + PROVIDER_SHARDS : round * 2;
    }
  }

  const providers = tracer === undefined ? await usedTrees(collector.candidates, treesByRoot, known, counter) : new Map<string, SearchProvider>();
  return { candidates: collector.candidates, providers, itemsRead: counter.items, truncated: collector.full || budget.exhausted };
}

/** Where the seeded search starts: tree roots, and the aggregates whose every member is among the known providers. */
interface Seeds {
  roots: string[];
  listed: Set<string>;
}

/**
 * The roots of the trees that can anchor a candidate when the request names
 * trees (in_tree) or aggregates (member_of): those trees, the trees of the
 * aggregates' members, and the trees that share an aggregate with a sharing
 * provider found there.
 */
async function seedRoots(
  request: CandidateRequest,
  inTreeRoots: Map<string, string>,
  aggregates: string[] | undefined,
  known: Map<string, SearchProvider>,
  loaded: Map<string, SearchProvider[]>,
  counter: ReadCounter,
): Promise<Seeds> {
  const roots = new Set<string>();
  const listed = new Set<string>();
  const addMembers = async (ofAggregates: string[]) => {
    const members = await listAggregateMembers(ofAggregates, counter);
    for (const provider of await getProvidersForSearch(
      members.filter((uuid) => !known.has(uuid)),
      counter,
    ))
      known.set(provider.uuid, provider);
    // A provider deleted after its membership was read is not there to read: it is left out, as if read a moment later;
    // so is one whose membership outlived it (providerChangePlan) and one created again under its uuid.
    const found = members.flatMap((uuid) => known.get(uuid) ?? []).filter((provider) => agreesWithEntries(provider, ofAggregates, false));
    for (const provider of found) roots.add(provider.rootUuid);
    for (const aggregate of ofAggregates) listed.add(aggregate);
    return found;
  };
  let seedSharing: SearchProvider[];
  if (inTreeRoots.size > 0) {
    const root = inTreeRoots.get(request.groups.find((group) => group.inTree !== undefined)!.inTree!)!;
    roots.add(root);
    const [tree] = await loadTrees([root], known, counter, loaded);
    seedSharing = tree!.filter((provider) => provider.traits.includes(SHARING_TRAIT));
  } else {
    seedSharing = (await addMembers(aggregates!)).filter((provider) => provider.traits.includes(SHARING_TRAIT));
  }
  // The members of an aggregate listed above are already in `roots`: reading it again would only repeat them.
  await addMembers([...new Set(seedSharing.flatMap((provider) => provider.aggregates))].filter((aggregate) => !listed.has(aggregate)));
  return { roots: [...roots], listed };
}

/** The providers of every tree a candidate takes resources from (provider summaries cover whole trees). */
async function usedTrees(
  candidates: AllocationRequest[],
  treesByRoot: Map<string, SearchProvider[]>,
  known: Map<string, SearchProvider>,
  counter: ReadCounter,
): Promise<Map<string, SearchProvider>> {
  const providerRoots = new Map<string, string>();
  for (const members of treesByRoot.values()) for (const provider of members) providerRoots.set(provider.uuid, provider.rootUuid);
  for (const provider of known.values()) providerRoots.set(provider.uuid, provider.rootUuid);
  const roots = new Set(candidates.flatMap((candidate) => candidate.resources.map((request) => providerRoots.get(request.provider)!)));
  const providers = new Map<string, SearchProvider>();
  for (const members of await loadTrees(roots, known, counter, treesByRoot)) {
    for (const provider of members) providers.set(provider.uuid, provider);
  }
  return providers;
}

/**
 * Whether some tree's root has every trait of root_required and none it
 * forbids: upstream applies that filter before looking up any group's names.
 */
export async function someRootMatches(request: Pick<CandidateRequest, 'rootRequired' | 'rootForbidden'>): Promise<boolean> {
  const walk = new ShardWalk({ minimumFree: {}, rootRequired: request.rootRequired, rootForbidden: request.rootForbidden }, new ReadCounter());
  const matches = (tree: SearchProvider[]) => tree.some((provider) => provider.uuid === provider.rootUuid && rootPasses(provider.traits, request));
  for (let round = PROVIDER_SHARDS * 4; !walk.done; round = Math.min(round * 2, 10_000)) {
    if ((await walk.next(round)).some(matches)) return true;
  }
  return false;
}

/** Whether some provider is a member of an aggregate of every any-of list (one group's member_of, as upstream checks it). */
export async function someProviderInEvery(memberOf: string[][]): Promise<boolean> {
  const counter = new ReadCounter();
  let common: Set<string> | undefined;
  for (const list of memberOf) {
    const members = new Set(await listAggregateMembers(list, counter));
    common = common === undefined ? members : new Set([...common].filter((uuid) => members.has(uuid)));
    if (common.size === 0) return false;
  }
  // The entries may name providers that are gone or no longer agree (agreesWithEntries): the providers say, read 100 (one
  // batch read) at a time until one does (almost always the first).
  const uuids = [...common!];
  for (let start = 0; start < uuids.length; start += 100) {
    const providers = await getProvidersForSearch(uuids.slice(start, start + 100), counter);
    if (providers.some((provider) => memberOf.every((list) => agreesWithEntries(provider, list, false)))) return true;
  }
  return false;
}
