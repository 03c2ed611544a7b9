/**
 * The brakes on abusive load, sized from the load a region really sends:
 * the API stage's rate and burst limits and each function's reserved
 * concurrency. Pure arithmetic, so that the reasoning is tested and the
 * documented figures (docs/operators/deploy.md, "Brakes") come from the same numbers.
 *
 * The load is nova-compute's steady polling (nova 26, `ResourceTracker`):
 * every 60 s `GET /resource_providers/{node}/allocations` twice (the deleted
 * instances check and the provider tree's allocations, one provider on a flat
 * node) and `GET /allocations/{consumer}` once per instance on the node; every
 * 300 s the provider tree refresh, `GET /resource_providers?in_tree=` and the
 * node's inventories, aggregates and traits. That is 168 + 60 x V requests per
 * node per hour (issue 13 rounds it to 160 + 60 x V): a 1,000-node region at
 * 30 instances a node sends 547 requests a second. Scheduling (a few boots a
 * second at most) and operators' calls are a small share on top.
 */
import type { HandlerName } from '../shared/http/routes.js';

/** Requests per compute node per hour, by handler family: fixed ones and ones per instance. */
export const NOVA_COMPUTE_POLLING: { family: HandlerName; perHour: number; perInstancePerHour: number }[] = [
  { family: 'allocations', perHour: 120, perInstancePerHour: 60 },
  { family: 'resource-providers', perHour: 12, perInstancePerHour: 0 },
  { family: 'inventories', perHour: 12, perInstancePerHour: 0 },
  { family: 'aggregates', perHour: 12, perInstancePerHour: 0 },
  { family: 'traits', perHour: 12, perInstancePerHour: 0 },
];

/**
 * Twice the steady rate: nova-computes started together keep their periodic
 * tasks in step, boot storms and operators' scripts come on top, and a brake
 * that refuses a healthy region is worse than a loose one.
 */
const HEADROOM = 2;
/** API Gateway's account-level burst in a region: a stage's cannot usefully exceed it. */
const MAX_BURST = 5000;
/** Below this the stage limit would get in the way of an operator's script more than it saves. */
const MIN_RATE_PER_SECOND = 100;
/** No family is left with fewer warm instances than this, whatever its share of the polling. */
const MIN_CONCURRENCY = 10;
/**
 * What one request of a family may take in Lambda, a generous p99: CRUD reads
 * take 7-14 ms locally on DynamoDB Local (docs/operators/deploy.md, bundle table) and less on
 * DynamoDB; the allocations family also claims (about 30 ms). The
 * authorizer's figure is a Keystone round trip.
 */
const REQUEST_SECONDS = 0.05;
const AUTHORIZER_SECONDS = 0.2;

export interface RegionSize {
  computeNodes: number;
  instancesPerNode: number;
}

export interface Brakes {
  /** The region's steady request rate, for the documented reasoning. */
  steadyRequestsPerSecond: number;
  /** API Gateway stage limits: requests per second, and the token bucket's size. */
  rateLimit: number;
  burstLimit: number;
  /** Reserved concurrency by handler family. */
  concurrency: Record<HandlerName, number>;
  /** The authorizer's, given how often API Gateway asks it (its cache). */
  authorizerConcurrency: number;
  /** The function-URL router's: the families' together, since it serves them all from one pool. */
  routerConcurrency: number;
}

const roundUp = (value: number, step: number) => Math.ceil(value / step) * step;

export function brakesFor(region: RegionSize, families: readonly HandlerName[], authorizerCacheSeconds: number): Brakes {
  const perSecond = (family: HandlerName) =>
    NOVA_COMPUTE_POLLING.filter((load) => load.family === family).reduce(
      (sum, load) => sum + (region.computeNodes * (load.perHour + load.perInstancePerHour * region.instancesPerNode)) / 3600,
      0,
    );
  const steady = families.reduce((sum, family) => sum + perSecond(family), 0);
  const rateLimit = Math.max(MIN_RATE_PER_SECOND, roundUp(HEADROOM * steady, 50));
  const concurrencyFor = (requestsPerSecond: number, seconds: number) => Math.max(MIN_CONCURRENCY, Math.ceil(HEADROOM * requestsPerSecond * seconds));
  const concurrency = Object.fromEntries(families.map((family) => [family, concurrencyFor(perSecond(family), REQUEST_SECONDS)])) as Record<HandlerName, number>;
  // With its cache on, API Gateway asks the authorizer about each token (one per nova-compute) once per TTL, and it asks
  // Keystone; without it, on every request, and it mostly answers from its own token cache.
  const authorizerConcurrency =
    authorizerCacheSeconds > 0 ? concurrencyFor(region.computeNodes / authorizerCacheSeconds, AUTHORIZER_SECONDS) : concurrencyFor(steady, REQUEST_SECONDS);
  return {
    steadyRequestsPerSecond: steady,
    rateLimit,
    burstLimit: Math.min(MAX_BURST, 2 * rateLimit),
    concurrency,
    authorizerConcurrency,
    routerConcurrency: Object.values(concurrency).reduce((sum, value) => sum + value, 0),
  };
}
