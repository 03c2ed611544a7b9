import { describe, expect, it } from 'vitest';
import { AnchorTree, candidateKey, candidatesForTree, SearchBudget, type AllocationRequest } from '../../../shared/domain/allocation-candidates.js';
import { SHARING_TRAIT } from '../../../shared/domain/standard-catalog.js';
import { parseCandidateRequest, type CandidateRequest } from '../../../shared/domain/candidate-request.js';
import type { Provider } from '../../../shared/domain/model.js';
import { Microversion } from '../../../shared/api/microversion.js';
import { QueryString } from '../../../shared/api/query-string.js';
import { walkFilter } from '../../../shared/search/candidate-search.js';
import { errorOf } from '../../support/errors.js';
import { inventory, makeProvider } from '../../support/fixtures.js';

const provider = makeProvider;

const child = (uuid: string, parent: string, root: string, options: Partial<Provider> = {}) =>
  provider(uuid, { parentUuid: parent, rootUuid: root, ...options });

function parse(query: string, version = '1.39'): CandidateRequest {
  return parseCandidateRequest(QueryString.parse(query), Microversion.parse(version));
}

interface CandidateOptions {
  sharing?: Provider[];
  version?: string;
  maxSteps?: number;
  wanted?: number;
  pastDeadline?: () => boolean;
}

function candidates(members: Provider[], query: string, options: CandidateOptions = {}) {
  const found: AllocationRequest[] = [];
  const wanted = options.wanted ?? Infinity;
  const completed = candidatesForTree(
    new AnchorTree(members, options.sharing ?? []),
    parse(query, options.version),
    new Map(),
    new SearchBudget(options.maxSteps ?? 1_000_000, options.pastDeadline),
    (candidate) => {
      found.push(candidate);
      return found.length < wanted;
    },
  );
  return { found, completed };
}

const allocations = (candidate: AllocationRequest) => Object.fromEntries(candidate.resources.map((r) => [`${r.provider}:${r.resourceClass}`, r.amount]));

describe('parseCandidateRequest', () => {
  it('groups suffixed parameters and keeps query order', () => {
    const request = parse('resources=VCPU:1&resources_NET=SRIOV_NET_VF:2&required_NET=CUSTOM_A&group_policy=isolate&limit=5');
    expect(request.groups.map((group) => group.suffix)).toEqual(['', '_NET']);
    expect(request.groups[1]).toMatchObject({ resources: { SRIOV_NET_VF: 2 }, required: [['CUSTOM_A']] });
    expect(request).toMatchObject({ limit: 5, groupPolicy: 'isolate', nestedAware: true });
  });

  it('requires group_policy with two suffixed groups', () => {
    const error = errorOf(() => parse('resources1=VCPU:1&resources2=VCPU:1', '1.25'));
    expect(error.message).toBe('The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.');
  });

  it('reports orphaned traits before 1.36 and loose resourceless groups from 1.36', () => {
    expect(errorOf(() => parse('resources=VCPU:1&required1=CUSTOM_A', '1.35')).message).toContain('orphaned traits keys: required1');
    expect(errorOf(() => parse('resources=VCPU:1&required1=CUSTOM_A', '1.36')).message).toBe(
      "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - ['1'].",
    );
  });

  it('refuses a trait both required and forbidden, and conflicting root_required', () => {
    expect(errorOf(() => parse('resources=VCPU:1&required=CUSTOM_A,!CUSTOM_A')).message).toBe(
      'Conflicting required and forbidden traits found in the following traits keys: required: (CUSTOM_A)',
    );
    expect(errorOf(() => parse('resources=VCPU:1&root_required=CUSTOM_A,!CUSTOM_A')).message).toBe(
      'Conflicting required and forbidden traits found in root_required: CUSTOM_A',
    );
  });
});

