/**
 * npm run capacity -- --url URL [--token T] [--concurrency N] [--json]
 *
 * A region's capacity at a glance, through any Placement API (upstream or
 * this service): per resource class the providers, total, reserved,
 * capacity, used and free amounts and the providers with free capacity (the
 * figures the scheduled capacity function publishes, computed by the same
 * shared/domain/region-capacity.ts), a histogram of the providers'
 * utilisation, and the fullest providers. --json prints the same as JSON.
 *
 * Through the API this reads GET /resource_providers, then each provider's
 * inventories and usages: 1 + 2 × providers requests.
 */
import { parseArgs } from 'node:util';
import { HISTOGRAM_LABELS, regionCapacity, type RegionCapacity } from '../../shared/domain/region-capacity.js';
import type { Inventories, Resources } from '../../shared/domain/model.js';
import { connect, expectStatus } from '../lib/placement-endpoint.js';
import { mapConcurrently } from '../lib/pool.js';
import { progressReporter } from '../lib/progress.js';

const USAGE = `usage: npm run capacity -- --url URL [--token T] [--concurrency N] [--json]`;

const amount = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 2 });

/** Columns before `textColumns` are left-aligned, the figures after them right-aligned. */
function table(header: string[], rows: string[][], textColumns = 1): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column < textColumns ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function formatCapacity(report: RegionCapacity): string {
  const classes = table(
    ['resource class', 'providers', 'total', 'reserved', 'capacity', 'used', 'free', 'used %', 'with free'],
    report.classes.map((c) => [
      c.resourceClass,
      amount(c.providers),
      amount(c.total),
      amount(c.reserved),
      amount(c.capacity),
      amount(c.used),
      amount(c.free),
      c.utilisationPercent.toFixed(2),
      amount(c.providersWithFree),
    ]),
  );
  const histogram = table(
    ['resource class', ...HISTOGRAM_LABELS],
    report.classes.map((c) => [c.resourceClass, ...c.histogram.map(amount)]),
  );
  const fullest = table(
    ['provider', 'uuid', 'resource class', 'used', 'capacity', 'used %'],
    report.fullest.map((p) => [p.name, p.uuid, p.resourceClass, amount(p.used), amount(p.capacity), p.utilisationPercent.toFixed(2)]),
    3,
  );
  return [
    `${amount(report.providers)} resource providers`,
    '',
    classes,
    '',
    'Providers by utilisation (used / capacity; "full": cannot take the smallest allocation its inventory allows)',
    histogram,
    '',
    'Fullest providers (provider and class)',
    fullest,
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { url: { type: 'string' }, token: { type: 'string' }, concurrency: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
  });
  if (values.help || values.url === undefined) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const concurrency = Number(values.concurrency ?? 8);
  const endpoint = await connect(values.url, values.token);
  const get = async (path: string) => expectStatus(await endpoint.client.get(path), [200], `GET ${path}`).body;
  const listed = (await get('/resource_providers')).resource_providers as { uuid: string; name: string }[];
  const phase = progressReporter()('resource providers', listed.length);
  const providers = await mapConcurrently(listed, concurrency, async ({ uuid, name }) => {
    const inventories = (await get(`/resource_providers/${uuid}/inventories`)).inventories as Inventories;
    const usages = (await get(`/resource_providers/${uuid}/usages`)).usages as Resources;
    phase.tick();
    return { uuid, name, inventories, usages };
  });
  phase.done();
  const report = regionCapacity(providers);
  console.log(values.json ? JSON.stringify(report, null, 2) : `Capacity of ${endpoint.client.baseUrl}: ${formatCapacity(report)}`);
}

main().catch((error: Error) => {
  console.error(`error: ${error.message}`);
  process.exit(1);
});
