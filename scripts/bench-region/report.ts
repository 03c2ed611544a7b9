/**
 * What a run of the region benchmark measured, per request kind and in
 * total, and whether the target kept up; printed as markdown tables.
 */
import { KINDS, type Kind, type RunResult, type Sample } from './nova.js';

/** What the service's own records say about one request. */
export interface RequestRecord {
  read: number;
  write: number;
  /** Milliseconds in the handler. */
  handlerMs: number;
  /** Its share of the bytes of its route's metric aggregates (what CloudWatch Logs ingests for it). */
  logBytes: number;
  /** DynamoDB requests made, and the longest chain of them made one after another. */
  dynamoRequests: number;
  criticalPath: number;
}

export interface KindSummary {
  kind: Kind;
  count: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** No answer or a 5xx. */
  errors: number;
  /** 4xx other than the claims' 409 and the deletes' 404, which nova expects. */
  clientErrors: number;
  /** Mean bytes of the response bodies. */
  responseBytes: number;
  /** Means over the requests whose record was found; undefined without records. */
  units?: { read: number; write: number; handlerMs: number; handlerP50: number; billedMs: number; logBytes: number; matched: number };
}

export interface RunSummary {
  target: string;
  nodes: number;
  instancesPerNode: number;
  seconds: number;
  requests: number;
  perSecond: number;
  perNodeHour: number;
  p50: number;
  p99: number;
  errors: number;
  cycles: number;
  failedCycles: number;
  lateCycles: number;
  maxLagMs: number;
  boots: number;
  failedBoots: number;
  deletes: number;
  unfinished: number;
  keptUp: boolean;
  /** Kept up, no errors and p99 under the bound. */
  sustained: boolean;
  kinds: KindSummary[];
}

const P99_BOUND_MS = 1000;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const isError = (sample: Sample) => sample.status === 0 || sample.status >= 500;
const expectedClientError = (sample: Sample) =>
  (sample.kind === KINDS.claim && sample.status === 409) || (sample.kind === KINDS.delete && sample.status === 404);

export function summarise(
  target: string,
  nodes: number,
  instancesPerNode: number,
  run: RunResult,
  record?: (requestId: string) => RequestRecord | undefined,
): RunSummary {
  const { recorder, windowStart, windowEnd } = run;
  const seconds = (windowEnd - windowStart) / 1000;
  const inWindow = recorder.samples.filter((sample) => sample.start >= windowStart && sample.start < windowEnd);
  const kinds: KindSummary[] = [];
  for (const kind of Object.values(KINDS)) {
    const samples = inWindow.filter((sample) => sample.kind === kind);
    if (samples.length === 0) continue;
    const latencies = samples.map((sample) => sample.ms).sort((a, b) => a - b);
    const summary: KindSummary = {
      kind,
      count: samples.length,
      perSecond: samples.length / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      errors: samples.filter(isError).length,
      clientErrors: samples.filter((sample) => sample.status >= 400 && sample.status < 500 && !expectedClientError(sample)).length,
      responseBytes: mean(samples.map((sample) => sample.bytes)),
    };
    if (record) {
      const records = samples.flatMap((sample) => (sample.requestId ? (record(sample.requestId) ?? []) : []));
      if (records.length > 0) {
        const handler = records.map((one) => one.handlerMs).sort((a, b) => a - b);
        summary.units = {
          read: mean(records.map((one) => one.read)),
          write: mean(records.map((one) => one.write)),
          handlerMs: mean(handler),
          handlerP50: percentile(handler, 50),
          // Lambda bills whole milliseconds.
          billedMs: mean(handler.map(Math.ceil)),
          logBytes: mean(records.map((one) => one.logBytes)),
          matched: records.length,
        };
      }
    }
    kinds.push(summary);
  }
  const all = inWindow.map((sample) => sample.ms).sort((a, b) => a - b);
  const lags = recorder.lags.filter((lag) => lag.lagMs > 0);
  const errors = inWindow.filter(isError).length;
  const keptUp = run.unfinished === 0 && lags.length === 0 && recorder.failedCycles === 0;
  return {
    target,
    nodes,
    instancesPerNode,
    seconds,
    requests: inWindow.length,
    perSecond: inWindow.length / seconds,
    perNodeHour: nodes === 0 ? 0 : ((inWindow.length / seconds) * 3600) / nodes,
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    errors,
    cycles: recorder.cycles,
    failedCycles: recorder.failedCycles,
    lateCycles: lags.length,
    maxLagMs: lags.length === 0 ? 0 : Math.max(...lags.map((lag) => lag.lagMs)),
    boots: recorder.boots,
    failedBoots: recorder.failedBoots,
    deletes: recorder.deletes,
    unfinished: run.unfinished,
    keptUp,
    sustained: keptUp && errors === 0 && all.length > 0 && percentile(all, 99) < P99_BOUND_MS,
    kinds,
  };
}

