/**
 * placement-admin history and usage: what happened to a consumer's or a
 * provider's allocations, and a project's resource-hours, from this
 * service's allocation history (GET /history/..., docs/operators/history.md;
 * upstream keeps none).
 */
import { command, UsageError } from '../command-line.js';
import { parseTime } from '../../shared/api/time.js';
import { connect, expectStatus } from '../endpoint.js';
import { THIS_SERVICE_URL, TOKEN } from './options.js';

type Holdings = Record<string, Record<string, number>>;

/** One event as the history routes answer it (and `history --json` prints it). */
export interface HistoryEvent {
  at: string;
  consumer: string;
  project_id: string;
  user_id: string;
  consumer_type: string | null;
  request_id: string | null;
  before: Holdings;
  after: Holdings;
}

interface StreamPosition {
  newest_change_read: string | null;
  read_at: string | null;
}

/** One answer of a history listing: a page of events, and the next page's link unless it is the last. */
interface HistoryPage {
  events: HistoryEvent[];
  history_stream: StreamPosition;
  links?: { rel: string; href: string }[];
}

const CONNECTION = {
  url: THIS_SERVICE_URL,
  token: TOKEN,
} as const;
const RANGE = {
  since: { type: 'string', value: 'TIME', help: 'from this time on (ISO 8601, e.g. 2026-11-26T17:00:00Z)' },
  until: { type: 'string', value: 'TIME', help: 'before this time (ISO 8601)' },
} as const;

/** The range's times as the service reads them (shared/api/time.ts), so that a typo is told here, naming its option. */
function checkRange(values: { since?: string; until?: string }): void {
  for (const name of ['since', 'until'] as const) {
    const text = values[name];
    const problem = text === undefined ? undefined : parseTime(text).problem;
    if (problem !== undefined) throw new UsageError(`--${name} ${text}: ${problem}`);
  }
}

const query = (parameters: Record<string, string | undefined>): string => {
  const given = Object.entries(parameters).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return given.length === 0 ? '' : `?${new URLSearchParams(given).toString()}`;
};

/** The answer may miss the changes committed since the stream was last read: said on stderr, so that --json stays exact. */
function warnOfLag(stream: StreamPosition): void {
  const read = stream.newest_change_read === null ? 'nothing yet' : `changes up to ${stream.newest_change_read} (read at ${stream.read_at})`;
  console.error(`history: the change stream was read to ${read}; a change after that may not be listed yet`);
}

const holdingsLine = (holdings: Holdings): string =>
  Object.keys(holdings).length === 0
    ? 'nothing'
    : Object.entries(holdings)
        .map(
          ([provider, resources]) =>
            `${provider}: ${Object.entries(resources)
              .map(([name, amount]) => `${name} ${amount}`)
              .join(', ')}`,
        )
        .join('; ');

const eventLines = (event: HistoryEvent): string[] => [
  `${event.at}  consumer ${event.consumer} (${event.consumer_type ?? 'no type'}, project ${event.project_id}, user ${event.user_id})  ${event.request_id ?? 'no request id'}`,
  `    before  ${holdingsLine(event.before)}`,
  `    after   ${holdingsLine(event.after)}`,
];

