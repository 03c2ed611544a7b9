/**
 * Reshaping (POST /reshaper): replacing the inventories of some providers and
 * the allocations of some consumers in one step, typically to move a class of
 * inventory, and what is allocated from it, from a root provider to a new
 * child. Pure: the caller reads the providers, consumers and catalog; this
 * decides (or refuses) what to write.
 *
 * It follows upstream's order of checks and its generation arithmetic:
 * - the providers whose inventories are replaced must exist (400) and still
 *   have the generation the client read (409);
 * - then the claim's own checks (consumer generations, providers named);
 * - then the classes of the new inventories, then the allocations (planClaim),
 *   checked against an interim inventory: the current one with the new
 *   records laid over it, so classes being removed are still there while
 *   the allocations move away from them;
 * - only the final state must leave no removed class allocated (409 in use);
 * - a replaced provider's generation goes up once for the interim inventory
 *   (unless the new inventory is empty), once when the claim bumps it, and
 *   once for the final inventory.
 */
import { conflict, ErrorCode, HttpError } from '../api/errors.js';
import { checkClaimTargets, planClaim, type ClaimState, type DesiredConsumer } from './claims.js';
import { replacementProblem } from './inventory.js';
import type { ConsumerChange, Inventories, Provider, ProviderUsageChange, Resources } from './model.js';

/** The inventories one provider should end up with. */
export interface DesiredInventories {
  providerUuid: string;
  /** The provider generation the client read. */
  generation: number;
  inventories: Inventories;
}

export interface ReshapePlan {
  consumers: ConsumerChange[];
  /** The providers whose inventories are replaced: each written whole (inventories, usage, generation). */
  providers: { before: Provider; after: Provider }[];
  /** The other providers the allocations reach: their usage moves as in a claim. */
  usages: ProviderUsageChange[];
}

/** Upstream's answer to a resource class that does not exist, in inventories or allocations. */
export const unknownReshapeClass = (name: string): HttpError => new HttpError(400, `malformed reshaper data: No such resource class ${name}.`);

function withDeltas(usages: Resources, deltas: Resources): Resources {
  const next = { ...usages };
  for (const [resourceClass, delta] of Object.entries(deltas)) {
    const amount = (next[resourceClass] ?? 0) + delta;
    if (amount === 0) delete next[resourceClass];
    else next[resourceClass] = amount;
  }
  return next;
}

/**
 * Computes the reshape, or throws upstream's error. `state` holds every
 * provider named in `inventories` or `desired` or held by a desired consumer.
 */
export function planReshape(inventories: DesiredInventories[], desired: DesiredConsumer[], state: ClaimState, now: string): ReshapePlan {
  const read = inventories.map((want) => {
    const provider = state.providers.get(want.providerUuid);
    if (provider === undefined) {
      throw new HttpError(400, `Resource provider ${want.providerUuid} in inventories not found: No resource provider with uuid ${want.providerUuid} found`, {
        code: ErrorCode.RESOURCE_PROVIDER_NOT_FOUND,
      });
    }
    if (provider.generation !== want.generation) {
      throw conflict(
        `resource provider generation conflict for provider ${want.providerUuid}: actual: ${provider.generation}, given: ${want.generation}`,
        ErrorCode.CONCURRENT_UPDATE,
      );
    }
    return provider;
  });

  checkClaimTargets(desired, state);

  for (const want of inventories) {
    for (const resourceClass of Object.keys(want.inventories)) {
      if (!state.classExists(resourceClass)) throw unknownReshapeClass(resourceClass);
    }
  }

  // The allocations see each replaced provider with its new records laid over the current ones.
  const interim = new Map(state.providers);
  read.forEach((provider, index) => {
    interim.set(provider.uuid, { ...provider, inventories: { ...provider.inventories, ...inventories[index]!.inventories } });
  });
  const claim = planClaim(desired, { ...state, providers: interim }, now, { form: 'reshape' });
  const claimed = new Map(claim.providers.map((change) => [change.provider.uuid, change]));

  // Only the final state must leave no removed class allocated.
  const providers = inventories.map((want, index) => {
    const before = read[index]!;
    const change = claimed.get(before.uuid);
    const usages = withDeltas(before.usages, change?.deltas ?? {});
    const problem = replacementProblem({ uuid: before.uuid, inventories: before.inventories, usages }, want.inventories);
    if (problem) throw conflict(`update conflict: ${problem}`, ErrorCode.INVENTORY_INUSE);
    const bumps = (Object.keys(want.inventories).length > 0 ? 1 : 0) + (change !== undefined && (change.bumpGeneration ?? true) ? 1 : 0) + 1;
    const after: Provider = { ...before, inventories: want.inventories, usages, generation: before.generation + bumps, updatedAt: now };
    return { before, after };
  });

  // A replaced provider's usage travels in its whole-item write, not as a claim delta.
  const replaced = new Set(inventories.map((want) => want.providerUuid));
  return { consumers: claim.consumers, providers, usages: claim.providers.filter((change) => !replaced.has(change.provider.uuid)) };
}
