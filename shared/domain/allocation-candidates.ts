/**
 * Allocation candidates for one anchor tree: every way the request groups
 * can be placed on the tree's providers (and on sharing providers that share
 * an aggregate with the tree), with upstream's rules:
 *
 * - the unsuffixed group may take each resource class from a different
 *   provider of the tree or a sharing provider; its required traits are
 *   satisfied by those providers together, and member_of by each provider
 *   or the tree's root;
 * - a suffixed group takes everything from one provider that alone has the
 *   traits and aggregates (a resourceless group, 1.36, only names one);
 * - group_policy=isolate gives each suffixed group its own provider;
 * - same_subtree (1.36) puts the named groups' providers under one of them;
 * - amounts that several groups put on one provider must fit together;
 * - root_required (1.35) filters the anchor tree by its root's traits;
 * - before 1.29 a candidate may not use two providers of one tree.
 *
 * The search is a depth-first walk over the groups that prunes a partial
 * placement as soon as it breaks capacity, isolation or the pre-1.29 rule,
 * and stops when the caller has enough or the step budget (or the time the
 * caller allows) is spent, so no request can explode combinatorially. Pure:
 * the caller's clock comes in as a function.
 */
import { fitsCapacity, freeCapacity } from './capacity.js';
import type { CandidateRequest, RequestGroup } from './candidate-request.js';
import { spreadsOverProviders } from './candidate-request.js';
import { entryOf, type SearchProvider } from './model.js';
import { ancestry } from './provider-tree.js';

export interface ResourceRequest {
  provider: string;
  resourceClass: string;
  amount: number;
}

export interface AllocationRequest {
  /** Root of the tree the candidate is anchored to. */
  anchor: string;
  resources: ResourceRequest[];
  /** Group suffix to the providers that satisfy it (1.34). */
  mappings: Record<string, string[]>;
}

/** What one group takes in one placement. */
export interface GroupPart {
  resources: ResourceRequest[];
  providers: string[];
}

/** Limits the work of one request, however wide the trees or numerous the groups. */
export class SearchBudget {
  private steps = 0;
  private expired = false;

  /**
   * `pastDeadline` says when the time allowed is over; it is asked once
   * every 1024 steps and whenever `exhausted` is read, never per step.
   */
  constructor(
    readonly maxSteps: number,
    private readonly pastDeadline: () => boolean = () => false,
  ) {}

  /** Counts one step; false once the budget is spent. */
  spend(): boolean {
    this.steps += 1;
    if (this.steps % 1024 === 0) return !this.exhausted;
    return !this.expired && this.steps <= this.maxSteps;
  }

  /** True once the steps are spent or the deadline has passed. */
  get exhausted(): boolean {
    this.expired ||= this.pastDeadline();
    return this.expired || this.steps > this.maxSteps;
  }
}

const hasAll = (traits: Set<string>, anyOfLists: string[][]) => anyOfLists.every((anyOf) => anyOf.some((trait) => traits.has(trait)));
const hasAny = (names: Iterable<string>, wanted: Set<string>) => [...names].some((name) => wanted.has(name));
const inAggregates = (provider: SearchProvider, memberOf: string[][]) => hasAll(new Set(provider.aggregates), memberOf);

/** The anchor tree and the providers its candidates may use. */
export class AnchorTree {
  readonly root: SearchProvider;
  readonly providers = new Map<string, SearchProvider>();
  /** Sharing providers outside the tree that share an aggregate with one of its providers. */
  readonly sharing: SearchProvider[];

  constructor(
    readonly members: SearchProvider[],
    allSharing: SearchProvider[],
  ) {
    for (const provider of members) this.providers.set(provider.uuid, provider);
    this.root = members.find((provider) => provider.parentUuid === null) ?? members[0]!;
    const treeAggregates = new Set(members.flatMap((provider) => provider.aggregates));
    this.sharing = allSharing.filter((provider) => !this.providers.has(provider.uuid) && hasAny(provider.aggregates, treeAggregates));
    for (const provider of this.sharing) this.providers.set(provider.uuid, provider);
  }

  /** True when `uuid` is `ancestor` or lies below it. */
  isUnder(uuid: string, ancestor: string): boolean {
    return ancestry(uuid, this.providers).includes(ancestor);
  }
}

