/**
 * Allocation history (docs/operators/history.md): one event per committed
 * change of a consumer's allocations or of who the consumer is, made from
 * the consumer's stored versions before and after the change; each hour's
 * events summed per project (and user); and a project's resource-hours
 * over a time range, from those sums and what its consumers hold now. Pure.
 */
import { consumerTotals } from './usages.js';
import type { Consumer, Resources } from './model.js';

/** Provider uuid to the resources the consumer holds there. */
export type Holdings = Record<string, Resources>;

/** When a change committed and which request made it (null: a write that did not say, such as release 1.0.0's). */
export interface ChangeStamp {
  at: string;
  requestId: string | null;
}

export interface AllocationEvent extends ChangeStamp {
  consumer: string;
  /** Who the consumer is after the change (before it, for a consumer that is gone). */
  projectId: string;
  userId: string;
  consumerType: string | null;
  /** The consumer's project before the change when it was another one: the usage before the change counts there. */
  previousProjectId: string | null;
  /** The same for its user (null as well in events recorded before the history kept it). */
  previousUserId: string | null;
  before: Holdings;
  after: Holdings;
}

const sameHoldings = (a: Holdings, b: Holdings): boolean => JSON.stringify(sortedHoldings(a)) === JSON.stringify(sortedHoldings(b));

function sortedHoldings(holdings: Holdings): Holdings {
  const sortedResources = (resources: Resources) => Object.fromEntries(Object.entries(resources).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return Object.fromEntries(
    Object.entries(holdings)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([provider, resources]) => [provider, sortedResources(resources)]),
  );
}

/**
 * The event of one stored consumer change (undefined before: created;
 * undefined after: gone), or undefined when neither its allocations nor its
 * project, user or type changed (a multi-step change fencing the item, or a
 * PUT of what it already holds).
 */
export function allocationEvent(before: Consumer | undefined, after: Consumer | undefined, stamp: ChangeStamp): AllocationEvent | undefined {
  const now = (after ?? before)!;
  const held = (consumer: Consumer | undefined): Holdings => sortedHoldings(consumer?.allocations ?? {});
  const identity = (consumer: Consumer | undefined) => [consumer?.projectId, consumer?.userId, consumer?.consumerType ?? null];
  if (before !== undefined && after !== undefined && sameHoldings(before.allocations, after.allocations)) {
    if (JSON.stringify(identity(before)) === JSON.stringify(identity(after))) return undefined;
  }
  return {
    ...stamp,
    consumer: now.uuid,
    projectId: now.projectId,
    userId: now.userId,
    consumerType: now.consumerType ?? null,
    previousProjectId: before !== undefined && before.projectId !== now.projectId ? before.projectId : null,
    previousUserId: before !== undefined && before.userId !== now.userId ? before.userId : null,
    before: held(before),
    after: held(after),
  };
}

/** A time range, in ms since the epoch. */
export interface TimeRange {
  since: number;
  until: number;
}

export const HOUR_MS = 3_600_000;
/** The start of the hour `at` (ms since the epoch) is in. */
export const hourOf = (at: number): number => Math.floor(at / HOUR_MS) * HOUR_MS;

/** Whose holdings a usage counts: a project's consumers, or those of one of its users. */
export interface UsageScope {
  projectId: string;
  userId?: string;
}

function addInto(sum: Resources, resources: Resources, factor: number): void {
  for (const [resourceClass, amount] of Object.entries(resources)) sum[resourceClass] = (sum[resourceClass] ?? 0) + amount * factor;
}

const withoutZeros = (resources: Resources): Resources => Object.fromEntries(Object.entries(resources).filter(([, amount]) => amount !== 0));

/**
 * What an event changed of the resources a scope's consumers hold: its
 * after counts for whom the consumer is after the change, its before for
 * whom it was before it.
 */
export function heldChange(event: AllocationEvent, scope: UsageScope): Resources {
  const counts = (projectId: string, userId: string) => projectId === scope.projectId && (scope.userId === undefined || userId === scope.userId);
  const change: Resources = {};
  if (counts(event.projectId, event.userId)) addInto(change, consumerTotals({ allocations: event.after }), 1);
  if (counts(event.previousProjectId ?? event.projectId, event.previousUserId ?? event.userId))
    addInto(change, consumerTotals({ allocations: event.before }), -1);
  return withoutZeros(change);
}

/**
 * One hour's events of a scope, summed: `change` is what they changed of
 * what the scope holds (held at the hour's end less held at its start);
 * `deferred` is each event's change times the part of the hour before it,
 * in resource-hours, summed. The hour then held `held at its end` times one
 * hour less `deferred` resource-hours.
 */
export interface HourTotals {
  /** The hour's start, ms since the epoch. */
  hour: number;
  change: Resources;
  deferred: Resources;
}

/** The totals of the events of `hour` (others are passed over) for a scope. */
export function hourTotals(hour: number, events: readonly AllocationEvent[], scope: UsageScope): HourTotals {
  const change: Resources = {};
  const deferred: Resources = {};
  for (const event of events) {
    const at = Date.parse(event.at);
    if (hourOf(at) !== hour) continue;
    const held = heldChange(event, scope);
    addInto(change, held, 1);
    addInto(deferred, held, (at - hour) / HOUR_MS);
  }
  return { hour, change: withoutZeros(change), deferred: withoutZeros(deferred) };
}

/** What a usage is computed from: what the scope holds now, and what changed it since the range began. */
export interface UsageInputs {
  /** What the scope's consumers hold now. */
  held: Resources;
  /** Whole hours, each starting at or after the range's start and ending at or before its end, or starting at or after its end. */
  hours: readonly HourTotals[];
  /** Each change after the range's start not in `hours`. */
  changes: readonly { at: number; change: Resources }[];
}

/**
 * Resource-hours per class that a scope held within `range`: an amount
 * held for an hour is one of that class's resource-hours.
 *
 * What was held at a moment is what is held now less every change since:
 * so the range held `held` times its length, less each change after its
 * start times the part of the range before the change (all of it for a
 * change after the range). A whole hour's changes within the range count
 * through its totals: its deferred resource-hours, and its change times the
 * time from the range's start to the hour's. A consumer that has changed
 * nothing since the range began held what it holds now throughout.
 */
export function resourceHours({ held, hours, changes }: UsageInputs, range: TimeRange): Resources {
  const length = (range.until - range.since) / HOUR_MS;
  const sum: Resources = {};
  addInto(sum, held, length);
  for (const { at, change } of changes) {
    if (at > range.since) addInto(sum, change, -Math.min(at - range.since, range.until - range.since) / HOUR_MS);
  }
  for (const totals of hours) {
    if (totals.hour < range.since || (totals.hour < range.until && totals.hour + HOUR_MS > range.until)) {
      throw new Error(`hour ${new Date(totals.hour).toISOString()} is not whole on one side of the range's ends`);
    }
    if (totals.hour >= range.until) {
      addInto(sum, totals.change, -length);
    } else {
      addInto(sum, totals.deferred, -1);
      addInto(sum, totals.change, -(totals.hour - range.since) / HOUR_MS);
    }
  }
  return Object.fromEntries(Object.entries(sum).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
