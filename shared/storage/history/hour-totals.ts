/**
 * Resource-hours kept as they happen (docs/operators/history.md): the
 * history function adds each allocation event to its hour's totals, per
 * project and per user of it (items/hour-totals.ts), and a project's usage
 * over a month reads those hours instead of every event.
 *
 * An event's item under its project and its additions to the totals are
 * one transaction, conditioned on that item being new: a batch the stream
 * gives again adds nothing twice, and each event costs the same however
 * many its project has in the hour.
 */
import { config } from '../../config.js';
import { heldChange, HOUR_MS, hourOf, hourTotals, type AllocationEvent, type TimeRange, type UsageInputs, type UsageScope } from '../../domain/history.js';
import { totalUsages } from '../../domain/usages.js';
import { eachConcurrently } from '../commit/journal.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from '../consumed-capacity.js';
import { listProjectConsumers } from '../consumers.js';
import { isConditionalCheckFailed, putItem, tableName } from '../dynamodb.js';
import { getItem, queryAll } from '../reads.js';
import { addToHourTotals, decodeHourTotals, hourSortKey, hourTotalsPk } from '../items/hour-totals.js';
import type { Item } from '../items/fields.js';
import { readPlanCommit } from '../commit/transaction.js';
import type { Write } from '../commit/write.js';
import { decodeHourTotalsStart, encodeHourTotalsStart, HOUR_TOTALS_START_ATTRIBUTE, hourTotalsStartKey } from '../items/hour-totals-start.js';
import { listProjectEvents } from './listings.js';

const iso = (at: number): string => new Date(at).toISOString();

/** Whose totals an event changes: its project and user after the change, and before it. */
function scopesOf(event: AllocationEvent): UsageScope[] {
  const before = { projectId: event.previousProjectId ?? event.projectId, userId: event.previousUserId ?? event.userId };
  const after = { projectId: event.projectId, userId: event.userId };
  const scopes = [{ projectId: after.projectId }, after, { projectId: before.projectId }, before];
  return [...new Map(scopes.map((scope) => [JSON.stringify(scope), scope])).values()];
}

/** The event is recorded under its project already: the stream gave its batch again. */
class AlreadyRecorded extends Error {}

/**
 * Records an event under its projects and adds it to the totals of its
 * hour, in one transaction conditioned on the project's item being new.
 */
async function recordWithTotals({ event, projectItems }: ProjectEvent): Promise<void> {
  const hour = hourOf(Date.parse(event.at));
  const expiresAt = Math.ceil((hour + HOUR_MS) / 1000) + config.historyRetentionDays * 86_400;
  const writes: Write[] = [
    ...projectItems.map((item): Write => ({
      item: { Put: { TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      onConditionFailed: () => new AlreadyRecorded(),
    })),
    ...scopesOf(event).flatMap((scope): Write[] => {
      const totals = hourTotals(hour, [event], scope);
      return Object.keys(totals.change).length === 0 ? [] : [{ item: addToHourTotals(tableName(), scope, totals, expiresAt) }];
    }),
  ];
  try {
    await readPlanCommit(async () => ({ writes }));
  } catch (error) {
    if (!(error instanceof AlreadyRecorded)) throw error;
  }
}

/** An event and its items under its projects (items/allocation-event.ts). */
export interface ProjectEvent {
  event: AllocationEvent;
  projectItems: Item[];
}

/**
 * Records the events under their projects and adds each to its hour's
 * totals, exactly once however often the stream gives the batch: a
 * project's events one after another (they add to the same items), the
 * projects side by side.
 */
export async function recordProjectEvents(events: readonly ProjectEvent[]): Promise<void> {
  const byProject = new Map<string, ProjectEvent[]>();
  for (const one of events) byProject.set(one.event.projectId, [...(byProject.get(one.event.projectId) ?? []), one]);
  await eachConcurrently([...byProject.values()], async (ofProject) => {
    for (const one of ofProject) await recordWithTotals(one);
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
