/** placement-admin verify: compares a Placement with another Placement or with a region file. */
import { command, concurrencyOf, UsageError } from '../command-line.js';
import { connect } from '../endpoint.js';
import { apiSource, fileSource, verifyRegion } from '../region-copy/copy.js';
import { OLDEST_READABLE } from '../region-copy/versions.js';
import { CONCURRENCY, FROM, FROM_TOKEN, INPUT, QUIET, TO, TO_TOKEN, readRegionInput } from './options.js';

export const verify = command({
  name: 'verify',
  summary: 'compare a Placement with another Placement or with a region file',
  synopsis: '(--from URL | --input FILE | < region.jsonl) --to URL [options]',
  description: [
    'Reads both sides and compares custom classes and traits, every provider (name, parent, inventories,',
    'traits, aggregates, usages, allocations) and every consumer (allocations, project, user, type).',
    'Prints each difference on a line of its own, then "N checked, M differences".',
    'Exit status 0 with 0 differences, 1 otherwise. Writes nothing.',
  ].join('\n'),
  options: {
    from: { ...FROM, required: false, help: `${FROM.help}; without it, the region file is the source` },
    'from-token': FROM_TOKEN,
    input: INPUT,
    to: TO,
    'to-token': TO_TOKEN,
    concurrency: CONCURRENCY,
    quiet: QUIET,
  },
  check: (values) => {
    concurrencyOf(values.concurrency);
    if (values.from !== undefined && values.input !== undefined) throw new UsageError('--from and --input exclude each other');
  },
  run: async (values) => {
    const concurrency = concurrencyOf(values.concurrency);
    const source =
      values.from === undefined
        ? fileSource(await readRegionInput(values.input))
        : apiSource(await connect(values.from, values['from-token'], OLDEST_READABLE), { concurrency, quiet: values.quiet });
    return verifyRegion(source, { to: values.to!, toToken: values['to-token'], concurrency, quiet: values.quiet });
  },
});
