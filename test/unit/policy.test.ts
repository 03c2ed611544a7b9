import { describe, expect, it } from 'vitest';
import defaults from '../../config/placement-8.0.0-policy-rules.json' with { type: 'json' };
import { buildPolicy, parseCheck, type Identity } from '../../shared/domain/policy.js';

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
