/**
 * The hour totals item: one hour's allocation events of a project, or of
 * one of its users, summed (shared/domain/history.ts HourTotals), so that a
 * month's resource-hours read about 720 of these instead of every event.
 * The history function writes them from the hour's events, which it reads
 * again whole each time a batch brings one (shared/storage/history/hour-totals.ts):
 * `eventsSeen` is how many events of the project's hour that read saw; the
 * events of an hour only grow, so a write that saw fewer than the stored
 * item is an older read and is refused. Kept as long as the events (TTL).
 *
 *   pk HOURS#PROJECT#<project>          sk <hour, ISO 8601>   change, deferred (maps of class to number), eventsSeen, expiresAt
 *   pk HOURS#USER#<[project, user]>     sk the same
 */
import type { HourTotals, UsageScope } from '../../domain/history.js';
import { numberMapField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart } from './key-parts.js';
import { TTL_ATTRIBUTE } from '../table-definition.js';

export const HOUR_TOTALS_TYPE = 'hourTotals';

export const HourTotalsAttribute = { change: 'change', deferred: 'deferred', eventsSeen: 'eventsSeen', expiresAt: TTL_ATTRIBUTE } as const;
const A = HourTotalsAttribute;

/** A scope's partition; a user's is keyed by the JSON of project and user, which no project id alone can pose as. */
export const hourTotalsPk = ({ projectId, userId }: UsageScope): string =>
  userId === undefined ? clientPart('HOURS#PROJECT', projectId) : clientPart('HOURS#USER', JSON.stringify([projectId, userId]));

/** The sort key of the hour starting at `hour` (ms since the epoch): ISO 8601 in UTC sorts as time. */
export const hourSortKey = (hour: number): string => new Date(hour).toISOString();

export const hourTotalsKey = (scope: UsageScope, hour: number): Key => ({ pk: hourTotalsPk(scope), sk: hourSortKey(hour) });

export const encodeHourTotals = (scope: UsageScope, totals: HourTotals, eventsSeen: number, expiresAt: number): Item => ({
  ...hourTotalsKey(scope, totals.hour),
  [TYPE_ATTRIBUTE]: HOUR_TOTALS_TYPE,
  [A.change]: totals.change,
  [A.deferred]: totals.deferred,
  [A.eventsSeen]: eventsSeen,
  [A.expiresAt]: expiresAt,
});

export const decodeHourTotals = (item: Item): HourTotals => ({
  hour: Date.parse(stringField(item, 'sk')),
  change: numberMapField(item, A.change),
  deferred: numberMapField(item, A.deferred),
});
