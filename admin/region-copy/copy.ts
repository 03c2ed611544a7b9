/**
 * What placement-admin's migrate, import and verify share: the copy itself
 * (read the target, write what it lacks, verify), and the verify alone,
 * whatever the source is: an API or a region file.
 */
import { EXIT_DIFFERENCES, EXIT_STOPPED } from '../command-line.js';
import { progressReporter, type ProgressReporter } from '../progress.js';
import { connect, type Endpoint } from '../endpoint.js';
import { OLDEST_READABLE } from './versions.js';
import { readRegion } from './read-api.js';
import type { Region } from './region.js';
import { compareRegions, summaryLine } from './verify.js';
import { writeRegion } from './write-api.js';

export interface TargetOptions {
  to: string;
  toToken?: string;
  /** Requests under way at once on each side. */
  concurrency: number;
  quiet: boolean;
}

export interface CopyOptions extends TargetOptions {
  dryRun: boolean;
  overwrite: boolean;
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

/** A region file already read. */
export const fileSource = (region: Region): Source => ({ name: 'the region file', read: async () => region, requests: () => 0 });

export function apiSource(endpoint: Endpoint, options: { concurrency: number; quiet: boolean }): Source {
  const progress = progressReporter({ quiet: options.quiet });
  return {
    name: endpoint.client.baseUrl,
    read: (usages) => readRegion(endpoint, { concurrency: options.concurrency, usages, progress, label: 'source' }),
    requests: () => endpoint.requests,
  };
}

/** Compares the target with the source, both read afresh; prints each difference and the summary line; returns the exit status. */
export async function verifyRegion(source: Source, options: TargetOptions, target?: Endpoint): Promise<number> {
  const progress = progressReporter({ quiet: options.quiet });
  const endpoint = target ?? (await connect(options.to, options.toToken, OLDEST_READABLE));
  const started = performance.now();
  const [expected, found] = [await source.read(true), await readTarget(endpoint, options, progress, true)];
  const comparison = compareRegions(expected, found);
  for (const difference of comparison.differences) console.log(difference);
  console.log(`verify took ${seconds(started)}`);
  console.log(summaryLine(comparison));
  return comparison.differences.length === 0 ? 0 : EXIT_DIFFERENCES;
}

/**
 * The copy: read the target, write what it lacks, then verify against a
 * fresh read of both sides. Prints a report on stdout and returns the exit
 * status.
 */
export async function copyRegion(source: Source, options: CopyOptions): Promise<number> {
  const progress = progressReporter({ quiet: options.quiet });
  const target = await connect(options.to, options.toToken, OLDEST_READABLE);
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
  const verified = await verifyRegion(source, options, target);
  console.log(`in all: ${seconds(started)}, ${count(source.requests())} requests to the source, ${count(target.requests)} to the target`);
  return summary.conflicts + summary.failures === 0 ? verified : EXIT_DIFFERENCES;
}

const readTarget = (target: Endpoint, options: TargetOptions, progress: ProgressReporter, usages: boolean) =>
  readRegion(target, { concurrency: options.concurrency, usages, progress, label: 'target' });
