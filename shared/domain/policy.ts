/**
 * Policy: oslo.policy-style check strings evaluated against the caller's
 * identity. Pure; the rule set is data (config/placement-8.0.0-policy-rules.json
 * holds upstream's default rule names and check strings,
 * config/placement-own-policy-rules.json those of the routes upstream lacks;
 * shared/auth/policy-file.ts reads them and the operator's overrides).
 */
import upstreamRules from '../../config/placement-8.0.0-policy-rules.json' with { type: 'json' };
import ownRules from '../../config/placement-own-policy-rules.json' with { type: 'json' };

/** Who is calling, as the authentication step (noauth2 or Keystone) found it. */
export interface Identity {
  userId: string;
  projectId: string | undefined;
  roles: string[];
  /** "all" for a system-scoped token. */
  systemScope: string | undefined;
  /** The domain of a domain-scoped token. */
  domainId?: string;
}

export type Target = Record<string, string | undefined>;

type Check =
  | { kind: 'const'; value: boolean }
  | { kind: 'not'; check: Check }
  | { kind: 'and' | 'or'; checks: Check[] }
  | { kind: 'rule'; name: string }
  | { kind: 'match'; key: string; value: string };

/** Parses a check string ("role:reader and (system_scope:all or rule:x)"). Throws on bad syntax. */
export function parseCheck(text: string): Check {
  // Like oslo.policy: parentheses are peeled off the ends of whitespace-separated words, so "%(project_id)s" stays whole.
  const tokens = text
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((word) => {
      const open = /^\(*/.exec(word)![0].length;
      const close = /\)*$/.exec(word.slice(open))![0].length;
      const core = word.slice(open, word.length - close);
      return [...Array<string>(open).fill('('), ...(core ? [core] : []), ...Array<string>(close).fill(')')];
    });
  let position = 0;
  const peek = () => tokens[position]?.toLowerCase();

  const parseOr = (): Check => {
    const checks = [parseAnd()];
    while (peek() === 'or') {
      position++;
      checks.push(parseAnd());
    }
    return checks.length === 1 ? checks[0]! : { kind: 'or', checks };
  };
  const parseAnd = (): Check => {
    const checks = [parseNot()];
    while (peek() === 'and') {
      position++;
      checks.push(parseNot());
    }
    return checks.length === 1 ? checks[0]! : { kind: 'and', checks };
  };
  const parseNot = (): Check => {
    if (peek() === 'not') {
      position++;
      return { kind: 'not', check: parseNot() };
    }
    return parseAtom();
  };
  const parseAtom = (): Check => {
    const token = tokens[position++];
    if (token === undefined) throw new Error(`unexpected end of check string: ${JSON.stringify(text)}`);
    if (token === '(') {
      const inner = parseOr();
      if (tokens[position++] !== ')') throw new Error(`missing ")" in check string: ${JSON.stringify(text)}`);
      return inner;
    }
    if (token === '@') return { kind: 'const', value: true };
    if (token === '!') return { kind: 'const', value: false };
    const colon = token.indexOf(':');
    if (colon <= 0 || colon === token.length - 1) {
      throw new Error(`invalid check ${JSON.stringify(token)} in check string: ${JSON.stringify(text)}`);
    }
    const key = token.slice(0, colon);
    const value = token.slice(colon + 1);
    return key === 'rule' ? { kind: 'rule', name: value } : { kind: 'match', key, value };
  };

  if (tokens.length === 0) return { kind: 'const', value: true };
  const check = parseOr();
  if (position !== tokens.length) throw new Error(`unexpected ${JSON.stringify(tokens[position])} in check string: ${JSON.stringify(text)}`);
  return check;
}

/** The caller's value for a check's left-hand side; null where the caller has none, undefined for a key we do not know. */
function credential(identity: Identity, key: string): string | null | undefined {
  switch (key) {
    case 'project_id':
      return identity.projectId ?? null;
    case 'user_id':
      return identity.userId;
    case 'system_scope':
      return identity.systemScope ?? null;
    case 'domain_id':
      return identity.domainId ?? null;
    default:
      return undefined;
  }
}

/** The scope oslo.policy sees in a token: system, else domain, else project. */
function tokenScope(identity: Identity): string {
  if (identity.systemScope) return 'system';
  return identity.domainId ? 'domain' : 'project';
}

export interface PolicyRule {
  name: string;
  check: Check;
  /** Scopes the rule accepts when scope is enforced ("system", "project"). */
  scopeTypes: string[];
}

export class Policy {
  constructor(
    private readonly rules: ReadonlyMap<string, PolicyRule>,
    private readonly enforceScope: boolean,
  ) {}