const row = (...cells: unknown[]) => `| ${cells.join(' | ')} |`;
const header = (...cells: string[]) => `${row(...cells)}\n${row(...cells.map(() => '---'))}`;
const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(value < 100 ? 1 : 0));

export function runTable(runs: RunSummary[]): string {
  const lines = [
    header(
      'target',
      'nodes',
      'V',
      's',
      'requests',
      'req/s',
      'req per node-hour',
      'p50 ms',
      'p99 ms',
      'errors',
      'cycles (failed, late > 1 s)',
      'boots (failed) / deletes',
      'kept up',
      `sustained (p99 < ${P99_BOUND_MS} ms)`,
    ),
  ];
  for (const run of runs) {
    lines.push(
      row(
        run.target,
        run.nodes,
        run.instancesPerNode,
        run.seconds,
        run.requests,
        run.perSecond.toFixed(1),
        run.perNodeHour.toFixed(0),
        ms(run.p50),
        ms(run.p99),
        run.errors,
        `${run.cycles} (${run.failedCycles}, ${run.lateCycles}${run.lateCycles > 0 ? `, max ${(run.maxLagMs / 1000).toFixed(1)} s` : ''})`,
        `${run.boots} (${run.failedBoots}) / ${run.deletes}`,
        run.keptUp ? 'yes' : `no${run.unfinished > 0 ? ` (${run.unfinished} unanswered)` : ''}`,
        run.sustained ? 'yes' : 'no',
      ),
    );
  }
  return lines.join('\n');
}

/** Per request kind, the targets side by side. */
export function kindTable(runs: RunSummary[]): string {
  const withUnits = runs.filter((run) => run.kinds.some((kind) => kind.units));
  const cells = runs.flatMap((run) => [`${run.target} req/s`, `${run.target} p50 ms`, `${run.target} p99 ms`, `${run.target} errors`]);
  const unitCells = withUnits.flatMap((run) => [`${run.target} read units`, `write units`, `handler ms mean / p50`, `log bytes`]);
  const lines = [header('request', ...cells, ...unitCells)];
  for (const kind of Object.values(KINDS)) {
    const found = runs.map((run) => run.kinds.find((summary) => summary.kind === kind));
    if (found.every((summary) => summary === undefined)) continue;
    const measured = found.flatMap((summary) =>
      summary ? [summary.perSecond.toFixed(2), ms(summary.p50), ms(summary.p99), summary.errors + summary.clientErrors] : ['-', '-', '-', '-'],
    );
    const units = withUnits.flatMap((run) => {
      const u = run.kinds.find((summary) => summary.kind === kind)?.units;
      return u
        ? [u.read.toFixed(2), u.write.toFixed(2), `${u.handlerMs.toFixed(1)} / ${u.handlerP50.toFixed(1)}`, u.logBytes.toFixed(0)]
        : ['-', '-', '-', '-'];
    });
    lines.push(row(kind, ...measured, ...units));
  }
  return lines.join('\n');
}