/** Whether a tree's root passes root_required: every required trait, none forbidden. */
export function rootPasses(rootTraits: readonly string[], request: Pick<CandidateRequest, 'rootRequired' | 'rootForbidden'>): boolean {
  const traits = new Set(rootTraits);
  return request.rootRequired.every((trait) => traits.has(trait)) && !hasAny(request.rootForbidden, traits);
}

/** The unsuffixed group: a provider per resource class, the traits held together. */
function spreadParts(group: RequestGroup, tree: AnchorTree, inTreeRoot: string | undefined, budget: SearchBudget): GroupPart[] {
  const forbiddenTraits = new Set(group.forbidden);
  const forbiddenAggregates = new Set(group.forbiddenAggregates);
  const rootInAggregates = group.memberOf.length > 0 && inAggregates(tree.root, group.memberOf);
  if (hasAny(tree.root.aggregates, forbiddenAggregates)) return [];
  if (inTreeRoot !== undefined && tree.root.uuid !== inTreeRoot) return [];

  // A sharing provider must itself be in the aggregates; a tree member may also rely on its root.
  const inRequestedAggregates = (provider: SearchProvider, shared: boolean) =>
    group.memberOf.length === 0 || inAggregates(provider, group.memberOf) || (!shared && rootInAggregates);
  const usable = (provider: SearchProvider, shared: boolean) =>
    !hasAny(provider.traits, forbiddenTraits) &&
    !hasAny(provider.aggregates, forbiddenAggregates) &&
    inRequestedAggregates(provider, shared) &&
    (!shared || inTreeRoot === undefined);

  const classes = Object.entries(group.resources);
  const options = classes.map(([resourceClass, amount]) =>
    [...tree.members.map((p) => [p, false] as const), ...tree.sharing.map((p) => [p, true] as const)]
      .filter(([provider, shared]) => usable(provider, shared) && fitsCapacity(provider, resourceClass, amount))
      .map(([provider]) => provider),
  );
  if (options.some((list) => list.length === 0)) return [];

  const parts: GroupPart[] = [];
  const chosen: SearchProvider[] = [];
  const walk = (index: number): boolean => {
    if (!budget.spend()) return false;
    if (index === classes.length) {
      const traits = new Set(chosen.flatMap((provider) => provider.traits));
      if (!hasAll(traits, group.required)) return true;
      const providers = [...new Set(chosen.map((provider) => provider.uuid))];
      parts.push({
        resources: classes.map(([resourceClass, amount], n) => ({ provider: chosen[n]!.uuid, resourceClass, amount })),
        providers,
      });
      return true;
    }
    for (const provider of options[index]!) {
      chosen.push(provider);
      const more = walk(index + 1);
      chosen.pop();
      if (!more) return false;
    }
    return true;
  };
  walk(0);
  return parts;
}

/** A suffixed group: one provider with everything the group asks for. */
function singleProviderParts(group: RequestGroup, tree: AnchorTree, inTreeRoot: string | undefined): GroupPart[] {
  const forbiddenTraits = new Set(group.forbidden);
  const forbiddenAggregates = new Set(group.forbiddenAggregates);
  const classes = Object.entries(group.resources);
  // A resourceless group names providers only through a positive filter.
  if (classes.length === 0 && group.required.length === 0 && group.memberOf.length === 0) return [];
  const parts: GroupPart[] = [];
  for (const provider of [...tree.members, ...tree.sharing]) {
    if (inTreeRoot !== undefined && provider.rootUuid !== inTreeRoot) continue;
    const traits = new Set(provider.traits);
    if (!hasAll(traits, group.required) || hasAny(traits, forbiddenTraits)) continue;
    if (!inAggregates(provider, group.memberOf) || hasAny(provider.aggregates, forbiddenAggregates)) continue;
    if (!classes.every(([resourceClass, amount]) => fitsCapacity(provider, resourceClass, amount))) continue;
    parts.push({
      resources: classes.map(([resourceClass, amount]) => ({ provider: provider.uuid, resourceClass, amount })),
      providers: [provider.uuid],
    });
  }
  return parts;
}

