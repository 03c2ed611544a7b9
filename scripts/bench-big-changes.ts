/**
 * `npm run bench:big-changes -- --target URL --reference URL [--target-records FILE]`:
 * the changes bigger than one DynamoDB transaction (scripts/lib/big-changes.ts,
 * BIG_CHANGES_BENCHED) against two running Placement services, by default
 * this service and the real one: each change prepared on both, sent to both
 * one after the other (which one first alternating by round), timed, and the
 * state it left compared. Prints, per change and size, each side's status and
 * median time, the number of differences between the states left behind,
 * and, from the target's metric records, the DynamoDB requests and write
 * units the change cost and the requests on its critical path.
 *
 *   --target-records FILE   where the target writes its request records: the output of
 *                           `PLACEMENT_REQUEST_RECORDS=true npm start` or of
 *                           `npm run serve:bundles -- --env PLACEMENT_REQUEST_RECORDS=true`
 *   --rounds N              times each change is run on each side (default 3)
 *   --scale F               sizes multiplied by F (default 1)
 *   --size N                every change run at N instead (once, however many sizes it has)
 *   --only TEXT             only the changes whose name contains TEXT
 */
import { isDeepStrictEqual } from 'node:util';
import { parseArgs } from 'node:util';
import { BIG_CHANGES_BENCHED } from './lib/big-changes.js';
import { existingTarget } from './bench-region/targets.js';
import type { RequestRecord } from './bench-region/report.js';
import { PlacementClient, type ApiResponse } from '../admin/placement-client.js';

const { values } = parseArgs({
  options: {
    target: { type: 'string' },
    reference: { type: 'string' },
    'target-records': { type: 'string' },
    rounds: { type: 'string', default: '3' },
    scale: { type: 'string', default: '1' },
    size: { type: 'string' },
    only: { type: 'string' },
  },
});
if (!values.target || !values.reference) throw new Error('give --target URL and --reference URL');
const rounds = Number(values.rounds);
const scale = Number(values.scale);
const target = existingTarget('target', values.target, values['target-records']);

/** The paths at which two snapshots differ. */
function differences(a: unknown, b: unknown, path = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return [path || '/'];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((key) => differences((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`));
}

/** The target's record of a response, once its output has caught up with it. */
async function recordOf(response: ApiResponse): Promise<RequestRecord | undefined> {
  const requestId = response.headers.get('x-openstack-request-id');
  if (!target.record || !requestId) return undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    const record = target.record(requestId);
    if (record) return record;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

const sides = { target: new PlacementClient(values.target, { timeoutMs: 600_000 }), reference: new PlacementClient(values.reference, { timeoutMs: 600_000 }) };
const median = (values: number[]) => (values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);
const figure = (values: number[]) => (values.length === 0 ? '-' : median(values).toFixed(0));

const rows: string[] = [];
const run = new Set<string>();
for (const [scenario, baseSize] of BIG_CHANGES_BENCHED) {
  if (values.only && !scenario.name.includes(values.only)) continue;
  const size = values.size ? Number(values.size) : Math.max(1, Math.round(baseSize * scale));
  if (run.has(`${scenario.name}@${size}`)) continue;
  run.add(`${scenario.name}@${size}`);
  const times = { target: [] as number[], reference: [] as number[] };
  const statuses = { target: new Set<number | string>(), reference: new Set<number | string>() };
  const costs = { requests: [] as number[], critical: [] as number[], write: [] as number[] };
  let differing = 0;
  for (let round = 0; round < rounds; round++) {
    const plan = scenario.plan(size);
    const order = round % 2 === 0 ? (['target', 'reference'] as const) : (['reference', 'target'] as const);
    const states: Partial<Record<keyof typeof sides, unknown>> = {};
    for (const side of order) {
      try {
        await scenario.prepare(sides[side], plan);
      } catch (error) {
        // A service that refuses the preparation (an older version's 413) shows it in its status column.
        statuses[side].add(`preparing: ${(error as Error).message.slice(0, 40)}`);
        continue;
      }
      const response = await scenario.change(sides[side], plan);
      times[side].push(response.ms);
      statuses[side].add(response.status);
      if (side === 'target') {
        const record = await recordOf(response);
        if (record) {
          costs.requests.push(record.dynamoRequests);
          costs.critical.push(record.criticalPath);
          costs.write.push(record.write);
        }
      }
      states[side] = await scenario.snapshot(sides[side], plan);
    }
    differing += differences(states.target, states.reference).length;
  }
  const status = (side: keyof typeof sides) => [...statuses[side]].join('/');
  const row =
    `| ${scenario.name} | ${size} | ${status('target')} | ${figure(times.target)} | ${status('reference')} | ${figure(times.reference)} | ` +
    `${figure(costs.requests)} | ${figure(costs.critical)} | ${figure(costs.write)} | ${differing} |`;
  rows.push(row);
  console.error(`done: ${row}`);
}

console.log(`\n${rounds} rounds per change, the sides alternating which goes first; target ${values.target}, reference ${values.reference}\n`);
console.log(
  '| change | size | target status | target ms (median) | reference status | reference ms (median) | DynamoDB requests | on the critical path | write units | state differences |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
