/**
 * `npm run bench:big-changes -- --target URL --reference URL`: the changes
 * bigger than one DynamoDB transaction (scripts/lib/big-changes.ts) against
 * two running Placement services, by default this service and the real one:
 * each change prepared on both, sent to both one after the other (which one
 * first alternating by round), timed, and the state it left compared.
 * Prints, per change and size, each side's status and median time and the
 * number of differences between the states left behind.
 *
 *   --rounds N   times each change is run on each side (default 3)
 *   --scale F    sizes multiplied by F (default 1: nova's 200 instances, 300 aggregates or traits)
 *   --only TEXT  only the changes whose name contains TEXT (e.g. `--only rename --scale 10 --rounds 1`:
 *                a class held by 1,000 providers and 3,000 consumers renamed)
 */
import { isDeepStrictEqual } from 'node:util';
import { parseArgs } from 'node:util';
import { BIG_CHANGES_AT_NOVA_SIZES } from './lib/big-changes.js';
import { PlacementClient } from '../admin/placement-client.js';

const { values } = parseArgs({
  options: {
    target: { type: 'string' },
    reference: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    scale: { type: 'string', default: '1' },
    only: { type: 'string', default: '' },
  },
});
if (!values.target || !values.reference) throw new Error('give --target URL and --reference URL');
const rounds = Number(values.rounds);
const scale = Number(values.scale);

/** The paths at which two snapshots differ. */
function differences(a: unknown, b: unknown, path = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return [path || '/'];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((key) => differences((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`));
}

const sides = { target: new PlacementClient(values.target, { timeoutMs: 600_000 }), reference: new PlacementClient(values.reference, { timeoutMs: 600_000 }) };
const median = (values: number[]) => (values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!);

const rows: string[] = [];
for (const [scenario, baseSize] of BIG_CHANGES_AT_NOVA_SIZES.filter(([scenario]) => scenario.name.includes(values.only))) {
  const size = Math.max(1, Math.round(baseSize * scale));
  const times = { target: [] as number[], reference: [] as number[] };
  const statuses = { target: new Set<number | string>(), reference: new Set<number | string>() };
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
      states[side] = await scenario.snapshot(sides[side], plan);
    }
    differing += differences(states.target, states.reference).length;
  }
  const status = (side: keyof typeof sides) => [...statuses[side]].join('/');
  rows.push(
    `| ${scenario.name} | ${size} | ${status('target')} | ${median(times.target).toFixed(0)} | ${status('reference')} | ${median(times.reference).toFixed(0)} | ${differing} |`,
  );
  console.error(`done: ${scenario.name} (${size})`);
}

console.log(`\n${rounds} rounds per change, the sides alternating which goes first; target ${values.target}, reference ${values.reference}\n`);
console.log('| change | size | target status | target ms (median) | reference status | reference ms (median) | state differences |');
console.log('|---|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