/** The ways one group can be placed on the tree. */
function groupParts(group: RequestGroup, tree: AnchorTree, inTreeRoots: Map<string, string>, budget: SearchBudget): GroupPart[] {
  const inTreeRoot = group.inTree === undefined ? undefined : inTreeRoots.get(group.inTree);
  return spreadsOverProviders(group) ? spreadParts(group, tree, inTreeRoot, budget) : singleProviderParts(group, tree, inTreeRoot);
}

/** A constraint that combines the groups, checked on a whole placement of every group on one tree. */
export interface CombiningCheck {
  holds: (tree: AnchorTree, chosen: GroupPart[]) => boolean;
}

/**
 * Watches the search apply its constraints one after the other, for an
 * explanation (shared/domain/candidate-explanation.ts). With a tracer the
 * search prunes only what breaks capacity or the pre-1.29 rule, and checks
 * the combining constraints in the tracer's order on each whole placement.
 */
/**
 * A constraint nothing satisfies, known before any tree is read: from the
 * index entries, room for an amount of a class or holding one of a list of
 * traits, in one group (by its index), or a root_required trait (group
 * null); an in_tree provider that does not exist; a member_of list of
 * aggregates nobody is in.
 */
export type UnsatisfiedConstraint =
  | { group: number; resourceClass: string }
  | { group: number; anyOf: string[] }
  | { group: number; inTree: string }
  | { group: number; memberOf: string[] }
  | { group: null; rootTrait: string };

export interface SearchTracer {
  /** Per group (in the request's order), the group as it stands after each of its steps; the last is the group itself. */
  readonly groupSteps: RequestGroup[][];
  /** Nothing satisfies the constraint: the search read no tree, and answers nothing. */
  noneSatisfy(constraint: UnsatisfiedConstraint): void;
  /** In the order they are counted; a placement is a candidate when every one holds. */
  readonly combining: CombiningCheck[];
  /** The providers of a tree the search reads, with the sharing providers it reaches. */
  saw(tree: AnchorTree): void;
  /** The providers the placements of group `group` after step `step` use in one tree. */
  providersAfter(group: number, step: number, providers: string[]): void;
  /** A whole placement, of which the first `held` combining constraints hold. */
  placement(candidate: AllocationRequest, held: number): void;
}

/** Whether each suffixed group of the placement has a provider of its own (group_policy=isolate). */
export function isolationHolds(groups: RequestGroup[], chosen: GroupPart[]): boolean {
  const providers = chosen.filter((_, n) => !spreadsOverProviders(groups[n]!)).map((part) => part.providers[0]!);
  return new Set(providers).size === providers.length;
}

/**
 * Emits the candidates anchored at `tree`; `emit` returns false to stop.
 * Returns false when the search should stop (emit refused or budget spent).
 */
