/**
 * The explanation of a GET /allocation_candidates query ("No valid host",
 * explained): each constraint in the order the explanation applies it, with
 * what remains after it, and the first one after which nothing remained.
 *
 * The counts come from the search itself: this module turns the query into
 * steps (each group as it stands after each of its constraints, the
 * combining constraints as checks) and counts what the search reports
 * through the SearchTracer. Pure. docs/operators/explain.md says what each
 * count means.
 */
import type { Microversion } from '../api/microversion.js';
import type { QueryString } from '../api/query-string.js';
import {
  candidateKey,
  isolationHolds,
  type AnchorTree,
  rootPasses,
  sameSubtreeHolds,
  type AllocationRequest,
  type UnsatisfiedConstraint,
  type SearchTracer,
} from './allocation-candidates.js';
import type { CandidateRequest, RequestGroup } from './candidate-request.js';
import { parseInTree, parseMemberOfValue, parseResources, parseTraitValue } from './query-filters.js';

export interface ExplanationStep {
  /** `PARAM=ITEM`, as written in the query. */
  constraint: string;
  /** Null: not counted, the index entries having answered before any provider was read. */
  remaining: number | null;
}

export interface Explanation {
  /** The providers the search read, with the sharing providers the trees reach: where the counts start. */
  providers: number;
  /** The number of allocation requests GET /allocation_candidates answers for the query. */
  candidates: number;
  groups: { suffix: string; steps: ExplanationStep[] }[];
  combined: ExplanationStep[];
  /** The first constraint after which nothing remained; null when there are candidates. */
  emptiedBy: { suffix: string | null; constraint: string } | null;
}

interface GroupStep {
  constraint: string;
  /** The group with this constraint and the ones before it. */
  group: RequestGroup;
}

/** One comma-separated item of a trait list, except that an `in:` value is one item. */
const traitItems = (value: string) => (value.startsWith('in:') ? [value] : value.split(','));

/**
 * A group's steps: its resources, required traits, member_of and in_tree, in
 * that order, each item in the order written. Only the values the search
 * reads count (the last `resources`; before 1.39 the last `required`).
 */
function groupSteps(query: QueryString, version: Microversion, group: RequestGroup): GroupStep[] {
  const steps: GroupStep[] = [];
  let current: RequestGroup = { suffix: group.suffix, resources: {}, required: [], forbidden: [], memberOf: [], forbiddenAggregates: [] };
  const add = (constraint: string, change: Partial<RequestGroup>) => {
    current = { ...current, ...change };
    steps.push({ constraint, group: current });
  };
  const param = (name: string) => `${name}${group.suffix}`;
  const resources = query.all(param('resources')).at(-1);
  for (const item of resources === undefined ? [] : resources.split(',')) {
    add(`${param('resources')}=${item}`, { resources: { ...current.resources, ...parseResources(item) } });
  }
  const required = query.all(param('required'));
  for (const value of version.isBefore('1.39') ? required.slice(-1) : required) {
    for (const item of traitItems(value)) {
      const traits = parseTraitValue(item.trim(), true, true);
      add(`${param('required')}=${item}`, { required: [...current.required, ...traits.anyOf], forbidden: [...current.forbidden, ...traits.forbidden] });
    }
  }
  for (const value of query.all(param('member_of'))) {
    const aggregates = parseMemberOfValue(value);
    add(`${param('member_of')}=${value}`, {
      memberOf: [...current.memberOf, ...aggregates.anyOf],
      forbiddenAggregates: [...current.forbiddenAggregates, ...aggregates.forbidden],
    });
  }
  const inTree = query.all(param('in_tree')).at(-1);
  if (inTree !== undefined) add(`${param('in_tree')}=${inTree}`, { inTree: parseInTree(inTree) });
  return steps;
}

interface CombiningStep {
  constraint: string;
  holds: SearchTracer['combining'][number]['holds'];
}

/**
 * The constraints that combine the groups: group_policy first (written
 * `none` when the query leaves it out, as upstream reads it), which also
 * stands for the groups' amounts fitting together on the providers they
 * share; then each root_required trait; then each same_subtree value.
 */
function combiningSteps(query: QueryString, request: CandidateRequest): CombiningStep[] {
  const { groups } = request;
  const steps: CombiningStep[] = [
    {
      constraint: `group_policy=${query.all('group_policy')[0] ?? 'none'}`,
      holds: (_tree, chosen) => request.groupPolicy !== 'isolate' || isolationHolds(groups, chosen),
    },
  ];
  for (const item of query.all('root_required')[0]?.split(',') ?? []) {
    const trait = item.trim().replace(/^!+/, '');
    const root = item.trim().startsWith('!') ? { rootRequired: [], rootForbidden: [trait] } : { rootRequired: [trait], rootForbidden: [] };
    steps.push({ constraint: `root_required=${item}`, holds: (tree) => rootPasses(tree.root.traits, root) });
  }
  for (const [n, value] of query.all('same_subtree').entries()) {
    const suffixes = request.sameSubtrees[n]!;
    steps.push({ constraint: `same_subtree=${value}`, holds: (tree, chosen) => sameSubtreeHolds(tree, suffixes, groups, chosen) });
  }
  return steps;
}

