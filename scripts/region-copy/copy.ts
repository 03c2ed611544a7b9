/**
 * What `npm run migrate`, `npm run import` and `npm run export` share: their
 * command line, and the copy itself (read the target, write what is
 * missing, verify), whatever the source is: an API or a region file.
 */
import { parseArgs } from 'node:util';
import { progressReporter, type ProgressReporter } from '../lib/progress.js';
import { connect, type Endpoint } from '../lib/placement-endpoint.js';
import { OLDEST_READABLE } from './versions.js';
import { readRegion } from './read-api.js';
import type { Region } from './region.js';
import { compareRegions, summaryLine } from './verify.js';
import { writeRegion } from './write-api.js';

/** Exit status when differences, conflicts or failed writes remain. */
export const EXIT_DIFFERENCES = 1;
export const EXIT_USAGE = 2;
/** Exit status of a run stopped by PLACEMENT_COPY_STOP_AFTER_WRITES. */
export const EXIT_STOPPED = 3;

const DEFAULT_CONCURRENCY = 8;

export interface CommandLine {
  from?: string;
  fromToken?: string;
  to?: string;
  toToken?: string;
  concurrency: number;
  dryRun: boolean;
  verifyOnly: boolean;
  overwrite: boolean;
  quiet: boolean;
}

/** Parses the options a tool takes (`wanted`); prints `usage` and exits on anything else. */
export function commandLine(usage: string, wanted: { from?: boolean; to?: boolean; copy?: boolean }): CommandLine {
  const fail = (message: string): never => {
    console.error(`${message}\n\n${usage}`);
    process.exit(EXIT_USAGE);
  };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        from: { type: 'string' },
        'from-token': { type: 'string' },
        to: { type: 'string' },
        'to-token': { type: 'string' },
        concurrency: { type: 'string' },
        'dry-run': { type: 'boolean' },
        'verify-only': { type: 'boolean' },
        overwrite: { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return fail((error as Error).message);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const given = (name: string) => values[name] !== undefined;
  const allowed = new Set(['concurrency', 'quiet', 'help']);
  if (wanted.from) ['from', 'from-token'].forEach((name) => allowed.add(name));
  if (wanted.to) ['to', 'to-token'].forEach((name) => allowed.add(name));
  if (wanted.copy) ['dry-run', 'verify-only', 'overwrite'].forEach((name) => allowed.add(name));
  for (const name of Object.keys(values)) if (!allowed.has(name)) fail(`--${name} does not apply here`);
  if (wanted.from && !given('from')) fail('--from URL is required');
  if (wanted.to && !given('to')) fail('--to URL is required');
  const concurrency = given('concurrency') ? Number(values.concurrency) : DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) fail('--concurrency takes a whole number from 1 to 256');
  if (values['dry-run'] && values['verify-only']) fail('--dry-run and --verify-only exclude each other');
  return {
    from: values.from as string | undefined,
    fromToken: values['from-token'] as string | undefined,
    to: values.to as string | undefined,
    toToken: values['to-token'] as string | undefined,
    concurrency,
    dryRun: values['dry-run'] === true,
    verifyOnly: values['verify-only'] === true,
    overwrite: values.overwrite === true,
    quiet: values.quiet === true,
  };
}

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const count = (n: number) => n.toLocaleString('en-US');

export interface Source {
  /** For messages: a URL, or "the region file". */
  name: string;
  /** The region as it is now; `usages` asks for providers' own usages (verify compares them). */
  read(usages: boolean): Promise<Region>;
  /** Requests sent to the source so far (0 for a file). */
  requests(): number;
}

export function apiSource(endpoint: Endpoint, options: CommandLine, progress: ProgressReporter): Source {
  return {
    name: endpoint.client.baseUrl,
    read: (usages) => readRegion(endpoint, { concurrency: options.concurrency, usages, progress, label: 'source' }),
    requests: () => endpoint.requests,
  };
}

/**
 * The copy: read the target, write what it lacks, then verify against a
 * fresh read of both sides; or only verify. Prints a report on stdout and
 * returns the exit status.
 */
export async function copyRegion(source: Source, options: CommandLine): Promise<number> {
  const progress = progressReporter({ quiet: options.quiet });
  const target = await connect(options.to!, options.toToken, OLDEST_READABLE);
  const verify = async () => {
    const started = performance.now();
    const [expected, found] = [await source.read(true), await readTarget(target, options, progress, true)];
    const comparison = compareRegions(expected, found);
    for (const difference of comparison.differences) console.log(difference);
    console.log(`verify took ${seconds(started)}`);
    console.log(summaryLine(comparison));
    return comparison.differences.length === 0 ? 0 : EXIT_DIFFERENCES;
  };
  if (options.verifyOnly) return verify();

  const started = performance.now();
  const region = await source.read(false);
  const current = await readTarget(target, options, progress, false);
  const reports: string[] = [];
  const stopAfter = Number(process.env.PLACEMENT_COPY_STOP_AFTER_WRITES ?? Infinity);
  const summary = await writeRegion(region, target, current, {
    concurrency: options.concurrency,
    overwrite: options.overwrite,
    dryRun: options.dryRun,
    progress,
    report: (line) => reports.push(line),
    // A test hook: dies as a killed process would, with its last writes perhaps still in flight.
    onWrite: (writes) => {
      if (writes < stopAfter) return;
      console.error(`stopped after ${writes} writes (PLACEMENT_COPY_STOP_AFTER_WRITES)`);
      process.exit(EXIT_STOPPED);
    },
  });
  for (const line of reports) console.log(line);
  const { created, unchanged } = summary;
  console.log(
    `${options.dryRun ? 'would write' : 'wrote'}: ${count(created.resourceClasses)} resource classes, ${count(created.traits)} traits, ` +
      `${count(created.providers)} new resource providers, ${count(created.consumers)} consumers (${count(summary.writes)} write requests); ` +
      `already there: ${count(unchanged.providers)} resource providers, ${count(unchanged.consumers)} consumers; ` +
      `${summary.conflicts} conflicts, ${summary.failures} failed writes`,
  );
  console.log(`copy took ${seconds(started)}; requests so far: ${count(source.requests())} to the source, ${count(target.requests)} to the target`);
  if (options.dryRun) return summary.conflicts === 0 ? 0 : EXIT_DIFFERENCES;
  const verified = await verify();
  console.log(`in all: ${seconds(started)}, ${count(source.requests())} requests to the source, ${count(target.requests)} to the target`);
  return summary.conflicts + summary.failures === 0 ? verified : EXIT_DIFFERENCES;
}

const readTarget = (target: Endpoint, options: CommandLine, progress: ProgressReporter, usages: boolean) =>
  readRegion(target, { concurrency: options.concurrency, usages, progress, label: 'target' });

/** Runs a tool's main function: its result is the exit status; an error is one line on stderr. */
export function run(main: () => Promise<number>): void {
  main().then(
    (status) => process.exit(status),
    (error: Error) => {
      console.error(`error: ${error.message}`);
      process.exit(EXIT_DIFFERENCES);
    },
  );
}