export function candidatesForTree(
  tree: AnchorTree,
  request: CandidateRequest,
  inTreeRoots: Map<string, string>,
  budget: SearchBudget,
  emit: (candidate: AllocationRequest) => boolean,
  tracer?: SearchTracer,
): boolean {
  tracer?.saw(tree);
  if (tracer === undefined && !rootPasses(tree.root.traits, request)) return true;
  const groups = request.groups;
  const partsByGroup: GroupPart[][] = [];
  for (const [index, group] of groups.entries()) {
    tracer?.groupSteps[index]!.forEach((step, n) =>
      tracer.providersAfter(
        index,
        n,
        groupParts(step, tree, inTreeRoots, budget).flatMap((part) => part.providers),
      ),
    );
    const parts = groupParts(group, tree, inTreeRoots, budget);
    if (budget.exhausted) return false;
    if (parts.length === 0) return true;
    partsByGroup.push(parts);
  }

  // A tracer counts what isolation removes on whole placements instead.
  const isolate = request.groupPolicy === 'isolate' && tracer === undefined;
  const taken = new Map<string, number>();
  const isolated = new Set<string>();
  const providerOfRoot = new Map<string, string>();
  const chosen: GroupPart[] = [];

  const fits = (part: GroupPart) =>
    part.resources.every(({ provider, resourceClass, amount }) => {
      const total = (taken.get(`${provider} ${resourceClass}`) ?? 0) + amount;
      const { inventories, usages } = tree.providers.get(provider)!;
      const inventory = entryOf(inventories, resourceClass)!;
      return total <= freeCapacity(inventory, entryOf(usages, resourceClass) ?? 0) && total <= inventory.max_unit;
    });
  const oneProviderPerTree = (part: GroupPart) => {
    if (request.nestedAware) return true;
    const seen = new Map(providerOfRoot);
    return part.resources.every(({ provider }) => {
      const root = tree.providers.get(provider)!.rootUuid;
      const other = seen.get(root);
      seen.set(root, provider);
      return other === undefined || other === provider;
    });
  };

  const walk = (index: number): boolean => {
    if (!budget.spend()) return false;
    if (index === groups.length) {
      if (tracer !== undefined) {
        const failed = tracer.combining.findIndex((check) => !check.holds(tree, chosen));
        const candidate = consolidate(tree.root.uuid, groups, chosen);
        tracer.placement(candidate, failed === -1 ? tracer.combining.length : failed);
        return failed !== -1 || emit(candidate);
      }
      if (!request.sameSubtrees.every((suffixes) => sameSubtreeHolds(tree, suffixes, groups, chosen))) return true;
      return emit(consolidate(tree.root.uuid, groups, chosen));
    }
    const granular = !spreadsOverProviders(groups[index]!);
    for (const part of partsByGroup[index]!) {
      if (isolate && granular && isolated.has(part.providers[0]!)) continue;
      if (!fits(part) || !oneProviderPerTree(part)) continue;
      const rootsAdded: string[] = [];
      for (const { provider, resourceClass, amount } of part.resources) {
        const key = `${provider} ${resourceClass}`;
        taken.set(key, (taken.get(key) ?? 0) + amount);
        const root = tree.providers.get(provider)!.rootUuid;
        if (!providerOfRoot.has(root)) {
          providerOfRoot.set(root, provider);
          rootsAdded.push(root);
        }
      }
      if (isolate && granular) isolated.add(part.providers[0]!);
      chosen.push(part);
      const more = walk(index + 1);
      chosen.pop();
      if (isolate && granular) isolated.delete(part.providers[0]!);
      for (const root of rootsAdded) providerOfRoot.delete(root);
      for (const { provider, resourceClass, amount } of part.resources) {
        const key = `${provider} ${resourceClass}`;
        taken.set(key, taken.get(key)! - amount);
      }
      if (!more) return false;
    }
    return true;
  };
  return walk(0);
}

/** Whether the providers of the groups named in one same_subtree value all lie under one of them. */
export function sameSubtreeHolds(tree: AnchorTree, suffixes: string[], groups: RequestGroup[], chosen: GroupPart[]): boolean {
  const providers = [...new Set(groups.flatMap((group, n) => (suffixes.includes(group.suffix) ? chosen[n]!.providers : [])))];
  return providers.some((top) => providers.every((provider) => tree.isUnder(provider, top)));
}

/** One allocation request: amounts on the same provider and class added up. */
function consolidate(anchor: string, groups: RequestGroup[], chosen: GroupPart[]): AllocationRequest {
  const amounts = new Map<string, ResourceRequest>();
  // Keyed by the client's group suffixes, which may be "__proto__" or "constructor": a Map, then entries.
  const mappings = new Map<string, Set<string>>();
  chosen.forEach((part, n) => {
    for (const request of part.resources) {
      const key = `${request.provider} ${request.resourceClass}`;
      const existing = amounts.get(key);
      if (existing) existing.amount += request.amount;
      else amounts.set(key, { ...request });
    }
    const suffix = groups[n]!.suffix;
    mappings.set(suffix, new Set([...(mappings.get(suffix) ?? []), ...part.providers]));
  });
  return { anchor, resources: [...amounts.values()], mappings: Object.fromEntries([...mappings].map(([suffix, providers]) => [suffix, [...providers]])) };
}

/** Identity of a candidate, as upstream compares them: its resources and its mappings. */
export function candidateKey(candidate: AllocationRequest): string {
  const resources = candidate.resources.map((r) => `${r.provider}/${r.resourceClass}/${r.amount}`).sort();
  const mappings = Object.entries(candidate.mappings)
    .map(([suffix, providers]) => `${suffix}=${[...providers].sort().join('+')}`)
    .sort();
  return `${resources.join(',')}|${mappings.join(',')}`;
}