export const history = command({
  name: 'history',
  summary: "what happened to a consumer's or a provider's allocations: every change, oldest first",
  synopsis: '--url URL [--token T] (--consumer U | --provider P) [--since TIME] [--until TIME] [--page-size N] [--json]',
  description: [
    "Asks this service's allocation history (admins only by default) for every committed change of a consumer's",
    'allocations, or of the allocations of every consumer on a provider: when it committed, which request made it,',
    'who the consumer is, and what it held before and after. A 409 or a rolled-back change is not there: it changed',
    'nothing. docs/operators/history.md says what is recorded, its delay and its retention.',
  ].join('\n'),
  options: {
    ...CONNECTION,
    consumer: { type: 'string', value: 'U', help: "the consumer's uuid (an instance, a migration)" },
    provider: { type: 'string', value: 'P', help: "the resource provider's uuid" },
    ...RANGE,
    'page-size': { type: 'string', value: 'N', help: 'events asked per request, 1 to 1000 (default 1000); every page is read' },
    json: { type: 'boolean', help: 'print {"events": [...]}, oldest first' },
  },
  check: (values) => {
    if ((values.consumer === undefined) === (values.provider === undefined)) throw new UsageError('give one of --consumer and --provider');
    checkRange(values);
    const size = values['page-size'];
    if (size !== undefined && !(/^\d+$/.test(size) && Number(size) >= 1 && Number(size) <= 1000))
      throw new UsageError(`--page-size ${size}: a whole number from 1 to 1000`);
  },
  run: async (values) => {
    const { client } = await connect(values.url!, values.token);
    const path =
      values.consumer !== undefined
        ? `/history/allocations/${encodeURIComponent(values.consumer)}`
        : `/history/resource_providers/${encodeURIComponent(values.provider!)}/allocations`;
    // Page after page, following each answer's next link.
    const events: HistoryEvent[] = [];
    let stream: StreamPosition | undefined;
    for (let url: string | undefined = `${path}${query({ since: values.since, until: values.until, limit: values['page-size'] })}`; url !== undefined;) {
      const body = expectStatus(await client.get(url), [200], `GET ${url}`).body as HistoryPage;
      events.push(...body.events);
      stream ??= body.history_stream;
      url = body.links?.find((link) => link.rel === 'next')?.href;
    }
    warnOfLag(stream!);
    if (values.json) {
      const printed = events.map(({ at, consumer, project_id, user_id, consumer_type, request_id, before, after }) => ({
        at,
        consumer,
        project_id,
        user_id,
        consumer_type,
        request_id,
        before,
        after,
      }));
      console.log(JSON.stringify({ events: printed }));
    } else {
      console.log(events.length === 0 ? 'no allocation changes in the range' : events.flatMap(eventLines).join('\n'));
    }
    return 0;
  },
});

export const usage = command({
  name: 'usage',
  summary: "a project's resource-hours over a time range, from the allocation history",
  synopsis: '--url URL [--token T] --project P [--user U] [--since TIME] [--until TIME] [--json]',
  description: [
    "What a project's consumers (or one user's) held over the range, per resource class, in resource-hours:",
    '4 VCPU held for 30 minutes is 2 VCPU-hours. --until defaults to now, --since to 30 days before --until.',
    'Computed by the service from its allocation history (docs/operators/history.md).',
  ].join('\n'),
  options: {
    ...CONNECTION,
    project: { type: 'string', value: 'P', help: 'the project id', required: true },
    user: { type: 'string', value: 'U', help: "only this user's consumers" },
    ...RANGE,
    json: { type: 'boolean', help: 'print {"project_id", "since", "until", "resourceHours": {CLASS: X}}' },
  },
  check: checkRange,
  run: async (values) => {
    const { client } = await connect(values.url!, values.token);
    const url = `/history/usages${query({ project_id: values.project, user_id: values.user, since: values.since, until: values.until })}`;
    const body = expectStatus(await client.get(url), [200], `GET ${url}`).body as {
      project_id: string;
      since: string;
      until: string;
      resource_hours: Record<string, number>;
      history_stream: StreamPosition;
    };
    warnOfLag(body.history_stream);
    if (values.json) {
      console.log(JSON.stringify({ project_id: body.project_id, since: body.since, until: body.until, resourceHours: body.resource_hours }));
      return 0;
    }
    const classes = Object.entries(body.resource_hours);
    const width = Math.max(0, ...classes.map(([name]) => name.length));
    const who = values.user === undefined ? `project ${body.project_id}` : `project ${body.project_id}, user ${values.user}`;
    console.log(
      [
        `${who}, ${body.since} to ${body.until}:`,
        ...(classes.length === 0 ? ['  nothing held'] : classes.map(([name, hours]) => `  ${name.padEnd(width)}  ${hours} resource-hours`)),
      ].join('\n'),
    );
    return 0;
  },
});
