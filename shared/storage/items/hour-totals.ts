/**
 * The hour totals item: one hour's allocation events of a project, or of
 * one of its users, summed (shared/domain/history.ts HourTotals), so that a
 * month's resource-hours read about 720 of these instead of every event.
 * The history function adds each event to them in the transaction that
 * records the event under its project (shared/storage/history/hour-totals.ts).
 * One attribute per class and sum, so that an event adds to them (ADD)
 * without reading them first. Kept as long as the events (TTL).
 *
 *   pk HOURS#PROJECT#<project>          sk <hour, ISO 8601>   change#<class>, deferred#<class>: numbers; expiresAt
 *   pk HOURS#USER#<[project, user]>     sk the same
 */
import type { HourTotals, UsageScope } from '../../domain/history.js';
import { stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart } from './key-parts.js';
import { TTL_ATTRIBUTE } from '../table-definition.js';
import type { WriteAction } from '../commit/write.js';

export const HOUR_TOTALS_TYPE = 'hourTotals';

/** The attribute of one class's sum: `change#VCPU`, `deferred#VCPU`. */
export const hourTotalsAttribute = (sum: 'change' | 'deferred', resourceClass: string): string => `${sum}#${resourceClass}`;

/** A scope's partition; a user's is keyed by the JSON of project and user, which no project id alone can pose as. */
export const hourTotalsPk = ({ projectId, userId }: UsageScope): string =>
  userId === undefined ? clientPart('HOURS#PROJECT', projectId) : clientPart('HOURS#USER', JSON.stringify([projectId, userId]));

/** The sort key of the hour starting at `hour` (ms since the epoch): ISO 8601 in UTC sorts as time. */
export const hourSortKey = (hour: number): string => new Date(hour).toISOString();

export const hourTotalsKey = (scope: UsageScope, hour: number): Key => ({ pk: hourTotalsPk(scope), sk: hourSortKey(hour) });

/** The update that adds an event's totals to a scope's hour (creating the item), and keeps it as long as the event (`expiresAt`, in seconds). */
export function addToHourTotals(tableName: string, scope: UsageScope, totals: HourTotals, expiresAt: number): WriteAction {
  const names: Record<string, string> = { '#type': TYPE_ATTRIBUTE, '#expires': TTL_ATTRIBUTE };
  const values: Record<string, unknown> = { ':type': HOUR_TOTALS_TYPE, ':expires': expiresAt };
  const additions = (['change', 'deferred'] as const).flatMap((sum) =>
    Object.entries(totals[sum]).map(([resourceClass, amount]) => {
      const n = Object.keys(values).length;
      names[`#a${n}`] = hourTotalsAttribute(sum, resourceClass);
      values[`:a${n}`] = amount;
      return `#a${n} :a${n}`;
    }),
  );
  return {
    Update: {
      TableName: tableName,
      Key: hourTotalsKey(scope, totals.hour),
      UpdateExpression: `SET #type = :type, #expires = :expires${additions.length === 0 ? '' : ` ADD ${additions.join(', ')}`}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

export function decodeHourTotals(item: Item): HourTotals {
  const totals: HourTotals = { hour: Date.parse(stringField(item, 'sk')), change: {}, deferred: {} };
  for (const [name, value] of Object.entries(item)) {
    const [sum, resourceClass] = name.split('#') as [string, string | undefined];
    if ((sum === 'change' || sum === 'deferred') && resourceClass !== undefined && typeof value === 'number') totals[sum][resourceClass] = value;
  }
  return totals;
}
