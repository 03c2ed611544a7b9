/**
 * Resource-hours kept as they happen (docs/operators/history.md): the
 * history function sums each hour's allocation events per project and per
 * user of it (items/hour-totals.ts), and a project's usage over a month
 * reads those hours instead of every event.
 *
 * A batch's events are written first (stream.ts); then each project-hour
 * they fall in is summed again from all its events, read strongly
 * consistent, so a batch the stream gives again writes the same totals,
 * and of two batches of one hour summing side by side the one that saw
 * more events wins (the stored item's eventsSeen). A user's totals are
 * written with the project's, from the same read.
 */
import { config } from '../../config.js';
import { heldChange, HOUR_MS, hourOf, hourTotals, type AllocationEvent, type TimeRange, type UsageInputs, type UsageScope } from '../../domain/history.js';
import { totalUsages } from '../../domain/usages.js';
import { eachConcurrently } from '../commit/journal.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from '../consumed-capacity.js';
import { listProjectConsumers } from '../consumers.js';
import { isConditionalCheckFailed, putItem, tableName } from '../dynamodb.js';
import { getItem, queryAll } from '../reads.js';
import { decodeHourTotals, encodeHourTotals, HourTotalsAttribute, hourSortKey, hourTotalsPk } from '../items/hour-totals.js';
import { decodeHourTotalsStart, encodeHourTotalsStart, HOUR_TOTALS_START_ATTRIBUTE, hourTotalsStartKey } from '../items/hour-totals-start.js';
import { listProjectEvents } from './listings.js';

const iso = (at: number): string => new Date(at).toISOString();

/** The users of a project an hour's events count for: whom each consumer is after the change, and before it. */
function usersOf(events: readonly AllocationEvent[], projectId: string): string[] {
  const users = new Set<string>();
  for (const event of events) {
    if (event.projectId === projectId) users.add(event.userId);
    if ((event.previousProjectId ?? event.projectId) === projectId) users.add(event.previousUserId ?? event.userId);
  }
  return [...users];
}

/** Writes a scope's totals of an hour unless an item written from more of the hour's events is there. */
async function putHourTotals(scope: UsageScope, totals: ReturnType<typeof hourTotals>, eventsSeen: number): Promise<void> {
  const expiresAt = Math.ceil((totals.hour + HOUR_MS) / 1000) + config.historyRetentionDays * 86_400;
  try {
    const output = await putItem({
      TableName: tableName(),
      Item: encodeHourTotals(scope, totals, eventsSeen, expiresAt),
      ConditionExpression: 'attribute_not_exists(pk) OR #seen <= :seen',
      ExpressionAttributeNames: { '#seen': HourTotalsAttribute.eventsSeen },
      ExpressionAttributeValues: { ':seen': eventsSeen },
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    });
    recordConsumedCapacity(output.ConsumedCapacity, 'write');
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
}

/** Sums again every project-hour the events fall in (the project after the change, and before it), from all of its events. */
export async function keepHourTotals(events: readonly AllocationEvent[]): Promise<void> {
  const touched = new Map<string, { projectId: string; hour: number }>();
  for (const event of events) {
    const hour = hourOf(Date.parse(event.at));
    for (const projectId of [event.projectId, event.previousProjectId ?? event.projectId]) touched.set(JSON.stringify([projectId, hour]), { projectId, hour });
  }
  await eachConcurrently([...touched.values()], async ({ projectId, hour }) => {
    const hourEvents = await listProjectEvents(projectId, { since: iso(hour), until: iso(hour + HOUR_MS), consistent: true });
    const scopes: UsageScope[] = [{ projectId }, ...usersOf(hourEvents, projectId).map((userId) => ({ projectId, userId }))];
    await Promise.all(scopes.map((scope) => putHourTotals(scope, hourTotals(hour, hourEvents, scope), hourEvents.length)));
  });
}

/**
 * Says that the hours before the next one may lack totals (a release that
 * keeps none wrote the history position), or, `fromTheStart`, that the
 * history begins with totals; the start only moves later.
 */
export async function markHourTotalsStart(fromTheStart: boolean): Promise<void> {
  const start = fromTheStart ? 0 : hourOf(Date.now()) + HOUR_MS;
  try {
    const output = await putItem({
      TableName: tableName(),
      Item: encodeHourTotalsStart(start),
      ConditionExpression: fromTheStart ? 'attribute_not_exists(pk)' : 'attribute_not_exists(pk) OR #start < :start',
      ...(fromTheStart ? {} : { ExpressionAttributeNames: { '#start': HOUR_TOTALS_START_ATTRIBUTE }, ExpressionAttributeValues: { ':start': iso(start) } }),
      ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
    });
    recordConsumedCapacity(output.ConsumedCapacity, 'write');
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
  }
}

/**
 * What a scope's resource-hours over `range` are computed from
 * (shared/domain/history.ts resourceHours): what it holds now; the totals
 * of every whole hour from the range's start on (each hour ending within
 * the range or starting after it); and the events of the rest, that is of
 * the part of the range's first hour after its start, of the hour its end
 * falls inside, and of the hours before totals were kept.
 */
export async function readUsageInputs(scope: UsageScope, range: TimeRange): Promise<UsageInputs> {
  const startItem = await getItem(hourTotalsStartKey, { consistent: false });
  const keptFrom = startItem === undefined ? Infinity : decodeHourTotalsStart(startItem);
  const firstWhole = Math.max(Math.ceil(range.since / HOUR_MS) * HOUR_MS, keptFrom);
  const lastHour = hourOf(range.until);
  const endInside = range.until !== lastHour && lastHour >= firstWhole;
  const spans: { since: string; until?: string }[] = [
    ...(firstWhole > range.since ? [{ since: iso(range.since), ...(Number.isFinite(firstWhole) ? { until: iso(firstWhole) } : {}) }] : []),
    ...(endInside ? [{ since: iso(lastHour), until: iso(lastHour + HOUR_MS) }] : []),
  ];
  const [current, events, hourItems] = await Promise.all([
    listProjectConsumers(scope.projectId, scope.userId),
    Promise.all(spans.map((span) => listProjectEvents(scope.projectId, span))),
    Number.isFinite(firstWhole)
      ? queryAll({
          KeyConditionExpression: '#pk = :pk AND #sk >= :first',
          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
          ExpressionAttributeValues: { ':pk': hourTotalsPk(scope), ':first': hourSortKey(firstWhole) },
        })
      : [],
  ]);
  return {
    held: totalUsages(current),
    hours: hourItems.map(decodeHourTotals).filter((totals) => !(endInside && totals.hour === lastHour)),
    changes: events.flat().map((event) => ({ at: Date.parse(event.at), change: heldChange(event, scope) })),
  };
}
