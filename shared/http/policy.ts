/** The policy in force, built once from upstream's defaults and the configured mode. */
import defaults from '../../config/placement-8.0.0-policy-rules.json' with { type: 'json' };
import { config } from '../config.js';
import { buildPolicy, type Policy } from '../domain/policy.js';

let current: Policy | undefined;

export function policy(): Policy {
  current ??= buildPolicy(defaults.rules, {
    enforceNewDefaults: config.enforceNewDefaults,
    enforceScope: config.enforceScope,
  });
  return current;
}
