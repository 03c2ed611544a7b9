/**
 * The policy in force, built once from the default rules (upstream's and our routes'), the configured
 * mode and the operator's policy file (PLACEMENT_POLICY_FILE).
 *
 * In Lambda the file is the JSON the stack wrote at synth time from the
 * operator's YAML or JSON (the `policyFile` context), so the handlers read
 * JSON only and carry no YAML parser; the local server hands this module the
 * YAML reader (shared/auth/policy-yaml.ts), which reads operators' files as
 * they are written.
 */
import { readFileSync } from 'node:fs';
import { config } from '../config.js';
import { buildPolicy, DEFAULT_RULES, type Policy } from '../domain/policy.js';

export class PolicyFileError extends Error {}

export type PolicyFileParser = (text: string) => Record<string, string>;

/** A flat JSON object of rule names to check strings, as the stack writes it; nothing else. */
export function parsePolicyJson(text: string): Record<string, string> {
  let rules: unknown;
  try {
    rules = JSON.parse(text);
  } catch (error) {
    throw new PolicyFileError(
      `not JSON (${(error as Error).message}); in Lambda the policy is the JSON the stack writes from the policyFile context at synth time`,
    );
  }
  if (typeof rules !== 'object' || rules === null || Array.isArray(rules))
    throw new PolicyFileError('the file must be an object of rule names to check strings');
  for (const [name, check] of Object.entries(rules)) {
    if (typeof check !== 'string') throw new PolicyFileError(`the value of ${JSON.stringify(name)} must be a check string`);
  }
  return rules as Record<string, string>;
}

let parser: PolicyFileParser = parsePolicyJson;
let current: Policy | undefined;

/** The local server reads operators' YAML policy files (shared/auth/policy-yaml.ts); in Lambda they arrive as JSON. */
export function readPolicyFilesWith(reader: PolicyFileParser): void {
  parser = reader;
  current = undefined;
}

function readPolicyFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`PLACEMENT_POLICY_FILE ${path}: cannot read it: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parser(text);
  } catch (error) {
    throw new Error(`PLACEMENT_POLICY_FILE ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** The policy; throws (at start, as the middleware chain is built) on a policy file that is unreadable, malformed or refers to undefined rules. */
export function policy(): Policy {
  if (current === undefined) {
    const file = config.policyFile;
    const overrides = file === undefined ? undefined : readPolicyFile(file);
    try {
      current = buildPolicy(DEFAULT_RULES, { enforceNewDefaults: config.enforceNewDefaults, enforceScope: config.enforceScope, overrides });
    } catch (error) {
      if (file === undefined) throw error;
      throw new Error(`PLACEMENT_POLICY_FILE ${file}: ${(error as Error).message}`, { cause: error });
    }
  }
  return current;
}
