/**
 * Where upstream Placement 8.0 is plainly wrong and this service deliberately
 * answers otherwise (docs/compatibility.md). Each fault is
 * recognised narrowly, from the request and upstream's answer, and this
 * service's answer is then checked against what is right instead of against
 * upstream's: the run reports these as tolerated, never as passed unseen.
 */
import { canonical, compareNormalised, providersOf, type Normalised } from './compare.js';
import type { DiffRequest } from './scenario.js';
import { SHARING_TRAIT } from '../../shared/domain/standard-catalog.js';

export interface UpstreamFault {
  name: string;
  /** True when upstream's answer to this request shows the fault. */
  applies(request: DiffRequest, reference: Normalised): boolean;
  /**
   * The differences left once the fault is allowed for (empty: the target is
   * right). `asked` is upstream's answer to `ask`'s request, when the fault has one.
   */
  compare(request: DiffRequest, reference: Normalised, target: Normalised, asked?: Normalised): string[];
  /** A request whose answer from upstream is what the target should have answered (sent only when the fault applies). */
  ask?(request: DiffRequest): DiffRequest;
  /** True when `compare` holds for candidates cut by `limit` too: it does not compare the target's candidates with upstream's. */
  limitedToo?: boolean;
}

type ErrorBody = { errors: { detail: string }[] };

/**
 * A duplicate inventory (POST .../inventories for a class the provider has)
 * is a 409 whose detail is the text of the database's integrity error,
 * SQL statement included: it depends on upstream's database driver, so only
 * status, title and code are compared.
 */
