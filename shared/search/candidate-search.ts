/**
 * GET /allocation_candidates' search: picks where to find trees, feeds them
 * to the pure candidate generator, and stops as soon as enough candidates
 * are found. Where a table's format 3 entries are built, it first asks them
 * (a few key-condition reads, no provider): a class no provider has room
 * for, or a required trait nobody holds, answers nothing at once; a
 * constraint few providers satisfy names every tree a candidate can be
 * anchored at. Otherwise it starts from named trees (in_tree), an
 * aggregate's members (member_of), or the sharded walk. The work follows
 * the number of candidates wanted, or the providers that can take them,
 * not the size of the cloud.
 */
import {
  AnchorTree,
  candidateKey,
  candidatesForTree,
  rootPasses,
  SearchBudget,
  type AllocationRequest,
  type UnsatisfiedConstraint,
  type SearchTracer,
} from '../domain/allocation-candidates.js';
import { SHARING_TRAIT } from '../domain/standard-catalog.js';
import type { CandidateRequest } from '../domain/candidate-request.js';
import type { SearchProvider } from '../domain/model.js';
import { MAX_INT } from '../domain/inventory.js';
import { PROVIDER_SHARDS } from '../storage/table-definition.js';
import { agreesWithEntries } from '../storage/entries/search-entries.js';
import { entriesBuilt } from '../storage/storage-format.js';
import {
  getProvidersForSearch,
  listAggregateMembers,
  listProvidersWithRoom,
  listSharingProviders,
  listTraitHolders,
  loadTrees,
  ReadCounter,
  ShardWalk,
  type EntrySet,
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

/** The smallest any-of aggregate list of any group, and its group: every candidate's tree touches one of them. */
function narrowestAggregates(request: CandidateRequest): { group: number; aggregates: string[] } | undefined {
  const lists = request.groups.flatMap((group, n) => group.memberOf.map((aggregates) => ({ group: n, aggregates })));
  return lists.sort((a, b) => a.aggregates.length - b.aggregates.length)[0];
}

/**
 * Entries read from each partition of a constraint: one tells whether any
 * provider satisfies it, and a set read whole (at most 8 providers) names
 * every tree a candidate can be anchored at, for at most 8 items of each
 * constraint.
 */
const PROBE_PER_PARTITION = 1;
/** The same for a trait's holder entries, in one partition. */
const PROBE_HOLDERS = 8;

/** What the entries say before any tree is read: nothing satisfies a constraint, a few providers do, or the walk must tell. */
type EntryVerdict = { kind: 'none'; constraint: UnsatisfiedConstraint } | { kind: 'providers'; uuids: string[] } | { kind: 'walk' };

/**
 * Asks the entries of every constraint they answer, side by side: room for
 * each amount of each group, each required trait list, each root_required
 * trait. Each is a necessary condition: every candidate takes each amount
 * of a group from one provider with room for it, and a trait from a provider
 * that holds it; so none satisfying one means no candidate, and the providers
 * satisfying one name (through their trees, or the trees that share with
 * them) every tree a candidate can be anchored at.
 */
async function askEntries(request: CandidateRequest, counter: ReadCounter): Promise<EntryVerdict> {
  const holders = async (anyOf: string[]): Promise<EntrySet> => {
    const sets = await Promise.all(anyOf.map((trait) => listTraitHolders(trait, PROBE_HOLDERS, counter)));
    return { uuids: [...new Set(sets.flatMap((set) => set.uuids))], complete: sets.every((set) => set.complete) };
  };
  const asked: [UnsatisfiedConstraint, Promise<EntrySet>][] = [
    ...request.groups.flatMap((group, g) => [
      ...Object.entries(group.resources).map(([resourceClass, amount]): [UnsatisfiedConstraint, Promise<EntrySet>] => [
        { group: g, resourceClass },
        listProvidersWithRoom(resourceClass, amount, PROBE_PER_PARTITION, counter),
      ]),
      ...group.required.map((anyOf): [UnsatisfiedConstraint, Promise<EntrySet>] => [{ group: g, anyOf }, holders(anyOf)]),
    ]),
    ...request.rootRequired.map((rootTrait): [UnsatisfiedConstraint, Promise<EntrySet>] => [{ group: null, rootTrait }, holders([rootTrait])]),
  ];
  const answers = await Promise.all(asked.map(async ([constraint, set]) => ({ constraint, set: await set })));
  const none = answers.find(({ set }) => set.complete && set.uuids.length === 0);
  if (none !== undefined) return { kind: 'none', constraint: none.constraint };
  const [smallest] = answers.filter(({ set }) => set.complete).sort((a, b) => a.set.uuids.length - b.set.uuids.length);
  return smallest === undefined ? { kind: 'walk' } : { kind: 'providers', uuids: smallest.set.uuids };
}

/** Where the seeded search starts: a named tree, the members of any of some aggregates, or providers the entries named. */
type Start = { tree: string } | { aggregates: string[] } | { providers: string[] };

/**
 * The candidates of a request. With a `tracer` (an explanation) the search
 * starts where it would without one, but reads every tree there (without
 * the walk's filter) and goes on past the candidates wanted, so that it can
 * count what each constraint removes; it stops only at the step budget or
 * the deadline, and reads no summaries.
 */
export async function searchCandidates(request: CandidateRequest, limits: SearchLimits, tracer?: SearchTracer): Promise<SearchResult> {
  const counter = new ReadCounter();
  const nothing = (): SearchResult => ({ candidates: [], providers: new Map(), itemsRead: counter.items, truncated: false });
  // No inventory hands out more than MAX_INT at once (its max_unit), so such an amount has no candidates.
  if (tracer === undefined && request.groups.some((group) => Object.values(group.resources).some((amount) => amount > MAX_INT))) return nothing();
  const collector = new Collector(Math.min(request.limit ?? Infinity, limits.maxCandidates));
  const deadline = performance.now() + limits.deadlineMs;
  const budget = new SearchBudget(limits.maxSteps, () => performance.now() > deadline);
  const known = new Map<string, SearchProvider>();
  const treesByRoot = new Map<string, SearchProvider[]>();

  const inTreeRoots = new Map<string, string>();
  const named = [...new Set(request.groups.flatMap((group) => (group.inTree === undefined ? [] : [group.inTree])))];
  for (const provider of await getProvidersForSearch(named, counter)) inTreeRoots.set(provider.uuid, provider.rootUuid);
  // Upstream answers an unknown in_tree provider with no candidates.
  const unknownTree = request.groups.findIndex((group) => group.inTree !== undefined && !inTreeRoots.has(group.inTree));
  if (unknownTree >= 0) {
    tracer?.noneSatisfy({ group: unknownTree, inTree: request.groups[unknownTree]!.inTree! });
    return nothing();
  }

  // in_tree and member_of start small already: the entries are asked where the walk would start.
  const seedAggregates = narrowestAggregates(request);
  const entries: EntryVerdict =
    entriesBuilt() && inTreeRoots.size === 0 && seedAggregates === undefined ? await askEntries(request, counter) : { kind: 'walk' };
  if (entries.kind === 'none') {
    tracer?.noneSatisfy(entries.constraint);
    return nothing();
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

  const start: Start | undefined =
    inTreeRoots.size > 0
      ? { tree: inTreeRoots.get(request.groups.find((group) => group.inTree !== undefined)!.inTree!)! }
      : seedAggregates !== undefined
        ? { aggregates: seedAggregates.aggregates }
        : entries.kind === 'providers'
          ? { providers: entries.uuids }
          : undefined;
  if (start !== undefined) {
    const seeds = await seedRoots(start, known, treesByRoot, counter);
    if (seeds.roots.length === 0 && seedAggregates !== undefined) {
      tracer?.noneSatisfy({ group: seedAggregates.group, memberOf: seedAggregates.aggregates });
      return nothing();
    }
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
 * The roots of the trees that can anchor a candidate from where the search
 * starts: the named tree, the trees of the aggregates' members, or the trees
 * of the providers the entries named; and the trees that share an
 * aggregate with a sharing provider found there.
 */
async function seedRoots(start: Start, known: Map<string, SearchProvider>, loaded: Map<string, SearchProvider[]>, counter: ReadCounter): Promise<Seeds> {
  const roots = new Set<string>();
  const listed = new Set<string>();
  const read = async (uuids: string[]) => {
    for (const provider of await getProvidersForSearch(
      uuids.filter((uuid) => !known.has(uuid)),
      counter,
    ))
      known.set(provider.uuid, provider);
    return uuids.flatMap((uuid) => known.get(uuid) ?? []);
  };
  const addMembers = async (ofAggregates: string[]) => {
    const members = await listAggregateMembers(ofAggregates, counter);
    // A provider deleted after its membership was read is not there to read: it is left out, as if read a moment later;
    // so is one whose membership outlived it (providerChangePlan) and one created again under its uuid.
    const found = (await read(members)).filter((provider) => agreesWithEntries(provider, ofAggregates, false));
    for (const provider of found) roots.add(provider.rootUuid);
    for (const aggregate of ofAggregates) listed.add(aggregate);
    return found;
  };
  let found: SearchProvider[];
  if ('tree' in start) {
    roots.add(start.tree);
    [found] = (await loadTrees([start.tree], known, counter, loaded)) as [SearchProvider[]];
  } else if ('aggregates' in start) {
    found = await addMembers(start.aggregates);
  } else {
    // The entries may name a provider gone since: it is left out, as if read a moment later. The tree decides the rest.
    found = await read(start.providers);
    for (const provider of found) roots.add(provider.rootUuid);
  }
  const seedSharing = found.filter((provider) => provider.traits.includes(SHARING_TRAIT));
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
  if (entriesBuilt()) {
    const holders = await Promise.all(request.rootRequired.map((trait) => listTraitHolders(trait, 1, new ReadCounter())));
    if (holders.some((set) => set.complete && set.uuids.length === 0)) return false;
  }
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
