/**
 * The allocation history's listings (docs/operators/history.md): a
 * consumer's, a provider's or a project's events in a time range, oldest
 * first, in pages.
 */
import type { AllocationEvent } from '../../domain/history.js';
import { batchGet, queryAll, queryPage } from '../reads.js';
import type { Item } from '../items/fields.js';
import { consumerHistoryPk, decodeAllocationEvent, projectHistoryPk, providerHistoryPk, referredEvent, sortKeyFrom } from '../items/allocation-event.js';

/** A time range of commit times, ISO 8601 in UTC: from `since` on, before `until`. */
export interface HistoryRange {
  since?: string;
  until?: string;
}

/** A page of events: `next` is where the next page starts after (the last event's sort key), absent on the last page. */
export interface EventPage {
  events: AllocationEvent[];
  next?: string;
}

/** What of a partition a listing reads: its range, and a page of it (at most `limit` events after the marker `after`). */
interface EventQuery extends HistoryRange {
  limit?: number;
  after?: string;
  /** Strongly consistent: every event written before the read is in it (hour totals need no less). */
  consistent?: boolean;
}

/** Events of one history partition in the range, oldest first, up to the limit. */
async function listEvents(pk: string, { since, until, limit, after, consistent = false }: EventQuery): Promise<EventPage> {
  // A sort key is `<at>#<sequence number>`: from `since` itself it is at least `since`, and at `until` itself already more than `until`.
  const range =
    since !== undefined && until !== undefined
      ? ' AND #sk BETWEEN :since AND :until'
      : since !== undefined
        ? ' AND #sk >= :since'
        : until !== undefined
          ? ' AND #sk < :until'
          : '';
  const input = {
    ...(consistent ? { ConsistentRead: true } : {}),
    KeyConditionExpression: `#pk = :pk${range}`,
    ExpressionAttributeNames: { '#pk': 'pk', ...(range === '' ? {} : { '#sk': 'sk' }) },
    ExpressionAttributeValues: {
      ':pk': pk,
      ...(since === undefined ? {} : { ':since': sortKeyFrom(since) }),
      ...(until === undefined ? {} : { ':until': sortKeyFrom(until) }),
    },
  };
  let items: Item[];
  let next: string | undefined;
  if (limit === undefined) {
    items = await queryAll(input);
  } else {
    // Pages of the query until one more than the limit is read (so that a last page says it is the last), starting
    // after the marker (inside the range: the caller checks).
    items = [];
    let start: Item | undefined = after === undefined ? undefined : { pk, sk: after };
    do {
      const page = await queryPage({ ...input, Limit: limit + 1 - items.length }, start);
      items.push(...page.items);
      start = page.next;
    } while (start !== undefined && items.length <= limit);
    if (items.length > limit) {
      items = items.slice(0, limit);
      next = items.at(-1)!.sk as string;
    }
  }
  const referred = items.map(referredEvent);
  const wanted = referred.filter((key) => key !== undefined);
  const full = new Map((wanted.length === 0 ? [] : await batchGet(wanted)).map((item) => [`${item.pk as string}/${item.sk as string}`, item]));
  const events = items.flatMap((item, n) => {
    const key = referred[n];
    const event = key === undefined ? item : full.get(`${key.pk}/${key.sk}`);
    // A referred event that lapsed (TTL) between the two reads is left out, as it would be a moment later.
    return event === undefined ? [] : [decodeAllocationEvent(event)];
  });
  return { events, next };
}

export const listConsumerEvents = (uuid: string, query: EventQuery): Promise<EventPage> => listEvents(consumerHistoryPk(uuid), query);
export const listProviderEvents = (uuid: string, query: EventQuery): Promise<EventPage> => listEvents(providerHistoryPk(uuid), query);
/** Every event of a project in the range (that its resource-hours are computed from), the consumer's or the project's before or after. */
export const listProjectEvents = async (projectId: string, query: HistoryRange & Pick<EventQuery, 'consistent'>): Promise<AllocationEvent[]> =>
  (await listEvents(projectHistoryPk(projectId), query)).events;
