/**
 * Allocation history (docs/operators/history.md): one event per committed
 * change of a consumer's allocations or of who the consumer is, made from
 * the consumer's stored versions before and after the change, and each
 * project's resource-hours over a time range made from those events. Pure.
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
    before: held(before),
    after: held(after),
  };
}

/** A time range, in ms since the epoch. */
export interface TimeRange {
  since: number;
  until: number;
}

/** What a consumer held, and for which project, from a moment on. */
interface Holding {
  projectId: string;
  resources: Resources;
}

/**
 * Resource-hours per class that a project's consumers (or, given `userId`,
 * one user's) held within `range`: an amount held for an hour is one of
 * that class's resource-hours.
 *
 * `events` are every event with the project before or after, committed
 * since the range began (later ones included, oldest first); `current` are
 * the consumers of the project as they stand now. A consumer's holding is
 * read back from the present: from its newest event back to the range's
 * start, each event's `after` held from it to the next and its `before`
 * up to it; a consumer with no event since the range began held what it
 * holds now throughout.
 */
export function resourceHours(
  projectId: string,
  events: readonly AllocationEvent[],
  current: readonly Consumer[],
  range: TimeRange,
  userId?: string,
): Resources {
  const hours: Resources = {};
  const count = (holding: Holding, user: string, from: number, to: number) => {
    const start = Math.max(from, range.since);
    const end = Math.min(to, range.until);
    if (end <= start || holding.projectId !== projectId || (userId !== undefined && user !== userId)) return;
    for (const [resourceClass, amount] of Object.entries(holding.resources)) {
      hours[resourceClass] = (hours[resourceClass] ?? 0) + (amount * (end - start)) / 3_600_000;
    }
  };
  const byConsumer = new Map<string, AllocationEvent[]>();
  for (const event of events) byConsumer.set(event.consumer, [...(byConsumer.get(event.consumer) ?? []), event]);
  for (const [, changes] of byConsumer) {
    let until = Infinity;
    for (const event of [...changes].reverse()) {
      const at = Date.parse(event.at);
      count({ projectId: event.projectId, resources: consumerTotals({ allocations: event.after }) }, event.userId, at, until);
      until = at;
    }
    const first = changes[0]!;
    const before = { projectId: first.previousProjectId ?? first.projectId, resources: consumerTotals({ allocations: first.before }) };
    count(before, first.userId, -Infinity, until);
  }
  for (const consumer of current) {
    if (byConsumer.has(consumer.uuid)) continue;
    count({ projectId: consumer.projectId, resources: consumerTotals(consumer) }, consumer.userId, -Infinity, Infinity);
  }
  return Object.fromEntries(Object.entries(hours).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
