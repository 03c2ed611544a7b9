/**
 * `npm run bench:region`: a region's nova (N compute nodes with V instances
 * each, polling as nova-compute does, plus a scheduler booting and deleting)
 * against one or two Placement services, side by side. See nova.ts for the
 * calls and ../synthetic-region/region.ts for the region.
 *
 *   npm run bench:region -- --start-target 27001 --start-reference 27002 --nodes 20,50
 *   npm run bench:region -- --find-max --target http://127.0.0.1:27001 --reference http://127.0.0.1:27002
 *
 * Targets (at least one):
 *   --target URL             any Placement (this service or another)
 *   --target-records FILE    the stdout of that service when it is ours with PLACEMENT_METRICS=true PLACEMENT_REQUEST_RECORDS=true:
 *                            its metric records give DynamoDB units, handler ms and log bytes per request
 *   --start-target PORT      starts ours (`npm start`, metrics on) on the port and reads its records
 *   --reference URL          the real upstream Placement
 *   --start-reference PORT   starts it (../shared/reference, fresh SQLite database) on the port
 * Region and run:
 *   --nodes N[,N...]         region sizes to run (default 20)
 *   --instances V            instances per node (default 30)
 *   --boots-per-node-hour R  boots a node and hour (region-wide rate: R x N / 3600 a second), and as many deletes (default 1)
 *   --warmup S               seconds before the measured window (default 60: every node has started cycling)
 *   --duration S             seconds measured (default 120)
 *   --seed N                 region and schedule seed (default 42)
 * Search:
 *   --find-max               for each target, the largest N it sustains (kept up, no errors, p99 < 1 s):
 *                            doubling from --from (default 20) then halving the gap down to --precision
 *                            (default 0.1 of N), the targets' runs alternating; then one run of both at
 *                            the largest N both sustain, for the per-kind table
 *   --max-nodes N            never try more (default 5000)
 *   --json FILE              also write every run's summary as JSON
 *
 * Each target gets its own copy of the region, loaded (and grown or shrunk
 * between runs) through its API. Runs of the two targets never overlap.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PlacementClient } from '../../admin/placement-client.js';
import { seededRandom } from '../lib/seeded-random.js';
import { simulateRegion, type RunOptions } from './nova.js';
import { LoadedRegion } from '../synthetic-region/api-loader.js';
import { DEFAULT_SHAPE, SyntheticRegion } from '../synthetic-region/region.js';
import { kindTable, runTable, summarise, type RunSummary } from './report.js';
import { existingTarget, startOurs, startReference, type Target } from './targets.js';

const { values: args } = parseArgs({
  options: {
    target: { type: 'string' },
    'target-records': { type: 'string' },
    'start-target': { type: 'string' },
    reference: { type: 'string' },
    'start-reference': { type: 'string' },
    nodes: { type: 'string', default: '20' },
    instances: { type: 'string', default: '30' },
    'boots-per-node-hour': { type: 'string', default: '1' },
    warmup: { type: 'string', default: '60' },
    duration: { type: 'string', default: '120' },
    seed: { type: 'string', default: '42' },
    'find-max': { type: 'boolean', default: false },
    from: { type: 'string', default: '20' },
    precision: { type: 'string', default: '0.1' },
    'max-nodes': { type: 'string', default: '5000' },
    json: { type: 'string' },
  },
});

const log = (message: string) => console.error(`[bench-region] ${message}`);
const seed = Number(args.seed);
const region = new SyntheticRegion({ ...DEFAULT_SHAPE, seed, instancesPerNode: Number(args.instances) });
const bootsPerNodeHour = Number(args['boots-per-node-hour']);
const runOptions = (nodes: number): RunOptions => ({
  warmupSeconds: Number(args.warmup),
  durationSeconds: Number(args.duration),
  bootRate: (bootsPerNodeHour * nodes) / 3600,
  seed,
  drainSeconds: 30,
});

interface Subject {
  target: Target;
  client: PlacementClient;
  loaded: LoadedRegion;
}

const summaries: RunSummary[] = [];
let runs = 0;

async function runAt(subject: Subject, nodes: number): Promise<RunSummary> {
  log(`${subject.target.name}: region of ${nodes} nodes (has ${subject.loaded.size})`);
  const loading = performance.now();
  await subject.loaded.resize(nodes);
  const options = runOptions(nodes);
  log(
    `${subject.target.name}: loaded in ${((performance.now() - loading) / 1000).toFixed(0)} s; running ${options.warmupSeconds} + ${options.durationSeconds} s`,
  );
  const result = await simulateRegion(subject.client, subject.loaded, options, seededRandom(seed + ++runs).next);
  const summary = summarise(subject.target.name, nodes, region.shape.instancesPerNode, result, subject.target.record);
  summaries.push(summary);
  log(
    `${subject.target.name} at N=${nodes}: ${summary.perSecond.toFixed(1)} req/s, p99 ${summary.p99.toFixed(0)} ms, ${summary.errors} errors, kept up: ${summary.keptUp}, sustained: ${summary.sustained}`,
  );
  return summary;
}

/** Both (or the one) targets at each size, alternating which goes first. */
async function sideBySide(subjects: Subject[], sizes: number[]): Promise<RunSummary[][]> {
  const results: RunSummary[][] = [];
  for (const [n, nodes] of sizes.entries()) {
    const order = n % 2 === 0 ? subjects : [...subjects].reverse();
    const byTarget = new Map<Subject, RunSummary>();
    for (const subject of order) byTarget.set(subject, await runAt(subject, nodes));
    results.push(subjects.map((subject) => byTarget.get(subject)!));
  }
  return results;
}

