/**
 * GET /allocation_candidates' search: picks where to find trees (named
 * trees, an aggregate's members, or the sharded walk), feeds them to the
 * pure candidate generator, and stops as soon as enough candidates are
 * found. The work follows the number of candidates wanted, not the size of
 * the cloud.
 */
import { AnchorTree, candidateKey, candidatesForTree, SearchBudget, SHARING_TRAIT, type AllocationRequest } from '../domain/allocation-candidates.js';
import type { CandidateRequest } from '../domain/candidate-request.js';
import type { Provider } from '../domain/model.js';
import { PROVIDER_SHARDS } from '../storage/table-definition.js';
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
}

export interface SearchResult {
  candidates: AllocationRequest[];
  /** Every provider of every tree a candidate uses, by uuid. */
  providers: Map<string, Provider>;
  /** Items DynamoDB read. */
  itemsRead: number;
  /** True when the search stopped before seeing every tree: limit or cap reached, or step budget spent. */
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
export function walkFilter(request: CandidateRequest, sharing: Provider[]): WalkFilter {
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

export async function searchCandidates(request: CandidateRequest, limits: SearchLimits): Promise<SearchResult> {
  const counter = new ReadCounter();
  const collector = new Collector(Math.min(request.limit ?? Infinity, limits.maxCandidates));
  const budget = new SearchBudget(limits.maxSteps);
  const known = new Map<string, Provider>();
  const treesByRoot = new Map<string, Provider[]>();

  const inTreeRoots = new Map<string, string>();
  const named = [...new Set(request.groups.flatMap((group) => (group.inTree === undefined ? [] : [group.inTree])))];
  for (const provider of await getProvidersForSearch(named, counter)) inTreeRoots.set(provider.uuid, provider.rootUuid);
  // Upstream answers an unknown in_tree provider with no candidates.
  if (named.some((uuid) => !inTreeRoots.has(uuid))) return { candidates: [], providers: new Map(), itemsRead: counter.items, truncated: false };

  let stopped = false;
  const evaluate = (trees: Provider[][], sharing: Provider[]) => {
    for (const members of trees) {
      if (stopped) return;
      const tree = new AnchorTree(members, sharing);
      treesByRoot.set(tree.root.uuid, members);
      stopped = !candidatesForTree(tree, request, inTreeRoots, budget, (candidate) => collector.add(candidate));
    }
  };
  const remember = (providers: Provider[]) => {
    for (const provider of providers) known.set(provider.uuid, provider);
    return providers;
  };

  const seedAggregates = narrowestAggregates(request);
  if (inTreeRoots.size > 0 || seedAggregates !== undefined) {
    const trees = await loadTrees(await seedRoots(request, inTreeRoots, seedAggregates, known, counter), known, counter);
    // Only the sharing providers of these trees' aggregates can take part.
    const aggregates = new Set(trees.flat().flatMap((provider) => provider.aggregates));
    evaluate(trees, remember(await listSharingProviders(counter, [...aggregates])));
  } else {
    const sharing = remember(await listSharingProviders(counter));
    const walk = new ShardWalk(walkFilter(request, sharing), counter);
    // The first round asks for about 1.6 items per wanted candidate (trees have children, some providers are
    // full), so that a typical request needs one round trip; later rounds follow the hit rate.
    let round = Math.ceil(collector.wanted * 1.6) + PROVIDER_SHARDS;
    while (!stopped && !walk.done) {
      evaluate(await walk.next(Math.min(round, 10_000)), sharing);
      const found = collector.candidates.length;
      const remaining = collector.wanted - found;
      round = found > 0 ? Math.ceil((remaining * counter.items * 1.2) / found) + PROVIDER_SHARDS : round * 2;
    }
  }

  const providers = await usedTrees(collector.candidates, treesByRoot, known, counter);
  return { candidates: collector.candidates, providers, itemsRead: counter.items, truncated: collector.full || budget.exhausted };
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
  known: Map<string, Provider>,
  counter: ReadCounter,
): Promise<string[]> {
  const roots = new Set<string>();
  let seedSharing: Provider[];
  let listed: string[] = [];
  if (inTreeRoots.size > 0) {
    const root = inTreeRoots.get(request.groups.find((group) => group.inTree !== undefined)!.inTree!)!;
    roots.add(root);
    const [tree] = await loadTrees([root], known, counter);
    seedSharing = tree!.filter((provider) => provider.traits.includes(SHARING_TRAIT));
  } else {
    const members = await listAggregateMembers(aggregates!, counter);
    for (const provider of await getProvidersForSearch(members.filter((uuid) => !known.has(uuid)), counter)) known.set(provider.uuid, provider);
    for (const uuid of members) roots.add(known.get(uuid)!.rootUuid);
    seedSharing = members.map((uuid) => known.get(uuid)!).filter((provider) => provider.traits.includes(SHARING_TRAIT));
    listed = aggregates!;
  }
  // The members of an aggregate listed above are already in `roots`: reading it again would only repeat them.
  const sharedAggregates = new Set(seedSharing.flatMap((provider) => provider.aggregates));
  for (const aggregate of listed) sharedAggregates.delete(aggregate);
  const shared = await listAggregateMembers([...sharedAggregates], counter);
  for (const provider of await getProvidersForSearch(shared.filter((uuid) => !known.has(uuid)), counter)) known.set(provider.uuid, provider);
  for (const uuid of shared) roots.add(known.get(uuid)!.rootUuid);
  return [...roots];
}

/** The providers of every tree a candidate takes resources from (provider summaries cover whole trees). */
async function usedTrees(
  candidates: AllocationRequest[],
  treesByRoot: Map<string, Provider[]>,
  known: Map<string, Provider>,
  counter: ReadCounter,
): Promise<Map<string, Provider>> {
  const providerRoots = new Map<string, string>();
  for (const members of treesByRoot.values()) for (const provider of members) providerRoots.set(provider.uuid, provider.rootUuid);
  for (const provider of known.values()) providerRoots.set(provider.uuid, provider.rootUuid);
  const roots = new Set(candidates.flatMap((candidate) => candidate.resources.map((request) => providerRoots.get(request.provider)!)));
  const missing = [...roots].filter((root) => !treesByRoot.has(root));
  const loaded = await loadTrees(missing, known, counter);
  const providers = new Map<string, Provider>();
  for (const members of [...[...roots].filter((root) => treesByRoot.has(root)).map((root) => treesByRoot.get(root)!), ...loaded]) {
    for (const provider of members) providers.set(provider.uuid, provider);
  }
  return providers;
}
