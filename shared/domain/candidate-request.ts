/**
 * GET /allocation_candidates query strings parsed into request groups and
 * request-wide parameters, with upstream's rules and messages per
 * microversion. Pure: runs after the query schema has been checked.
 */
import { badRequest, ErrorCode } from '../api/errors.js';
import type { Microversion } from '../api/microversion.js';
import type { QueryString } from '../api/query-string.js';
import { pyRepr } from '../api/python-repr.js';
import type { Resources } from './model.js';
import { parseInTree, parseMemberOf, parseRequiredTraits, parseResources, parseTraitValue } from './query-filters.js';

export interface RequestGroup {
  /** '' for the unsuffixed group, whose resources may come from several providers. */
  suffix: string;
  resources: Resources;
  /** Each inner list is any-of; the lists are all-of. */
  required: string[][];
  forbidden: string[];
  /** Each inner list is any-of; the lists are all-of. */
  memberOf: string[][];
  forbiddenAggregates: string[];
  inTree?: string;
}

export interface CandidateRequest {
  /** In the order their first parameter appears in the query string. */
  groups: RequestGroup[];
  limit?: number;
  groupPolicy?: 'none' | 'isolate';
  /** root_required (1.35): traits the root of each candidate's tree must have, or lack. */
  rootRequired: string[];
  rootForbidden: string[];
  /** same_subtree (1.36): sets of group suffixes whose providers must share a subtree. */
  sameSubtrees: string[][];
  /** From 1.29 an allocation may use several providers of one tree. */
  nestedAware: boolean;
}

/** Request-group suffix before 1.33: a positive number. */
export const GROUP_PAT = '[1-9][0-9]*';
/** Request-group suffix from 1.33: 1-64 of letters, digits, "_" and "-". */
export const GROUP_PAT_1_33 = '[a-zA-Z0-9_-]{1,64}';

const GROUP_KEYS = ['resources', 'required', 'member_of', 'in_tree'] as const;

/** Whether the unsuffixed group's resources may be spread over providers (it is the only group that may). */
export const spreadsOverProviders = (group: RequestGroup): boolean => group.suffix === '';

function emptyGroup(suffix: string): RequestGroup {
  return { suffix, resources: {}, required: [], forbidden: [], memberOf: [], forbiddenAggregates: [] };
}

function parseGroups(query: QueryString, version: Microversion): Map<string, RequestGroup> {
  const suffixPattern = version.isAtLeast('1.33') ? GROUP_PAT_1_33 : GROUP_PAT;
  const keyPattern = new RegExp(`^(${GROUP_KEYS.join('|')})(${suffixPattern})?$`);
  const groups = new Map<string, RequestGroup>();
  for (const key of query.keys()) {
    const match = keyPattern.exec(key);
    if (!match) continue;
    const [, prefix, suffix = ''] = match;
    const group = groups.get(suffix) ?? emptyGroup(suffix);
    groups.set(suffix, group);
    if (prefix === 'resources') {
      // Every value is checked, the last one counts (webob's item order).
      for (const value of query.all(key)) group.resources = parseResources(value);
    } else if (prefix === 'required') {
      const traits = parseRequiredTraits(query, version, suffix)!;
      group.required = traits.anyOf;
      group.forbidden = traits.forbidden;
    } else if (prefix === 'member_of') {
      const aggregates = parseMemberOf(query, version, suffix)!;
      group.memberOf = aggregates.anyOf;
      group.forbiddenAggregates = aggregates.forbidden;
    } else {
      for (const value of query.all(key)) group.inTree = parseInTree(value);
    }
  }
  return groups;
}

const hasResources = (group: RequestGroup) => Object.keys(group.resources).length > 0;

/** 1.36+: resourceless groups are allowed, but only as members of a same_subtree. */
function checkSameSubtreeGroups(groups: Map<string, RequestGroup>, sameSubtrees: string[][]): void {
  const resourceless = [...groups.values()].filter((group) => !hasResources(group)).map((group) => group.suffix);
  if (resourceless.length === groups.size) {
    throw badRequest('There must be at least one resources or resources[$S] parameter.', ErrorCode.QUERYPARAM_MISSING_VALUE);
  }
  const inSubtrees = new Set(sameSubtrees.flat());
  const loose = resourceless.filter((suffix) => !inSubtrees.has(suffix));
  if (loose.length > 0) {
    throw badRequest(
      `Resourceless suffixed group request should be specified in \`same_subtree\` query param: bad group(s) - ${pyRepr(loose)}.`,
      ErrorCode.QUERYPARAM_BAD_VALUE,
    );
  }
  const unknown = [...inSubtrees].filter((suffix) => !groups.has(suffix));
  if (unknown.length > 0) {
    throw badRequest(
      `Real suffixes should be specified in \`same_subtree\`: ${pyRepr(unknown)} not found in ${pyRepr([...groups.keys()])}.`,
      ErrorCode.QUERYPARAM_BAD_VALUE,
    );
  }
}