describe('candidatesForTree', () => {
  const root = 'root';
  const numaTree = () => [
    provider(root, { inventories: { VCPU: inventory(8) }, children: ['pf1', 'pf2'], traits: ['HW_CPU_X86_AVX'] }),
    child('pf1', root, root, { inventories: { SRIOV_NET_VF: inventory(4) }, traits: ['CUSTOM_PHYSNET_A'] }),
    child('pf2', root, root, { inventories: { SRIOV_NET_VF: inventory(4) }, traits: ['CUSTOM_PHYSNET_B'] }),
  ];

  it('spreads the unsuffixed group over the tree from 1.29, never before', () => {
    expect(candidates(numaTree(), 'resources=VCPU:1,SRIOV_NET_VF:4').found.map(allocations)).toEqual([
      { 'root:VCPU': 1, 'pf1:SRIOV_NET_VF': 4 },
      { 'root:VCPU': 1, 'pf2:SRIOV_NET_VF': 4 },
    ]);
    expect(candidates(numaTree(), 'resources=VCPU:1,SRIOV_NET_VF:4', { version: '1.28' }).found).toEqual([]);
  });

  it('holds required traits together in the unsuffixed group and alone in a suffixed one', () => {
    const together = candidates(numaTree(), 'resources=VCPU:1,SRIOV_NET_VF:1&required=HW_CPU_X86_AVX,CUSTOM_PHYSNET_B').found;
    expect(together.map(allocations)).toEqual([{ 'root:VCPU': 1, 'pf2:SRIOV_NET_VF': 1 }]);
    const alone = candidates(numaTree(), 'resources=VCPU:1&resources1=SRIOV_NET_VF:1&required1=HW_CPU_X86_AVX').found;
    expect(alone).toEqual([]);
  });

  it('adds up what several groups put on one provider and checks the sum', () => {
    const both = candidates(numaTree(), 'resources1=SRIOV_NET_VF:3&resources2=SRIOV_NET_VF:1&group_policy=none').found;
    expect(both.map(allocations)).toContainEqual({ 'pf1:SRIOV_NET_VF': 4 });
    const tooMuch = candidates(numaTree(), 'resources1=SRIOV_NET_VF:3&resources2=SRIOV_NET_VF:2&group_policy=none').found;
    expect(tooMuch.map(allocations)).toEqual([
      { 'pf1:SRIOV_NET_VF': 3, 'pf2:SRIOV_NET_VF': 2 },
      { 'pf2:SRIOV_NET_VF': 3, 'pf1:SRIOV_NET_VF': 2 },
    ]);
  });

  it('gives each suffixed group its own provider under isolate', () => {
    const isolated = candidates(numaTree(), 'resources1=SRIOV_NET_VF:1&resources2=SRIOV_NET_VF:1&group_policy=isolate').found;
    expect(isolated.map((candidate) => candidate.mappings)).toEqual([
      { '1': ['pf1'], '2': ['pf2'] },
      { '1': ['pf2'], '2': ['pf1'] },
    ]);
  });

  it('maps groups whose suffixes are names every object has', () => {
    const found = candidates(numaTree(), 'resources__proto__=SRIOV_NET_VF:1&resourcesconstructor=SRIOV_NET_VF:1&group_policy=isolate').found;
    expect(found).toHaveLength(2);
    expect(Object.keys(found[0]!.mappings)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(found[0]!.mappings))).toEqual(JSON.parse('{"__proto__": ["pf1"], "constructor": ["pf2"]}'));
  });

  it('takes a class from a sharing provider that shares an aggregate with the tree', () => {
    const compute = provider('cn', { inventories: { VCPU: inventory(4) }, aggregates: ['agg'] });
    const storage = provider('ss', { inventories: { DISK_GB: inventory(100) }, aggregates: ['agg'], traits: [SHARING_TRAIT] });
    const unrelated = provider('ss2', { inventories: { DISK_GB: inventory(100) }, aggregates: ['other'], traits: [SHARING_TRAIT] });
    const found = candidates([compute], 'resources=VCPU:1,DISK_GB:10', { sharing: [storage, unrelated] }).found;
    expect(found.map(allocations)).toEqual([{ 'cn:VCPU': 1, 'ss:DISK_GB': 10 }]);
    expect(found[0]!.anchor).toBe('cn');
  });

  it('keeps same_subtree groups under one of their providers', () => {
    const tree = [
      provider(root, { children: ['numa0', 'numa1'] }),
      child('numa0', root, root, { inventories: { VCPU: inventory(4) }, children: ['nic0'] }),
      child('numa1', root, root, { inventories: { VCPU: inventory(4) }, children: ['nic1'] }),
      child('nic0', 'numa0', root, { inventories: { SRIOV_NET_VF: inventory(2) } }),
      child('nic1', 'numa1', root, { inventories: { SRIOV_NET_VF: inventory(2) } }),
    ];
    const found = candidates(tree, 'resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1&same_subtree=_CPU,_NET&group_policy=none').found;
    expect(found.map((candidate) => candidate.mappings)).toEqual([
      { _CPU: ['numa0'], _NET: ['nic0'] },
      { _CPU: ['numa1'], _NET: ['nic1'] },
    ]);
  });

  it('filters the anchor by its root traits', () => {
    expect(candidates(numaTree(), 'resources=VCPU:1&root_required=!HW_CPU_X86_AVX').found).toEqual([]);
    expect(candidates(numaTree(), 'resources=VCPU:1&root_required=HW_CPU_X86_AVX').found).toHaveLength(1);
  });

  describe('a wide tree: 8 single-unit children, 8 single-unit groups, isolate', () => {
    const wide = [
      provider(root, { children: Array.from({ length: 8 }, (_, n) => `c${n}`) }),
      ...Array.from({ length: 8 }, (_, n) => child(`c${n}`, root, root, { inventories: { CUSTOM_UNIT: inventory(1) } })),
    ];
    const query = `${Array.from({ length: 8 }, (_, n) => `resources${n + 1}=CUSTOM_UNIT:1`).join('&')}&group_policy=isolate`;

    it('finds every one of the 8! placements, each valid', () => {
      const { found, completed } = candidates(wide, query);
      expect(completed).toBe(true);
      expect(found).toHaveLength(40_320);
      expect(new Set(found.map(candidateKey)).size).toBe(40_320);
      for (const candidate of found.slice(0, 100)) expect(new Set(candidate.resources.map((r) => r.provider)).size).toBe(8);
    });

    it('stops when the caller has enough, and when the step budget is spent', () => {
      expect(candidates(wide, query, { wanted: 1000 }).found).toHaveLength(1000);
      const budgeted = candidates(wide, query, { maxSteps: 5000 });
      expect(budgeted.completed).toBe(false);
      expect(budgeted.found.length).toBeLessThan(5000);
    });

    it('stops once the deadline has passed, asking the clock rarely', () => {
      let asked = 0;
      const whole = candidates(wide, query, { pastDeadline: () => (asked++, false) });
      expect(whole.found).toHaveLength(40_320);
      // Not once per step: a clock read costs more than a step.
      expect(asked).toBeLessThan(whole.found.length / 10);

      let left = Math.floor(asked / 2);
      const timed = candidates(wide, query, { pastDeadline: () => --left < 0 });
      expect(timed.completed).toBe(false);
      expect(timed.found.length).toBeGreaterThan(0);
      expect(timed.found.length).toBeLessThan(40_320);
      expect(candidates(wide, query, { pastDeadline: () => true }).found).toHaveLength(0);
    });
  });
});

describe('walkFilter', () => {
  it('asks flat providers for the summed amounts of classes no sharing provider has', () => {
    const sharing = [provider('ss', { inventories: { DISK_GB: inventory(100) }, traits: [SHARING_TRAIT] })];
    const filter = walkFilter(parse('resources=VCPU:2,DISK_GB:10&resources1=VCPU:1&group_policy=none'), sharing);
    expect(filter.minimumFree).toEqual({ VCPU: 3 });
  });
});
