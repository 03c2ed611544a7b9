/**
 * The property every fuzzed request must hold, and the session that checks
 * it against a service behind the DynamoDB fault proxy (no faults injected;
 * the proxy counts what the service sends):
 * 1. an answer below 500 (a connection closed without one fails too);
 * 2. within ANSWER_WITHIN_MS (docs/testing/hostile-input.md's bound);
 * 3. a 4xx leaves the stored state as it was. A request that may roll back
 *    (a change of several steps, writes ahead of a commit: `mayRollBack`)
 *    writes on its way to a 4xx and takes it back, so the state it may touch
 *    is read through the API before and after (readState) and compared.
 *    Any other request commits in one transaction, which is whole or not at
 *    all: every DynamoDB write it sent (counted by the proxy) must have been
 *    refused by DynamoDB (write-outcomes.ts: a failed condition, as a
 *    duplicate name is found). Refused writes, and rollbacks that left the
 *    state as it was, are counted apart per route and reported.
 * Each answer is counted under the route that answered it, as the router
 * matches the method and path sent (a broken path may reach another route,
 * or none), by status class and by mode; every route must have answered a
 * clean request with a 2xx (Tally.routesNotCovered).
 * Requests go one at a time, over a connection of their own, exactly as
 * materialized (node:http, no URL normalization).
 */
import { request as httpRequest } from 'node:http';
import { PlacementClient } from '../../admin/placement-client.js';
import { matchRoute } from '../../shared/http/route-matcher.js';
import { routeKey } from '../../shared/http/routes.js';
import type { FaultProxy } from '../lib/dynamodb-fault-proxy.js';
import { ensureFixture, readGenerations, readState, stateChanges, type StoredState } from './fixture.js';
import { curlOf, materialize, ROUTE_KEYS, type FuzzRequest, type SentRequest } from './requests.js';
import type { LiveGenerations } from './values.js';
import { WRITE_OPERATIONS, type WriteOutcomes } from './write-outcomes.js';

export const ANSWER_WITHIN_MS = 3000;
/** How long a request is waited for before it counts as unanswered. */
const GIVE_UP_MS = 60_000;
/** Accepted requests wear the fixture down: it is put back every so many requests. */
const REFRESH_EVERY = 100;

export type Problem = '5xx' | 'no answer' | 'slow' | 'write on 4xx' | 'state changed on 4xx';

/** Where an answer is counted when no route matched the method and path sent (the router's 404 or 405). */
export const NO_ROUTE = '(no route)';

/** The route that answers the method and target sent, as the router matches them (its route key), or NO_ROUTE. */
export function answeringRoute(method: string, target: string): string {
  const mark = target.indexOf('?');
  const match = matchRoute(method.toUpperCase(), mark < 0 ? target : target.slice(0, mark));
  return match === undefined ? NO_ROUTE : routeKey(match.route);
}

export interface Verdict {
  sent: SentRequest;
  /** The route that answered (answeringRoute), which may not be the one the request was drawn for. */
  answeredBy: string;
  /** 0: no answer. */
  status: number;
  ms: number;
  /** DynamoDB writes the service sent while answering, by operation (the proxy's count). */
  writes: Record<string, number>;
  /** Of those, how many DynamoDB applied and how many it refused. */
  applied: number;
  refused: number;
  /** The answer's start (or the transport error). */
  answer: string;
  /** For a request that may roll back: what of the stored state differs after it (empty: nothing). */
  stateChanges?: string[];
  problems: Problem[];
}

interface Answer {
  status: number;
  ms: number;
  text: string;
}

/** Sends the bytes as they are on a connection of their own; status 0 when the connection ends without an answer. */
export function sendExactly(baseUrl: string, sent: SentRequest): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve) => {
    // A length rather than chunks, as curl sends it.
    const headers = sent.body === undefined ? sent.headers : { ...sent.headers, 'content-length': String(sent.body.length) };
    const outgoing = httpRequest({ hostname, port, method: sent.method, path: sent.target, headers, agent: false }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', (error) => resolve({ status: 0, ms: performance.now() - started, text: `answer cut: ${error.message}` }));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, ms: performance.now() - started, text: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.setTimeout(GIVE_UP_MS, () => outgoing.destroy(new Error(`no answer within ${GIVE_UP_MS} ms`)));
    outgoing.on('error', (error) => resolve({ status: 0, ms: performance.now() - started, text: `no answer: ${error.message}` }));
    outgoing.end(sent.body);
  });
}

const writesOf = (counts: Record<string, number>): Record<string, number> =>
  Object.fromEntries(WRITE_OPERATIONS.map((operation) => [operation, counts[operation] ?? 0]));

