/**
 * placement-admin capacity: a region's capacity at a glance, through any
 * Placement API (upstream or this service): per resource class the
 * providers, total, reserved, capacity, used and free amounts and the
 * providers with free capacity (the figures the scheduled capacity function
 * publishes, computed by the same shared/domain/region-capacity.ts), a
 * histogram of the providers' utilisation, and the fullest providers.
 *
 * Through the API this reads GET /resource_providers, then each provider's
 * inventories and usages: 1 + 2 × providers requests.
 */
import { HISTOGRAM_LABELS, regionCapacity, type RegionCapacity } from '../../shared/domain/region-capacity.js';
import type { Inventories, Resources } from '../../shared/domain/model.js';
import { command, concurrencyOf } from '../command-line.js';
import { connect, expectStatus } from '../endpoint.js';
import { mapConcurrently } from '../pool.js';
import { progressReporter } from '../progress.js';
import { CONCURRENCY, QUIET, TOKEN } from './options.js';

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

function formatCapacity(report: RegionCapacity): string {
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

export const capacity = command({
  name: 'capacity',
  summary: "a region's capacity at a glance: per class, a utilisation histogram, the fullest providers",
  synopsis: '--url URL [options]',
  description: [
    "Reads every provider's inventories and usages through the API (1 + 2 x providers requests) and prints,",
    'per resource class, the providers, total, reserved, capacity, used and free amounts and the providers',
    "that could still take the smallest allocation; a histogram of the providers' utilisation; and the ten",
    "fullest provider and class pairs. The same figures as the stack's scheduled capacity function.",
  ].join('\n'),
  options: {
    url: { type: 'string', value: 'URL', help: 'the Placement API (upstream or this service)', required: true },
    token: TOKEN,
    concurrency: CONCURRENCY,
    json: { type: 'boolean', help: 'print the figures as JSON' },
    quiet: QUIET,
  },
  check: (values) => void concurrencyOf(values.concurrency),
  run: async (values) => {
    const endpoint = await connect(values.url!, values.token);
    const get = async (path: string) => expectStatus(await endpoint.client.get(path), [200], `GET ${path}`).body;
    const listed = (await get('/resource_providers')).resource_providers as { uuid: string; name: string }[];
    const phase = progressReporter({ quiet: values.quiet })('resource providers', listed.length);
    const providers = await mapConcurrently(listed, concurrencyOf(values.concurrency), async ({ uuid, name }) => {
      const inventories = (await get(`/resource_providers/${uuid}/inventories`)).inventories as Inventories;
      const usages = (await get(`/resource_providers/${uuid}/usages`)).usages as Resources;
      phase.tick();
      return { uuid, name, inventories, usages };
    });
    phase.done();
    const report = regionCapacity(providers);
    console.log(values.json ? JSON.stringify(report, null, 2) : `Capacity of ${endpoint.client.baseUrl}: ${formatCapacity(report)}`);
    return 0;
  },
});