/** Counts what the search reports, step by step; then says what it found. */
export class ExplanationTracer implements SearchTracer {
  readonly groupSteps: RequestGroup[][];
  readonly combining: CombiningStep[];
  private readonly labels: string[][];
  private readonly providers: Set<string>[][];
  private readonly placements: Set<string>[];
  private readonly limitLabel: string | undefined;

  /** `cap`: the most candidates a count keeps (PLACEMENT_MAX_ALLOCATION_CANDIDATES): a count at the cap means at least that many. */
  constructor(
    query: QueryString,
    version: Microversion,
    private readonly request: CandidateRequest,
    private readonly cap: number,
  ) {
    const steps = request.groups.map((group) => groupSteps(query, version, group));
    this.groupSteps = steps.map((group) => group.map((step) => step.group));
    this.labels = steps.map((group) => group.map((step) => step.constraint));
    this.providers = steps.map((group) => group.map(() => new Set<string>()));
    this.combining = combiningSteps(query, request);
    this.placements = this.combining.map(() => new Set<string>());
    this.limitLabel = query.all('limit')[0];
  }

  private readonly seen = new Set<string>();
  /** The step nothing satisfied, known before any tree was read: group and step, or the combining step. */
  private unsatisfied: { group: number; step: number } | { combining: number } | undefined;

  noneSatisfy(constraint: UnsatisfiedConstraint): void {
    if (constraint.group === null) {
      const label = `root_required=${constraint.rootTrait}`;
      this.unsatisfied = { combining: this.combining.findIndex((step) => step.constraint === label) };
      return;
    }
    const steps = this.groupSteps[constraint.group]!;
    const same = (of: string[]) => (list: string[]) => list.length === of.length && list.every((name) => of.includes(name));
    // The first step whose group has the class, the trait list, the tree or the aggregate list: the one that brought it in.
    const step = steps.findIndex((group) =>
      'resourceClass' in constraint
        ? group.resources[constraint.resourceClass] !== undefined
        : 'inTree' in constraint
          ? group.inTree === constraint.inTree
          : 'memberOf' in constraint
            ? group.memberOf.some(same(constraint.memberOf))
            : group.required.some(same(constraint.anyOf)),
    );
    this.unsatisfied = { group: constraint.group, step };
  }

  saw(tree: AnchorTree): void {
    for (const uuid of tree.providers.keys()) this.seen.add(uuid);
  }

  providersAfter(group: number, step: number, providers: string[]): void {
    const seen = this.providers[group]![step]!;
    for (const uuid of providers) seen.add(uuid);
  }

  placement(candidate: AllocationRequest, held: number): void {
    const key = candidateKey(candidate);
    for (const seen of this.placements.slice(0, held)) if (seen.size < this.cap) seen.add(key);
  }

  /** The explanation, given the candidates the search found (`found`, at most the cap). */
  explanation(found: number): Explanation {
    if (this.unsatisfied !== undefined) return this.unsatisfiedExplanation(this.unsatisfied);
    const { limit } = this.request;
    const groups = this.request.groups.map((group, g) => ({
      suffix: group.suffix,
      steps: this.labels[g]!.map((constraint, n) => ({ constraint, remaining: this.providers[g]![n]!.size })),
    }));
    const combined = this.combining.map(({ constraint }, n) => ({ constraint, remaining: this.placements[n]!.size }));
    const candidates = Math.min(found, limit ?? Infinity);
    if (this.limitLabel !== undefined) combined.push({ constraint: `limit=${this.limitLabel}`, remaining: candidates });
    const ordered = [
      ...groups.flatMap((group) => group.steps.map((step) => ({ suffix: group.suffix as string | null, ...step }))),
      ...combined.map((step) => ({ suffix: null, ...step })),
    ];
    const emptied = candidates === 0 ? ordered.find((step) => step.remaining === 0) : undefined;
    return {
      providers: this.seen.size,
      candidates,
      groups,
      combined,
      emptiedBy: emptied === undefined ? null : { suffix: emptied.suffix, constraint: emptied.constraint },
    };
  }

  /** Nothing read: the step nothing satisfied emptied it, the others were not counted. */
  private unsatisfiedExplanation(unsatisfied: { group: number; step: number } | { combining: number }): Explanation {
    const groups = this.request.groups.map((group, g) => ({
      suffix: group.suffix,
      steps: this.labels[g]!.map((constraint, n) => ({
        constraint,
        remaining: 'group' in unsatisfied && unsatisfied.group === g && unsatisfied.step === n ? 0 : null,
      })),
    }));
    const combined: ExplanationStep[] = this.combining.map(({ constraint }, n) => ({
      constraint,
      remaining: 'combining' in unsatisfied && unsatisfied.combining === n ? 0 : null,
    }));
    if (this.limitLabel !== undefined) combined.push({ constraint: `limit=${this.limitLabel}`, remaining: 0 });
    const emptiedBy =
      'group' in unsatisfied
        ? { suffix: groups[unsatisfied.group]!.suffix as string | null, constraint: groups[unsatisfied.group]!.steps[unsatisfied.step]!.constraint }
        : { suffix: null, constraint: combined[unsatisfied.combining]!.constraint };
    return { providers: 0, candidates: 0, groups, combined, emptiedBy };
  }
}