const is4xx = (status: number) => status >= 400 && status < 500;
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/**
 * `applied`: writes sent that DynamoDB did not refuse (a write neither side
 * accounts for counts as applied); `stateChanges`: for a request that may
 * roll back, what of the stored state it changed (its 4xx is judged by
 * that, not by its writes).
 */
export function problemsOf(status: number, ms: number, applied: number, stateChanges?: string[]): Problem[] {
  const problems: Problem[] = [];
  if (status === 0) problems.push('no answer');
  if (status >= 500) problems.push('5xx');
  if (ms >= ANSWER_WITHIN_MS) problems.push('slow');
  if (is4xx(status)) {
    if (stateChanges === undefined && applied > 0) problems.push('write on 4xx');
    if (stateChanges !== undefined && stateChanges.length > 0) problems.push('state changed on 4xx');
  }
  return problems;
}

const STATUS_CLASSES = ['2xx', '4xx', '5xx', 'none'];
const classOf = (status: number) => (status === 0 ? 'none' : `${Math.floor(status / 100)}xx`);
const bump = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

/** Answers per answering route, by status class and (clean requests) how many a 2xx; and the failures. */
export class Tally {
  /** Status classes per route that answered (NO_ROUTE last, when any request reached none). */
  readonly byRoute: Map<string, Map<string, number>>;
  /** Per answering route: clean requests, and how many of them were answered with a 2xx. */
  readonly clean: Map<string, { requests: number; ok: number }>;
  readonly failures: { verdict: Verdict; path?: string }[] = [];
  /** 4xx answers that sent writes DynamoDB refused (nothing written), by route. */
  readonly refusedOn4xx = new Map<string, number>();
  /** 4xx answers of requests that may roll back which applied writes and left the stored state as it was, by route. */
  readonly rolledBackOn4xx = new Map<string, number>();
  /** Requests per mode. */
  readonly modes = new Map<string, number>();
  /** Rollback bodies per route drawn for, by outcome: a status class; of a 4xx, whether it wrote nothing, rolled back, or changed the state. */
  readonly rollbacks = new Map<string, Map<string, number>>();
  total = 0;
  slowest = 0;

  /** `routes`: the route keys that must each answer a clean request with a 2xx (by default the whole route table). */
  constructor(readonly routes: readonly string[] = ROUTE_KEYS) {
    this.byRoute = new Map(routes.map((key) => [key, new Map()]));
    this.clean = new Map(routes.map((key) => [key, { requests: 0, ok: 0 }]));
  }

  add(verdict: Verdict, path?: string): void {
    this.total++;
    this.slowest = Math.max(this.slowest, verdict.ms);
    bump(this.modes, verdict.sent.mode);
    const route = verdict.answeredBy;
    if (!this.byRoute.has(route)) this.byRoute.set(route, new Map());
    bump(this.byRoute.get(route)!, classOf(verdict.status));
    if (verdict.sent.mode === 'clean') {
      const clean = this.clean.get(route) ?? { requests: 0, ok: 0 };
      clean.requests++;
      if (verdict.status >= 200 && verdict.status < 300) clean.ok++;
      this.clean.set(route, clean);
    }
    if (verdict.problems.length > 0) this.failures.push({ verdict, path });
    if (is4xx(verdict.status) && verdict.refused > 0) bump(this.refusedOn4xx, route);
    if (is4xx(verdict.status) && verdict.stateChanges?.length === 0 && verdict.applied > 0) bump(this.rolledBackOn4xx, route);
    if (verdict.sent.mode === 'rollback') {
      if (!this.rollbacks.has(verdict.sent.route)) this.rollbacks.set(verdict.sent.route, new Map());
      const written = verdict.stateChanges?.length ? '4xx, state changed' : verdict.applied > 0 ? 'rolled back' : '4xx, nothing written';
      bump(this.rollbacks.get(verdict.sent.route)!, is4xx(verdict.status) ? written : classOf(verdict.status));
    }
  }

  count(problem: Problem): number {
    return this.failures.filter(({ verdict }) => verdict.problems.includes(problem)).length;
  }

  /** The routes that answered no clean request with a 2xx: a route answering only errors (or never reached) is not covered. */
  routesNotCovered(): string[] {
    return this.routes.filter((key) => (this.clean.get(key)?.ok ?? 0) === 0);
  }

