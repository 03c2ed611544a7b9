import { describe, expect, it } from 'vitest';
import defaults from '../../../config/placement-8.0.0-policy-rules.json' with { type: 'json' };
import { buildPolicy, parseCheck, type Identity } from '../../../shared/domain/policy.js';
import { DEFAULT_POLICY_RULES } from '../../../shared/domain/policy-defaults.js';

const admin: Identity = { userId: 'admin', projectId: 'admin', roles: ['admin'], systemScope: undefined };
const user: Identity = { userId: 'user', projectId: 'p1', roles: [], systemScope: undefined };
const systemReader: Identity = { userId: 'r', projectId: undefined, roles: ['reader'], systemScope: 'all' };
const projectReader: Identity = { userId: 'r', projectId: 'p1', roles: ['reader'], systemScope: undefined };

describe('legacy policy defaults', () => {
  const policy = buildPolicy(defaults.rules, { enforceNewDefaults: false, enforceScope: false });

  it('lets admins do everything and plain users nothing', () => {
    expect(policy.allows('placement:resource_providers:create', admin, {})).toBe(true);
    expect(policy.allows('placement:resource_providers:list', user, {})).toBe(false);
  });

  it('still honours the new defaults as an alternative', () => {
    expect(policy.allows('placement:resource_providers:list', systemReader, {})).toBe(true);
  });
});

describe('new defaults', () => {
  const policy = buildPolicy(defaults.rules, { enforceNewDefaults: true, enforceScope: true });

  it('refuses the legacy admin role without system scope', () => {
    expect(policy.allows('placement:resource_providers:list', admin, {})).toBe(false);
  });

  it('lets a project reader read usages of its own project only', () => {
    expect(policy.allows('placement:usages', projectReader, { project_id: 'p1' })).toBe(true);
    expect(policy.allows('placement:usages', projectReader, { project_id: 'p2' })).toBe(false);
  });
});

describe('check strings', () => {
  it('parses and, or, not and parentheses with oslo precedence', () => {
    const policy = buildPolicy([{ name: 'r', check_str: 'not role:banned and (role:a or role:b)' }], { enforceNewDefaults: true, enforceScope: false });
    expect(policy.allows('r', { ...user, roles: ['b'] }, {})).toBe(true);
    expect(policy.allows('r', { ...user, roles: ['b', 'banned'] }, {})).toBe(false);
  });

  it('rejects malformed check strings', () => {
    expect(() => parseCheck('(role:a')).toThrow(/missing/);
    expect(() => parseCheck('role:a or')).toThrow(/unexpected end/);
  });
});

describe('policy overrides (a policy file)', () => {
  const build = (overrides: Record<string, string>, enforce = false) =>
    buildPolicy(defaults.rules, { enforceNewDefaults: enforce, enforceScope: enforce, overrides });

  it('replaces the default and its deprecated alternative', () => {
    const policy = build({ 'placement:resource_providers:list': 'role:viewer' });
    expect(policy.allows('placement:resource_providers:list', { ...user, roles: ['viewer'] }, {})).toBe(true);
    expect(policy.allows('placement:resource_providers:list', admin, {})).toBe(false);
  });

  it('opens every rule but admin_api to anyone, like upstream OpenPolicyFixture', () => {
    const open = Object.fromEntries(defaults.rules.filter((rule) => rule.name !== 'admin_api').map((rule) => [rule.name, '@']));
    const policy = build(open);
    expect(policy.allows('placement:resource_providers:create', user, {})).toBe(true);
    expect(policy.allows('admin_api', user, {})).toBe(false);
  });

  it('keeps the registered scope types when scope is enforced', () => {
    const policy = build({ 'placement:resource_providers:list': '@' }, true);
    expect(policy.allows('placement:resource_providers:list', user, {})).toBe(false);
    expect(policy.allows('placement:resource_providers:list', systemReader, {})).toBe(true);
  });

  it('lets extra rules be defined and referred to', () => {
    const policy = build({ owner: 'user_id:%(user_id)s', 'placement:allocations:list': 'rule:owner or rule:admin_api' });
    expect(policy.allows('placement:allocations:list', user, { user_id: 'user' })).toBe(true);
    expect(policy.allows('placement:allocations:list', user, { user_id: 'someone' })).toBe(false);
  });

  it('refuses references to undefined rules, loops and bad check strings, naming the rule', () => {
    expect(() => build({ 'placement:traits:list': 'rule:no_such_rule' })).toThrow('rule "placement:traits:list" refers to undefined rule "no_such_rule"');
    expect(() => build({ a: 'rule:b', b: 'rule:a' })).toThrow(/loop: a -> b -> a/);
    expect(() => build({ 'placement:traits:list': 'role:a and' })).toThrow(/^rule "placement:traits:list": unexpected end/);
    expect(() => build({ 'placement:traits:list': 'nocolon' })).toThrow(/invalid check "nocolon"/);
  });
});

