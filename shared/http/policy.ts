/** The policy in force, built once from upstream's defaults, the configured mode and the operator's policy file. */
import { readFileSync } from 'node:fs';
import defaults from '../../config/placement-8.0.0-policy-rules.json' with { type: 'json' };
import { config } from '../config.js';
import { parseFlatYaml } from '../domain/flat-yaml.js';
import { buildPolicy, type Policy } from '../domain/policy.js';

let current: Policy | undefined;

function readPolicyFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`PLACEMENT_POLICY_FILE ${path}: cannot read it: ${(error as Error).message}`);
  }
  try {
    return parseFlatYaml(text);
  } catch (error) {
    throw new Error(`PLACEMENT_POLICY_FILE ${path}: ${(error as Error).message}`);
  }
}

/** The policy; throws (at start, as the middleware chain is built) on a policy file that is unreadable, malformed or refers to undefined rules. */
export function policy(): Policy {
  if (current === undefined) {
    const file = config.policyFile;
    const overrides = file === undefined ? undefined : readPolicyFile(file);
    try {
      current = buildPolicy(defaults.rules, { enforceNewDefaults: config.enforceNewDefaults, enforceScope: config.enforceScope, overrides });
    } catch (error) {
      if (file === undefined) throw error;
      throw new Error(`PLACEMENT_POLICY_FILE ${file}: ${(error as Error).message}`);
    }
  }
  return current;
}
