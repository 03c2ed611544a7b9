/**
 * The property every fuzzed request must hold, and the session that checks
 * it against a service behind the DynamoDB fault proxy (no faults injected;
 * the proxy counts what the service sends):
 * 1. an answer below 500 (a connection closed without one fails too);
 * 2. within ANSWER_WITHIN_MS (docs/testing/hostile-input.md's bound);
 * 3. a 4xx wrote nothing: every DynamoDB write it sent (counted by the proxy
 *    before and after) was refused by DynamoDB (write-outcomes.ts: a failed
 *    condition, as a duplicate name is found). Those refused writes are
 *    counted apart, per route, and reported; a write applied is a failure.
 * Requests go one at a time, over a connection of their own, exactly as
 * materialized (node:http, no URL normalization).
 */
import { request as httpRequest } from 'node:http';
import { PlacementClient } from '../../admin/placement-client.js';
import type { FaultProxy } from '../lib/dynamodb-fault-proxy.js';
import { ensureFixture, readGenerations } from './fixture.js';
import { curlOf, materialize, ROUTE_KEYS, type FuzzRequest, type SentRequest } from './requests.js';
import type { LiveGenerations } from './values.js';
import { WRITE_OPERATIONS, type WriteOutcomes } from './write-outcomes.js';

export const ANSWER_WITHIN_MS = 3000;
/** How long a request is waited for before it counts as unanswered. */
const GIVE_UP_MS = 60_000;
/** Accepted requests wear the fixture down: it is put back every so many requests. */
const REFRESH_EVERY = 150;

export type Problem = '5xx' | 'no answer' | 'slow' | 'write on 4xx';

export interface Verdict {
  sent: SentRequest;
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

/** `applied`: writes sent that DynamoDB did not refuse (a write neither side accounts for counts as applied). */
export function problemsOf(status: number, ms: number, applied: number): Problem[] {
  const problems: Problem[] = [];
  if (status === 0) problems.push('no answer');
  if (status >= 500) problems.push('5xx');
  if (ms >= ANSWER_WITHIN_MS) problems.push('slow');
  if (is4xx(status) && applied > 0) problems.push('write on 4xx');
  return problems;
}

/** Requests per route and status class, and the failures. */
export class Tally {
  readonly byRoute = new Map<string, Map<string, number>>(ROUTE_KEYS.map((key) => [key, new Map()]));
  readonly failures: { verdict: Verdict; path?: string }[] = [];
  /** 4xx answers that sent writes DynamoDB refused (nothing written), by route. */
  readonly refusedOn4xx = new Map<string, number>();
  total = 0;
  slowest = 0;

  add(verdict: Verdict, path?: string): void {
    this.total++;
    this.slowest = Math.max(this.slowest, verdict.ms);
    const statusClass = verdict.status === 0 ? 'none' : `${Math.floor(verdict.status / 100)}xx`;
    const classes = this.byRoute.get(verdict.sent.route)!;
    classes.set(statusClass, (classes.get(statusClass) ?? 0) + 1);
    if (verdict.problems.length > 0) this.failures.push({ verdict, path });
    if (is4xx(verdict.status) && verdict.refused > 0) this.refusedOn4xx.set(verdict.sent.route, (this.refusedOn4xx.get(verdict.sent.route) ?? 0) + 1);
  }

  count(problem: Problem): number {
    return this.failures.filter(({ verdict }) => verdict.problems.includes(problem)).length;
  }

  routesNotCovered(): string[] {
    return [...this.byRoute].filter(([, classes]) => [...classes.values()].every((n) => n === 0)).map(([key]) => key);
  }

  /** A Markdown table: one row per route, a column per status class. */
  table(): string {
    const columns = ['2xx', '4xx', '5xx', 'none'];
    const rows = [...this.byRoute].map(([key, classes]) => {
      const counts = columns.map((column) => classes.get(column) ?? 0);
      return `| \`${key}\` | ${counts.reduce((a, b) => a + b, 0)} | ${counts.join(' | ')} |`;
    });
    return ['| Route | Requests | 2xx | 4xx | 5xx | no answer |', '| --- | ---: | ---: | ---: | ---: | ---: |', ...rows].join('\n');
  }
}

/** What to print of a failure so that it can be sent again. */
export function describeFailure(verdict: Verdict, baseUrl: string, replay?: string): string {
  const writes = Object.entries(verdict.writes)
    .filter(([, n]) => n > 0)
    .map(([operation, n]) => `${operation} ${n}`)
    .join(', ');
  const outcome = writes ? ` after sending writes (${writes}; ${verdict.applied} applied, ${verdict.refused} refused)` : '';
  return [
    `${verdict.problems.join(', ')}: ${verdict.sent.route} answered ${verdict.status || 'nothing'} in ${verdict.ms.toFixed(0)} ms${outcome}`,
    `answer: ${verdict.answer.slice(0, 500)}`,
    `replay: ${curlOf(verdict.sent, baseUrl)}`,
    ...(replay === undefined ? [] : [`fast-check: ${replay}`]),
  ].join('\n');
}

/** A service behind the fault proxy, its fixture, and the requests checked against it. */
export class FuzzSession {
  readonly tally = new Tally();
  private readonly api: PlacementClient;
  private live: LiveGenerations | undefined;
  private sinceRefresh = 0;

  constructor(
    readonly baseUrl: string,
    private readonly proxy: FaultProxy,
    private readonly outcomes: WriteOutcomes,
  ) {
    this.api = new PlacementClient(baseUrl, { version: 'latest' });
  }

  async start(): Promise<void> {
    await ensureFixture(this.api, true);
    this.live = await readGenerations(this.api);
  }

  /** Sends one request and judges its answer; `path` (fast-check's, to replay it) goes with a failure. */
  async check(request: FuzzRequest, path?: string): Promise<Verdict> {
    if (++this.sinceRefresh > REFRESH_EVERY) {
      this.sinceRefresh = 0;
      await ensureFixture(this.api, false);
      this.live = await readGenerations(this.api);
    }
    const sent = materialize(request, this.live!);
    const before = { sent: writesOf(this.proxy.requests()), refused: sum(this.outcomes.refused()) };
    const answer = await sendExactly(this.baseUrl, sent);
    const after = writesOf(this.proxy.requests());
    const writes = Object.fromEntries(WRITE_OPERATIONS.map((operation) => [operation, after[operation]! - before.sent[operation]!]));
    const refused = sum(this.outcomes.refused()) - before.refused;
    const total = sum(writes);
    const verdict: Verdict = {
      sent,
      status: answer.status,
      ms: answer.ms,
      writes,
      applied: total - refused,
      refused,
      answer: answer.text,
      problems: problemsOf(answer.status, answer.ms, total - refused),
    };
    this.tally.add(verdict, path);
    // An accepted change moved a generation: the next bodies carry the new ones.
    if (verdict.applied > 0) this.live = await readGenerations(this.api);
    return verdict;
  }
}