const databaseErrorText: UpstreamFault = {
  name: 'database error text in a 409',
  applies: (_request, reference) =>
    reference.status === 409 && /IntegrityError|\[SQL: /.test((reference.body as ErrorBody | undefined)?.errors?.[0]?.detail ?? ''),
  compare: (_request, reference, target) => {
    const withoutDetail = (answer: Normalised): Normalised => {
      const body = answer.body as ErrorBody | undefined;
      if (!body?.errors) return answer;
      return { ...answer, body: { errors: body.errors.map(({ detail: _detail, ...rest }) => rest) } };
    };
    return compareNormalised(withoutDetail(reference), withoutDetail(target));
  },
};

/** Resource class to the amounts the groups of a candidates query ask for, one per group. */
function requestedAmounts(request: DiffRequest): Map<string, number[]> {
  const amounts = new Map<string, number[]>();
  const query = new URLSearchParams(request.path.split('?')[1] ?? '');
  for (const [name, value] of query) {
    if (!/^resources[0-9A-Za-z_-]*$/.test(name)) continue;
    // A class named twice in one group: upstream keeps the last amount.
    const group = new Map(value.split(',').map((item) => item.split(':') as [string, string]));
    for (const [resourceClass, amount] of group) amounts.set(resourceClass, [...(amounts.get(resourceClass) ?? []), Number(amount)]);
  }
  return amounts;
}

const requestedTotals = (request: DiffRequest) =>
  new Map([...requestedAmounts(request)].map(([resourceClass, list]) => [resourceClass, list.reduce((a, b) => a + b, 0)]));

/** The minor microversion a request asks for (`latest` is 1.39), undefined when the header is not plainly `1.N`. */
function minorVersion(request: DiffRequest): number | undefined {
  if (request.version === 'latest') return 39;
  const match = /^1\.(\d+)$/.exec(request.version ?? '');
  return match ? Number(match[1]) : undefined;
}

type Candidate = { allocations: Record<string, { resources: Record<string, number> }>; mappings?: Record<string, string[]> };
type Summaries = Record<string, { root_provider_uuid?: string; parent_provider_uuid?: string | null; traits?: string[] }>;
type CandidatesBody = { allocation_requests?: Candidate[]; provider_summaries?: Summaries };

/** A candidate with its amounts left out: which providers give which classes, and the mappings. */
const shape = (candidate: Candidate) =>
  canonical({
    allocations: Object.fromEntries(Object.entries(candidate.allocations).map(([uuid, item]) => [uuid, Object.keys(item.resources).sort()])),
    mappings: candidate.mappings,
  });

/** Whether the numbered groups of a candidate each use a provider of their own (group_policy=isolate). */
function isolated(candidate: Candidate): boolean {
  const numbered = Object.entries(candidate.mappings ?? {}).filter(([suffix]) => suffix !== '');
  return new Set(numbered.map(([, providers]) => providers[0])).size === numbered.length;
}

/**
 * When several request groups ask for the same class and group_policy is
 * not `none`, upstream adds the groups' amounts into objects that later
 * candidates share: a candidate can ask for more than was requested (VCPU:6
 * for `resources=VCPU:2&resources1=VCPU:2`), and the capacity check of each
 * later candidate runs on amounts inflated by earlier ones, so right
 * candidates are dropped (by max_unit or capacity) without any inflated one
 * showing. nova claims the amounts it is given, so this service keeps them
 * right. With `group_policy=none` upstream copies those objects, so its
 * answer to that request, filtered for isolate by the mappings (asked at
 * 1.34 at least, where mappings appear), is what the target must answer.
 * Before 1.29 the summaries and candidates differ too much from 1.34 for
 * that; there, only a visibly inflated answer is allowed for, and loosely:
 * the target's candidates must ask for exactly the requested totals and
 * include every shape of upstream's.
 */
const mergedGroupAmounts: UpstreamFault = {
  name: 'amounts of groups merged into shared objects',
  applies: (request, reference) => {
    if (request.method !== 'GET' || !request.path.startsWith('/allocation_candidates?') || reference.status !== 200) return false;
    const minor = minorVersion(request);
    if (minor === undefined || /[?&]group_policy=none(&|$)/.test(request.path)) return false;
    if (![...requestedAmounts(request).values()].some((list) => list.length > 1)) return false;
    if (minor >= 29) return true;
    const totals = requestedTotals(request);
    return ((reference.body as CandidatesBody).allocation_requests ?? []).some((candidate) => !asksForTotals(candidate, totals));
  },
  ask: (request) => {
    // The rest of the query is sent as written.
    const isolate = /[?&]group_policy=isolate(&|$)/.test(request.path);
    const path = /[?&]group_policy=/.test(request.path) ? request.path.replace(/([?&]group_policy=)[^&]*/g, '$1none') : `${request.path}&group_policy=none`;
    const minor = minorVersion(request)!;
    return { ...request, path, version: isolate && minor >= 29 && minor < 34 ? '1.34' : request.version };
  },
  compare: (request, reference, target, asked) => {
    if (minorVersion(request)! < 29) return visiblyInflated(request, reference, target);
    if (!asked) return ['no answer from upstream with group_policy=none'];
    const body = asked.body as CandidatesBody;
    const isolate = /[?&]group_policy=isolate(&|$)/.test(request.path);
    const kept = (body.allocation_requests ?? []).filter((candidate) => !isolate || isolated(candidate));
    const roots = new Set(kept.flatMap((candidate) => providersOf(candidate).map((uuid) => body.provider_summaries?.[uuid]?.root_provider_uuid ?? uuid)));
    // The headers of upstream's answer to the request itself (the one asked may be at 1.34).
    const expected: Normalised = {
      ...asked,
      headers: reference.headers,
      body: {
        allocation_requests: minorVersion(request)! < 34 ? kept.map(({ mappings: _mappings, ...rest }) => rest) : kept,
        provider_summaries: Object.fromEntries(
          Object.entries(body.provider_summaries ?? {}).filter(([, summary]) => roots.has(summary.root_provider_uuid ?? '')),
        ),
      },
    };
    // Upstream's answer with group_policy=none still has its other fault, the unnamed group's sharing candidates under one tree.
    const differences = compareNormalised(expected, target);
    return differences.length > 0 && sharingUnderOneTree.applies(request, expected) ? sharingUnderOneTree.compare(request, expected, target) : differences;
  },
};

function visiblyInflated(request: DiffRequest, reference: Normalised, target: Normalised): string[] {
  const totals = requestedTotals(request);
  const ours = (target.body as CandidatesBody).allocation_requests ?? [];
  const theirs = (reference.body as CandidatesBody).allocation_requests ?? [];
  const problems: string[] = [];
  for (const candidate of ours)
    if (!asksForTotals(candidate, totals)) problems.push(`target candidate does not ask for the requested amounts: ${canonical(candidate)}`);
  const ourShapes = new Set(ours.map(shape));
  for (const candidate of theirs) if (!ourShapes.has(shape(candidate))) problems.push(`only reference has a candidate shaped ${shape(candidate)}`);
  const rest = (answer: Normalised): Normalised => ({ ...answer, body: { ...(answer.body as object), allocation_requests: undefined } });
  return [...problems, ...compareNormalised(rest(reference), rest(target))];
}

function asksForTotals(candidate: Candidate, totals: ReadonlyMap<string, number>): boolean {
  const asked = new Map<string, number>();
  for (const item of Object.values(candidate.allocations)) {
    for (const [resourceClass, amount] of Object.entries(item.resources)) asked.set(resourceClass, (asked.get(resourceClass) ?? 0) + amount);
  }
  return asked.size === totals.size && [...totals].every(([resourceClass, total]) => asked.get(resourceClass) === total);
}

/**
 * An integer past SQLite's 64 bits in a query (`resources=VCPU:100000000000000000000`)
 * is a 500 upstream; here no provider has that much, so the answer is an
 * empty list. Allowed for: the target must answer without a server error.
 */
const integerTooLargeForDatabase: UpstreamFault = {
  name: '500 for an integer its database cannot store',
  limitedToo: true,
  applies: (_request, reference) =>
    reference.status === 500 && /too large to convert to SQLite INTEGER/.test((reference.body as ErrorBody | undefined)?.errors?.[0]?.detail ?? ''),
  compare: (_request, _reference, target) => (target.status < 500 ? [] : [`target answered ${target.status}`]),
};

/**
 * A sharing provider (MISC_SHARES_VIA_AGGREGATE) with a parent: upstream
 * takes every sharing provider for a tree root and, when such a provider's
 * resources combine with another tree's, looks up a summary only roots have:
 * a 500 whose detail is the KeyError's internal row id. Here it shares as a
 * root would. Allowed for: the target must answer 200, every candidate
 * asking for exactly the requested amounts, or the 400 for an unknown name
 * that upstream would have reached after the group it failed on.
 */
const nestedSharingProvider: UpstreamFault = {
  name: '500 for a sharing provider with a parent',
  limitedToo: true,
  applies: (request, reference) =>
    request.method === 'GET' &&
    request.path.startsWith('/allocation_candidates?') &&
    reference.status === 500 &&
    /\n\n \d+\s*$/.test((reference.body as ErrorBody | undefined)?.errors?.[0]?.detail ?? ''),
  compare: (request, _reference, target) => {
    const unknownName = /No such (resource class|trait)/.test((target.body as ErrorBody | undefined)?.errors?.[0]?.detail ?? '');
    if (target.status === 400 && unknownName) return [];
    if (target.status !== 200) return [`target answered ${target.status}`];
    const totals = requestedTotals(request);
    return ((target.body as CandidatesBody).allocation_requests ?? [])
      .filter((candidate) => !asksForTotals(candidate, totals))
      .map((candidate) => `target candidate does not ask for the requested amounts: ${canonical(candidate)}`);
  },
};

const UPPER_CASE_UUID = /[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/;

/**
 * uuids are compared as written on the reference's SQLite, ignoring case on
 * upstream's MySQL deployments and here (docs/operators/limits.md, "Hostile input"):
 * a GET naming a known provider or consumer in upper case is a 404 or an
 * empty list on the reference only. Allowed for: the target must answer what
 * upstream answers to the same GET with its uuids in lower case.
 */
const uuidCase: UpstreamFault = {
  name: 'case-sensitive uuids of its SQLite database',
  applies: (request) => request.method === 'GET' && UPPER_CASE_UUID.test(request.path),
  ask: (request) => ({ ...request, path: request.path.replace(new RegExp(UPPER_CASE_UUID, 'g'), (uuid) => uuid.toLowerCase()) }),
  compare: (_request, _reference, target, asked) => (asked ? compareNormalised(asked, target) : ['no lower-case answer from upstream']),
};

const NO_SUCH_TRAIT = /No such trait\(s\): ([A-Za-z0-9_]+)\./;

/** The sets of traits of a request whose order upstream does not keep: each `in:` list, each group's forbidden traits, root_required's required and forbidden ones. */
function unorderedTraitSets(request: DiffRequest): string[][] {
  const query = new URLSearchParams(request.path.split('?')[1] ?? '');
  const sets: string[][] = [];
  const forbidden = new Map<string, string[]>();
  for (const [name, value] of query) {
    if (!/^(root_)?required[0-9A-Za-z_-]*$/.test(name)) continue;
    if (value.startsWith('in:')) sets.push(value.slice(3).split(','));
    else
      for (const trait of value.split(',')) {
        const key = trait.startsWith('!') ? `!${name}` : name === 'root_required' ? name : undefined;
        if (key !== undefined) forbidden.set(key, [...(forbidden.get(key) ?? []), trait.replace(/^!/, '')]);
      }
  }
  return [...sets, ...forbidden.values()];
}

/**
 * Several unknown traits of one set (`required=in:A,B`, `required=!A,!B`):
 * upstream names the first it meets in a Python set of strings, whose order
 * changes with each process's hash seed. Allowed for: the target may name
 * any unknown trait of the same set; the rest of the answer must be equal.
 */
const unknownTraitOfASet: UpstreamFault = {
  name: 'choice of one unknown trait among a set (Python set order)',
  limitedToo: true,
  applies: (_request, reference) => reference.status === 400 && NO_SUCH_TRAIT.test(JSON.stringify(reference.body ?? '')),
  compare: (request, reference, target) => {
    const theirs = NO_SUCH_TRAIT.exec(JSON.stringify(reference.body ?? ''))?.[1];
    const ours = NO_SUCH_TRAIT.exec(JSON.stringify(target.body ?? ''))?.[1];
    const sameSet = ours !== undefined && unorderedTraitSets(request).some((set) => set.includes(theirs!) && set.includes(ours));
    const renamed = sameSet ? { ...target, body: JSON.parse(JSON.stringify(target.body).split(ours).join(theirs!)) as unknown } : target;
    return compareNormalised(reference, renamed);
  },
};

/**
 * The unnamed group of a candidates request with granular groups too: upstream
 * builds the unnamed group's candidates tree by tree, a sharing provider's
 * under every tree it serves, then keeps them in a Python set whose equality
 * ignores the tree, so a candidate that uses only sharing providers stays
 * under one tree, picked by the order of a set of its internal row ids: the
 * combinations with the other groups under every other tree are lost
 * (`resources=DISK_GB:10&resources1=VCPU:2` with a shared disk: only the
 * hosts holding their own disk, or one host the shared disk serves). No other
 * implementation can reproduce that choice; this service keeps every tree.
 * Allowed for: each of upstream's candidates must be among the target's, each
 * of the target's others must take the unnamed group from sharing providers
 * only (the only candidates upstream builds under several trees) where
 * mappings say (1.34), or else use providers of more than one tree, and the
 * summaries upstream gives must be equal.
 */
const sharingUnderOneTree: UpstreamFault = {
  name: "unnamed group's sharing candidates kept under one tree",
  applies: (request, reference) => {
    if (request.method !== 'GET' || !request.path.startsWith('/allocation_candidates?') || reference.status !== 200) return false;
    const names = [...new URLSearchParams(request.path.split('?')[1]).keys()];
    return names.includes('resources') && names.some((name) => /^resources[0-9A-Za-z_-]+$/.test(name));
  },
  compare: (_request, reference, target) => {
    const theirs = reference.body as CandidatesBody;
    const ours = target.body as CandidatesBody;
    const problems: string[] = [];
    // Before 1.34 two candidates can print alike (their mappings differ): each counts.
    const ourCandidates = (ours.allocation_requests ?? []).map((candidate) => ({ text: canonical(candidate), candidate }));
    for (const candidate of theirs.allocation_requests ?? []) {
      const text = canonical(candidate);
      const at = ourCandidates.findIndex((entry) => entry.text === text);
      if (at === -1) problems.push(`only reference has ${text}`);
      else ourCandidates.splice(at, 1);
    }
    const summaries = ours.provider_summaries ?? {};
    // A sharing provider with a parent is in its own tree too, where upstream does not use it (see nestedSharingProvider).
    const sharing = (uuid: string) => (summaries[uuid]?.traits ?? []).includes(SHARING_TRAIT);
    const nestedSharing = (uuid: string) => summaries[uuid]?.parent_provider_uuid != null && sharing(uuid);
    for (const { text, candidate } of ourCandidates) {
      const providers = providersOf(candidate);
      const roots = new Set(providers.map((uuid) => summaries[uuid]?.root_provider_uuid ?? uuid));
      const nested = providers.some(nestedSharing);
      // With mappings, the unnamed group's own providers: a sharing root's tree may hold the other groups' providers too.
      const unnamed = candidate.mappings?.[''];
      if (providers.length < 2 || (roots.size < 2 && unnamed === undefined && !nested))
        problems.push(`only target has ${text}, which uses no sharing provider`);
      else if (unnamed !== undefined && !nested && !unnamed.every(sharing))
        problems.push(`only target has ${text}, whose unnamed group uses a provider that does not share`);
    }
    const kept = Object.fromEntries(Object.keys(theirs.provider_summaries ?? {}).map((uuid) => [uuid, summaries[uuid]]));
    const rest = (answer: Normalised, body: object): Normalised => ({ ...answer, body });
    return [
      ...problems,
      ...compareNormalised(
        rest(reference, { ...theirs, allocation_requests: undefined }),
        rest(target, { ...ours, allocation_requests: undefined, provider_summaries: kept }),
      ),
    ];
  },
};

/**
 * Upstream creates a claim's new consumer before it checks the rest of the
 * claim, and a claim it then refuses (a provider that does not exist) leaves
 * the consumer behind: generation 0, no allocations, invisible to every read
 * and removed by no request (a claim of nothing at generation 0 answers 204
 * and keeps it). The next claim for that uuid with `consumer_generation: null`
 * is a 409 "expected 0 but got None"; this service wrote nothing for the
 * refused claim and takes it as a new consumer's. Only such a consumer is at
 * generation 0 (one that holds allocations is at 1 or more). Allowed for: the
 * target must answer what upstream answers to the same claim at generation 0
 * (which also brings the two states together again).
 */
const consumerLeftByRefusedClaim: UpstreamFault = {
  name: 'consumer left behind by a refused claim',
  applies: (request, reference) =>
    request.method === 'PUT' &&
    request.path.startsWith('/allocations/') &&
    (request.json as { consumer_generation?: unknown } | undefined)?.consumer_generation === null &&
    reference.status === 409 &&
    /consumer generation conflict - expected 0 but got None/.test((reference.body as ErrorBody | undefined)?.errors?.[0]?.detail ?? ''),
  ask: (request) => ({ ...request, json: { ...(request.json as object), consumer_generation: 0 } }),
  compare: (_request, _reference, target, asked) => (asked ? compareNormalised(asked, target) : ['no answer from upstream at generation 0']),
};

export const UPSTREAM_FAULTS: readonly UpstreamFault[] = [
  consumerLeftByRefusedClaim,
  databaseErrorText,
  mergedGroupAmounts,
  integerTooLargeForDatabase,
  nestedSharingProvider,
  uuidCase,
  unknownTraitOfASet,
  sharingUnderOneTree,
];

/**
 * The consumers a request may create. A new consumer whose claim asks for
 * nothing (an empty entry of POST /allocations) is kept by both services, and
 * seeded runs reuse their uuids: the run sends each a claim of nothing at
 * generation 0 at its end. That removes them from this service; upstream keeps
 * them whatever is sent, as it keeps those of its refused claims
 * (consumerLeftByRefusedClaim allows for both).
 */
export function consumersLeftBehind(request: DiffRequest): string[] {
  const body = (request.json ?? {}) as Record<string, unknown>;
  if (request.method === 'PUT' && request.path.startsWith('/allocations/')) return [request.path.split('/')[2]];
  if (request.method === 'POST' && request.path === '/allocations') return Object.keys(body);
  if (request.method === 'POST' && request.path === '/reshaper') return Object.keys((body.allocations ?? {}) as object);
  return [];
}

export const removeLeftBehindConsumer = (consumer: string): DiffRequest => ({
  method: 'PUT',
  path: `/allocations/${consumer}`,
  version: '1.28',
  json: { allocations: {}, project_id: 'difftest', user_id: 'difftest', consumer_generation: 0 },
});
