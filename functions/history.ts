/**
 * The allocation history, this service's own (upstream keeps none;
 * docs/operators/history.md): a consumer's or a provider's allocation
 * events, and a project's resource-hours, from the events the history
 * function made of the table's change stream. placement-admin's `history`
 * and `usage` call them. Each answer says how far the stream has been read.
 */
import { badRequest } from '../shared/api/errors.js';
import { parseTime } from '../shared/api/time.js';
import { resourceHours, type AllocationEvent } from '../shared/domain/history.js';
import { isUuidLike, normalizeUuid } from '../shared/domain/uuid.js';
import { lambdaHandler } from '../shared/http/lambda.js';
import type { Operations, Reply } from '../shared/http/types.js';
import type { PlacementRequest } from '../shared/http/request.js';
import { validateQuery } from '../shared/http/validation.js';
import { HISTORY_PAGE_LIMIT, HISTORY_USAGES_QUERY, LIST_HISTORY_QUERY } from '../shared/schemas/history.js';
import { listConsumerEvents, listProviderEvents, type EventPage, type HistoryRange } from '../shared/storage/history/listings.js';
import { readHistoryPosition } from '../shared/storage/history/stream.js';
import { readUsageInputs } from '../shared/storage/history/hour-totals.js';

/** A usage range left open at its start covers this long before its end. */
const DEFAULT_USAGE_DAYS = 30;

/** The query's times in UTC to the millisecond (the events' form); 400 for a time that is not one (shared/api/time.ts) or an empty range. */
function rangeOf(request: PlacementRequest): HistoryRange {
  const time = (name: string): string | undefined => {
    const raw = request.query.get(name);
    if (raw === undefined) return undefined;
    const parsed = parseTime(raw);
    if (parsed.time === undefined) throw badRequest(`Invalid ${name}: ${raw} is ${parsed.problem}`);
    return parsed.time.toISOString();
  };
  const since = time('since');
  const until = time('until');
  if (since !== undefined && until !== undefined && since >= until) throw badRequest(`Invalid range: since (${since}) is not before until (${until})`);
  return { since, until };
}

function uuidParam(request: PlacementRequest, name: string): string {
  const raw = request.param(name);
  if (!isUuidLike(raw)) throw badRequest(`Malformed ${name}: ${raw}`);
  return normalizeUuid(raw);
}

/** How far behind the stream the answer may be: the newest change the history function read, and when it read it. */
async function streamPosition() {
  const position = await readHistoryPosition();
  return { newest_change_read: position?.newestChangeRead ?? null, read_at: position?.readAt ?? null };
}

const eventBody = (event: AllocationEvent) => ({
  at: event.at,
  consumer: event.consumer,
  project_id: event.projectId,
  user_id: event.userId,
  consumer_type: event.consumerType,
  request_id: event.requestId,
  before: event.before,
  after: event.after,
});

/** A page's marker: the sort key of the event the previous page ended with (its commit time, its stream sequence number). */
const MARKER = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z#\d{1,64}$/;

/** Where the page starts after; 400 for a marker that is not one, or that lies outside the range asked. */
function markerOf(request: PlacementRequest, range: HistoryRange): string | undefined {
  const marker = request.query.get('marker');
  if (marker === undefined) return undefined;
  if (!MARKER.test(marker)) throw badRequest(`Invalid marker: ${marker} is not a marker of this listing (take the next link's)`);
  if ((range.since !== undefined && marker < range.since) || (range.until !== undefined && marker >= range.until))
    throw badRequest(`Invalid marker: ${marker} is outside the range asked`);
  return marker;
}

/** The next page's link: this request's path and query with the marker where this page ended. */
function nextLink(request: PlacementRequest, next: string): { rel: 'next'; href: string } {
  const query = new URLSearchParams({ ...request.query.toRecord(), marker: next });
  return { rel: 'next', href: `${request.path}?${query.toString()}` };
}

async function eventsReply(request: PlacementRequest, list: (query: HistoryRange & { limit: number; after?: string }) => Promise<EventPage>): Promise<Reply> {
  validateQuery(LIST_HISTORY_QUERY, request.query.toRecord());
  const range = rangeOf(request);
  const limit = Number(request.query.get('limit') ?? HISTORY_PAGE_LIMIT);
  if (limit > HISTORY_PAGE_LIMIT) throw badRequest(`Invalid limit: ${limit} is more than ${HISTORY_PAGE_LIMIT}`);
  const [page, stream] = await Promise.all([list({ ...range, limit, after: markerOf(request, range) }), streamPosition()]);
  return {
    status: 200,
    body: { events: page.events.map(eventBody), history_stream: stream, links: page.next === undefined ? [] : [nextLink(request, page.next)] },
    lastModified: null,
  };
}

const consumerHistory = (request: PlacementRequest): Promise<Reply> => {
  const uuid = uuidParam(request, 'consumer_uuid');
  return eventsReply(request, (query) => listConsumerEvents(uuid, query));
};

const providerHistory = (request: PlacementRequest): Promise<Reply> => {
  const uuid = uuidParam(request, 'uuid');
  return eventsReply(request, (query) => listProviderEvents(uuid, query));
};

async function usageHistory(request: PlacementRequest): Promise<Reply> {
  validateQuery(HISTORY_USAGES_QUERY, request.query.toRecord());
  const projectId = request.query.get('project_id')!;
  const userId = request.query.get('user_id');
  const asked = rangeOf(request);
  const until = asked.until ?? new Date().toISOString();
  const since = asked.since ?? new Date(Date.parse(until) - DEFAULT_USAGE_DAYS * 86_400_000).toISOString();
  if (since >= until) throw badRequest(`Invalid range: since (${since}) is not before until (${until})`);
  const range = { since: Date.parse(since), until: Date.parse(until) };
  // What is held now, and what changed it since the range began: the hours' totals and the events of the rest.
  const [inputs, stream] = await Promise.all([readUsageInputs({ projectId, userId }, range), streamPosition()]);
  // To the millionth of a resource-hour (the sums' rounding errors are far smaller); a class held for none of the range is left out.
  const rounded = Object.fromEntries(
    Object.entries(resourceHours(inputs, range))
      .map(([resourceClass, value]) => [resourceClass, Math.round(value * 1e6) / 1e6 || 0] as const)
      .filter(([, value]) => value !== 0),
  );
  return {
    status: 200,
    body: { project_id: projectId, ...(userId === undefined ? {} : { user_id: userId }), since, until, resource_hours: rounded, history_stream: stream },
    lastModified: null,
  };
}

export const operations: Operations<'history'> = {
  'GET /history/allocations/{consumer_uuid}': consumerHistory,
  'GET /history/resource_providers/{uuid}/allocations': providerHistory,
  'GET /history/usages': usageHistory,
};

export const handler = lambdaHandler(operations);