interface Search {
  subject: Subject;
  good?: number;
  bad?: number;
  next: number;
}

/** The largest N each target sustains: doubling, then halving the gap; the targets take turns. */
async function findMax(subjects: Subject[]): Promise<Search[]> {
  const maxNodes = Number(args['max-nodes']);
  const precision = Number(args.precision);
  const searches: Search[] = subjects.map((subject) => ({ subject, next: Number(args.from) }));
  const open = (search: Search) =>
    search.next > 0 &&
    !(search.good !== undefined && search.bad !== undefined && search.bad - search.good <= Math.max(1, precision * search.good)) &&
    !(search.good !== undefined && search.good >= maxNodes);
  while (searches.some(open)) {
    for (const search of searches.filter(open)) {
      const nodes = search.next;
      const { sustained } = await runAt(search.subject, nodes);
      if (sustained) search.good = nodes;
      else search.bad = nodes;
      if (search.good === undefined) search.next = nodes > 1 ? Math.floor(nodes / 2) : 0;
      else if (search.bad === undefined) search.next = Math.min(maxNodes, nodes * 2);
      else search.next = Math.round((search.good + search.bad) / 2);
    }
  }
  return searches;
}

async function main(): Promise<void> {
  const targets: Target[] = [];
  const stopAll = () => Promise.all(targets.map((target) => target.stop().catch(() => undefined)));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().then(() => process.exit(130)));
  try {
    if (args['start-target']) targets.push(await startOurs(Number(args['start-target'])));
    else if (args.target) targets.push(existingTarget('ours', args.target, args['target-records']));
    if (args['start-reference']) targets.push(await startReference(Number(args['start-reference'])));
    else if (args.reference) targets.push(existingTarget('reference', args.reference));
    if (targets.length === 0) throw new Error('give a target: --target URL, --start-target PORT, --reference URL or --start-reference PORT');

    const subjects: Subject[] = [];
    for (const target of targets) {
      const client = new PlacementClient(target.url, { token: 'admin', timeoutMs: 30_000 });
      const loaded = new LoadedRegion(region, client);
      await loaded.discover();
      subjects.push({ target, client, loaded });
    }
    const shape = region.shape;
    console.log(
      `\nRegion: V=${shape.instancesPerNode} instances a node; ${shape.nestedShare * 100}% of nodes with ${shape.pfsPerNode} PF children; ` +
        `${shape.aggregatedShare * 100}% in aggregates of ${shape.aggregateSize} with a sharing DISK_GB provider. ` +
        `${bootsPerNodeHour} boots a node and hour, and as many deletes. Measured ${args.duration} s after ${args.warmup} s.\n`,
    );
    if (args['find-max']) {
      const searches = await findMax(subjects);
      console.log(runTable(summaries));
      console.log('');
      for (const search of searches) {
        console.log(
          `- ${search.subject.target.name}: largest N sustained ${search.good ?? 'none'}${search.bad !== undefined ? ` (fails at ${search.bad})` : ''}`,
        );
      }
      const [ours, reference] = searches;
      if (ours?.good && reference?.good)
        console.log(`- ratio ${ours.subject.target.name}/${reference.subject.target.name}: ${(ours.good / reference.good).toFixed(2)}`);
      const common = Math.min(...searches.map((search) => search.good ?? 0));
      if (common > 0) {
        console.log(`\nAt N=${common}, which every target sustains:\n`);
        const [both] = await sideBySide(subjects, [common]);
        console.log(runTable(both!));
        console.log('');
        console.log(kindTable(both!));
      }
    } else {
      for (const runsAtSize of await sideBySide(subjects, args.nodes!.split(',').map(Number))) {
        console.log(runTable(runsAtSize));
        console.log('');
        console.log(kindTable(runsAtSize));
        console.log('');
      }
    }
    if (args.json) writeFileSync(args.json, JSON.stringify(summaries, null, 2));
  } finally {
    await stopAll();
  }
}

await main();