/** Before 1.36 every group needs resources. */
function checkOrphans(groups: Map<string, RequestGroup>): void {
  const all = [...groups.values()];
  const orphanTraits = all.filter((group) => group.required.length > 0 && !hasResources(group));
  if (orphanTraits.length > 0) {
    const keys = orphanTraits.map((group) => `required${group.suffix}`).join(', ');
    throw badRequest(`All traits parameters must be associated with resources.  Found the following orphaned traits keys: ${keys}`);
  }
  const orphanAggregates = all.filter((group) => !hasResources(group) && (group.memberOf.length > 0 || group.forbiddenAggregates.length > 0));
  if (orphanAggregates.length > 0) {
    const keys = orphanAggregates.map((group) => `member_of${group.suffix}`).join(', ');
    throw badRequest(`All member_of parameters must be associated with resources. Found the following orphaned member_of keys: ${keys}`);
  }
  if (!all.every(hasResources)) throw badRequest('All request groups must specify resources.');
  if (all.length === 0) throw badRequest('At least one request group (`resources` or `resources{$S}`) is required.');
}

function checkConflictingTraits(groups: Map<string, RequestGroup>): void {
  const conflicts: string[] = [];
  for (const group of groups.values()) {
    const forbidden = new Set(group.forbidden);
    for (const anyOf of group.required) {
      if (anyOf.every((trait) => forbidden.has(trait))) conflicts.push(`required${group.suffix}: (${[...anyOf].sort().join(', ')})`);
    }
  }
  if (conflicts.length > 0) {
    throw badRequest(`Conflicting required and forbidden traits found in the following traits keys: ${conflicts.sort().join(', ')}`);
  }
}

/** root_required: one value, a flat list of traits, `!` forbids (no `in:`). */
function parseRootRequired(query: QueryString): { required: string[]; forbidden: string[] } {
  const values = query.all('root_required');
  if (values.length === 0) return { required: [], forbidden: [] };
  if (values.length > 1) {
    throw badRequest("Query parameter 'root_required' may be specified only once.", ErrorCode.ILLEGAL_DUPLICATE_QUERYPARAM);
  }
  const traits = parseTraitValue(values[0]!, true, false);
  const required = [...new Set(traits.anyOf.flat())];
  const forbidden = [...new Set(traits.forbidden)];
  const conflicts = forbidden.filter((trait) => required.includes(trait));
  if (conflicts.length > 0) {
    throw badRequest(`Conflicting required and forbidden traits found in root_required: ${conflicts.join(', ')}`, ErrorCode.QUERYPARAM_BAD_VALUE);
  }
  return { required, forbidden };
}

function parseSameSubtrees(query: QueryString): string[][] {
  return query.all('same_subtree').map((value) => {
    const suffixes = [...new Set(value.split(',').map((suffix) => suffix.trim()))];
    if (suffixes.includes('')) {
      throw badRequest('Empty string (unsuffixed group) can not be specified in `same_subtree` ', ErrorCode.QUERYPARAM_BAD_VALUE);
    }
    return suffixes;
  });
}

/** The whole request, validated in upstream's order so the first problem reported is the same. */
export function parseCandidateRequest(query: QueryString, version: Microversion): CandidateRequest {
  const limitText = query.all('limit')[0];
  const groupPolicy = query.all('group_policy')[0] as CandidateRequest['groupPolicy'];
  const root = parseRootRequired(query);
  const sameSubtrees = parseSameSubtrees(query);
  const groups = parseGroups(query, version);
  if (version.isAtLeast('1.36')) checkSameSubtreeGroups(groups, sameSubtrees);
  else checkOrphans(groups);
  if (version.isAtLeast('1.22')) checkConflictingTraits(groups);
  if (groupPolicy === undefined && [...groups.values()].filter((group) => !spreadsOverProviders(group)).length > 1) {
    throw badRequest('The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.');
  }
  return {
    groups: [...groups.values()],
    limit: limitText === undefined ? undefined : Number(limitText),
    groupPolicy,
    rootRequired: root.required,
    rootForbidden: root.forbidden,
    sameSubtrees,
    nestedAware: version.isAtLeast('1.29'),
  };
}