describe('oslo.policy matching details', () => {
  const policy = (check: string, enforceScope = false, scopeTypes?: string[]) =>
    buildPolicy([{ name: 'r', check_str: check, scope_types: scopeTypes }], { enforceNewDefaults: true, enforceScope });

  it('compares a missing value as Python does ("None")', () => {
    // A system-scoped caller has no project; neither has a target built from it.
    expect(policy('project_id:%(project_id)s').allows('r', systemReader, { project_id: undefined })).toBe(true);
    expect(policy('project_id:%(project_id)s').allows('r', projectReader, { project_id: undefined })).toBe(false);
    expect(policy('project_id:%(project_id)s').allows('r', projectReader, {})).toBe(false);
  });

  it('matches literals, substitutions inside text and roles case-insensitively', () => {
    expect(policy('system_scope:all').allows('r', systemReader, {})).toBe(true);
    expect(policy('project_id:pre-%(suffix)s').allows('r', { ...user, projectId: 'pre-x' }, { suffix: 'x' })).toBe(true);
    expect(policy('role:Reader').allows('r', projectReader, {})).toBe(true);
    expect(policy('unknown_key:x').allows('r', admin, {})).toBe(false);
  });

  it('treats a domain-scoped token as domain scope', () => {
    const domainAdmin: Identity = { userId: 'd', projectId: undefined, roles: ['admin'], systemScope: undefined, domainId: 'dom' };
    expect(policy('role:admin', true, ['project']).allows('r', domainAdmin, {})).toBe(false);
    expect(policy('role:admin', true, ['domain']).allows('r', domainAdmin, {})).toBe(true);
    expect(policy('domain_id:dom').allows('r', domainAdmin, {})).toBe(true);
  });

  it('allows everyone with "@" and an empty check string, no one with "!"', () => {
    expect(policy('@').allows('r', user, {})).toBe(true);
    expect(policy('').allows('r', user, {})).toBe(true);
    expect(policy('!').allows('r', admin, {})).toBe(false);
    expect(policy('not !').allows('r', user, {})).toBe(true);
  });
});

describe('placement:allocation_candidates:explain (a rule of our own route)', () => {
  const systemAdmin: Identity = { userId: 'a', projectId: undefined, roles: ['admin', 'reader'], systemScope: 'all' };

  it('allows admins only, in the legacy and the secure RBAC profiles', () => {
    const legacy = buildPolicy(DEFAULT_POLICY_RULES, { enforceNewDefaults: false, enforceScope: false });
    expect(legacy.allows('placement:allocation_candidates:explain', admin, {})).toBe(true);
    expect(legacy.allows('placement:allocation_candidates:explain', projectReader, {})).toBe(false);
    expect(legacy.allows('placement:allocation_candidates:explain', systemReader, {})).toBe(false);
    const secure = buildPolicy(DEFAULT_POLICY_RULES, { enforceNewDefaults: true, enforceScope: true });
    expect(secure.allows('placement:allocation_candidates:explain', systemAdmin, {})).toBe(true);
    expect(secure.allows('placement:allocation_candidates:explain', admin, {})).toBe(false);
    expect(secure.allows('placement:allocation_candidates:explain', systemReader, {})).toBe(false);
  });

  it('is overridden like every other rule (the open-policy profile)', () => {
    const open = buildPolicy(DEFAULT_POLICY_RULES, {
      enforceNewDefaults: false,
      enforceScope: false,
      overrides: { 'placement:allocation_candidates:explain': '@' },
    });
    expect(open.allows('placement:allocation_candidates:explain', user, {})).toBe(true);
  });
});
