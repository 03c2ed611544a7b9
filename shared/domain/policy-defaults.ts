/**
 * The policy rules in force before an operator's policy file: upstream
 * Placement 8.0's defaults, and the rules of the routes this service adds
 * (config/service-policy-rules.json), which default to admins alike.
 * Both files leave out the `operations` of upstream's list (the routes a rule
 * guards): the route table says that (shared/http/routes.ts), and they were
 * 2.6 KB of every bundle that nothing read.
 */
import upstream from '../../config/placement-8.0.0-policy-rules.json' with { type: 'json' };
import additions from '../../config/service-policy-rules.json' with { type: 'json' };

export const DEFAULT_POLICY_RULES = [...upstream.rules, ...additions.rules];