  /** A Markdown table: one row per route that answered (NO_ROUTE last), a column per status class, then clean requests and their 2xx. */
  table(): string {
    const keys = [...this.routes, ...[...this.byRoute.keys()].filter((key) => !this.routes.includes(key)).sort()];
    const rows = keys.map((key) => {
      const classes = this.byRoute.get(key)!;
      const counts = STATUS_CLASSES.map((column) => classes.get(column) ?? 0);
      const clean = this.clean.get(key) ?? { requests: 0, ok: 0 };
      const name = key === NO_ROUTE ? key : `\`${key}\``;
      return `| ${name} | ${counts.reduce((a, b) => a + b, 0)} | ${counts.join(' | ')} | ${clean.requests} | ${clean.ok} |`;
    });
    return [
      '| Route that answered | Requests | 2xx | 4xx | 5xx | no answer | Clean | Clean 2xx |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n');
  }
}

/** What to print of a failure so that it can be sent again. */
export function describeFailure(verdict: Verdict, baseUrl: string, replay?: string): string {
  const writes = Object.entries(verdict.writes)
    .filter(([, n]) => n > 0)
    .map(([operation, n]) => `${operation} ${n}`)
    .join(', ');
  const outcome = writes ? ` after sending writes (${writes}; ${verdict.applied} applied, ${verdict.refused} refused)` : '';
  const drawn = verdict.answeredBy === verdict.sent.route ? '' : ` (drawn for ${verdict.sent.route})`;
  return [
    `${verdict.problems.join(', ')}: ${verdict.answeredBy}${drawn}, a ${verdict.sent.mode} request, answered ${verdict.status || 'nothing'} in ${verdict.ms.toFixed(0)} ms${outcome}`,
    `answer: ${verdict.answer.slice(0, 500)}`,
    ...(verdict.stateChanges?.length ? [`state changed: ${verdict.stateChanges.join('; ').slice(0, 2000)}`] : []),
    `replay: ${curlOf(verdict.sent, baseUrl)}`,
    ...(replay === undefined ? [] : [`fast-check: ${replay}`]),
  ].join('\n');
}

/** A service behind the fault proxy, its fixture, and the requests checked against it. */
export class FuzzSession {
  readonly tally: Tally;
  private readonly api: PlacementClient;
  private live: LiveGenerations | undefined;
  private sinceRefresh = 0;

  /**
   * `baseUrl` receives the fuzzed requests; the fixture is made, and the
   * state read, at `serviceUrl` (by default the same). `routes`: those that
   * must each answer a clean request with a 2xx (by default all).
   */
  constructor(
    readonly baseUrl: string,
    private readonly proxy: FaultProxy,
    private readonly outcomes: WriteOutcomes,
    { serviceUrl = baseUrl, routes }: { serviceUrl?: string; routes?: readonly string[] } = {},
  ) {
    this.api = new PlacementClient(serviceUrl, { version: 'latest' });
    this.tally = new Tally(routes);
  }

  /** The rollback bodies' tree is made only where its route is fuzzed. */
  private get withTree(): boolean {
    return this.tally.routes.includes('PUT /resource_providers/{uuid}');
  }

  async start(): Promise<void> {
    await ensureFixture(this.api, true, { tree: this.withTree });
    this.live = await readGenerations(this.api);
  }

  /** Sends one request and judges its answer; `path` (fast-check's, to replay it) goes with a failure. */
  async check(request: FuzzRequest, path?: string): Promise<Verdict> {
    if (++this.sinceRefresh > REFRESH_EVERY) {
      this.sinceRefresh = 0;
      await ensureFixture(this.api, false, { tree: this.withTree });
      this.live = await readGenerations(this.api);
    }
    const sent = materialize(request, this.live!);
    const stateBefore: StoredState | undefined = sent.mayRollBack ? await readState(this.api) : undefined;
    const before = { sent: writesOf(this.proxy.requests()), refused: sum(this.outcomes.refused()) };
    const answer = await sendExactly(this.baseUrl, sent);
    const after = writesOf(this.proxy.requests());
    const writes = Object.fromEntries(WRITE_OPERATIONS.map((operation) => [operation, after[operation]! - before.sent[operation]!]));
    const refused = sum(this.outcomes.refused()) - before.refused;
    const total = sum(writes);
    // Only a 4xx is held to the state it found; a 2xx changed it.
    const changes = stateBefore !== undefined && is4xx(answer.status) ? stateChanges(stateBefore, await readState(this.api)) : undefined;
    const verdict: Verdict = {
      sent,
      answeredBy: answeringRoute(sent.method, sent.target),
      status: answer.status,
      ms: answer.ms,
      writes,
      applied: total - refused,
      refused,
      answer: answer.text,
      ...(changes && { stateChanges: changes }),
      problems: problemsOf(answer.status, answer.ms, total - refused, changes),
    };
    this.tally.add(verdict, path);
    // An accepted change moved a generation: the next bodies carry the new ones.
    if (verdict.applied > 0) this.live = await readGenerations(this.api);
    return verdict;
  }
}