  /** True when the identity may perform the action on the target. */
  allows(action: string, identity: Identity, target: Target): boolean {
    const rule = this.rules.get(action);
    if (rule === undefined) return false;
    if (this.enforceScope && rule.scopeTypes.length > 0 && !rule.scopeTypes.includes(tokenScope(identity))) return false;
    return this.evaluate(rule.check, identity, target, new Set());
  }

  private evaluate(check: Check, identity: Identity, target: Target, seen: Set<string>): boolean {
    switch (check.kind) {
      case 'const':
        return check.value;
      case 'not':
        return !this.evaluate(check.check, identity, target, seen);
      case 'and':
        return check.checks.every((inner) => this.evaluate(inner, identity, target, seen));
      case 'or':
        return check.checks.some((inner) => this.evaluate(inner, identity, target, seen));
      case 'rule': {
        const rule = this.rules.get(check.name);
        if (rule === undefined || seen.has(check.name)) return false;
        return this.evaluate(rule.check, identity, target, new Set([...seen, check.name]));
      }
      case 'match': {
        if (check.key === 'role') return identity.roles.some((role) => role.toLowerCase() === check.value.toLowerCase());
        // Like oslo.policy: both sides compared as text, a missing value as Python's "None"; a target key that is absent fails.
        let missing = false;
        const expected = check.value.replace(/%\(([^)]+)\)s/g, (_text, key: string) => {
          if (!Object.hasOwn(target, key)) missing = true;
          return target[key] ?? 'None';
        });
        if (missing) return false;
        const actual = credential(identity, check.key);
        return actual !== undefined && (actual ?? 'None') === expected;
      }
    }
  }
}

export interface RuleDefault {
  name: string;
  check_str: string;
  deprecated_check_str?: string;
  scope_types?: string[];
}

/** The default rules: upstream's, then those of this service's own routes. */
export const DEFAULT_RULES: readonly RuleDefault[] = [...upstreamRules.rules, ...ownRules.rules];

export interface PolicyOptions {
  /** oslo.policy enforce_new_defaults: false keeps the deprecated (legacy) rules as an alternative. */
  enforceNewDefaults: boolean;
  enforceScope: boolean;
  /** Operator overrides, rule name to check string (a policy file). */
  overrides?: Record<string, string>;
}

function references(check: Check): string[] {
  switch (check.kind) {
    case 'rule':
      return [check.name];
    case 'not':
      return references(check.check);
    case 'and':
    case 'or':
      return check.checks.flatMap(references);
    default:
      return [];
  }
}

/** Refuses rule sets that refer to rules that do not exist or to themselves: oslo would deny silently, we stop instead. */
function checkReferences(rules: ReadonlyMap<string, PolicyRule>): void {
  for (const rule of rules.values()) {
    for (const name of references(rule.check)) {
      if (!rules.has(name)) throw new Error(`rule ${JSON.stringify(rule.name)} refers to undefined rule ${JSON.stringify(name)}`);
    }
  }
  const done = new Set<string>();
  const visit = (name: string, path: string[]): void => {
    if (path.includes(name)) throw new Error(`rules refer to each other in a loop: ${[...path, name].join(' -> ')}`);
    if (done.has(name)) return;
    for (const next of references(rules.get(name)!.check)) visit(next, [...path, name]);
    done.add(name);
  };
  for (const name of rules.keys()) visit(name, []);
}

function parseRule(name: string, text: string): Check {
  try {
    return parseCheck(text);
  } catch (error) {
    throw new Error(`rule ${JSON.stringify(name)}: ${(error as Error).message}`, { cause: error });
  }
}

/** Builds the policy from upstream's defaults, the mode and any overrides. Throws on a rule set that cannot be evaluated. */
export function buildPolicy(defaults: readonly RuleDefault[], options: PolicyOptions): Policy {
  const rules = new Map<string, PolicyRule>();
  for (const rule of defaults) {
    const override = options.overrides?.[rule.name];
    let text = override ?? rule.check_str;
    if (override === undefined && !options.enforceNewDefaults && rule.deprecated_check_str) {
      text = `(${rule.check_str}) or (${rule.deprecated_check_str})`;
    }
    rules.set(rule.name, { name: rule.name, check: parseRule(rule.name, text), scopeTypes: rule.scope_types ?? [] });
  }
  for (const [name, text] of Object.entries(options.overrides ?? {})) {
    if (!rules.has(name)) rules.set(name, { name, check: parseRule(name, text), scopeTypes: [] });
  }
  checkReferences(rules);
  return new Policy(rules, options.enforceScope);
}
