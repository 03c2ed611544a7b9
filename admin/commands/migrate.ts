/** placement-admin migrate: copies a region from one Placement API into another, then verifies the copy. */
import { command, concurrencyOf } from '../command-line.js';
import { connect } from '../endpoint.js';
import { apiSource, copyRegion } from '../region-copy/copy.js';
import { OLDEST_READABLE } from '../region-copy/versions.js';
import { CONCURRENCY, DRY_RUN, FROM, FROM_TOKEN, OVERWRITE, QUIET, TO, TO_TOKEN } from './options.js';

export const migrate = command({
  name: 'migrate',
  summary: 'copy a region from one Placement into another, then verify the copy',
  synopsis: '--from URL --to URL [options]',
  description: [
    'Copies custom resource classes and traits, every resource provider (uuid, name, parent, inventories,',
    'traits, aggregates) and every consumer with its allocations from --from into --to, through their APIs.',
    'Writes only what the target lacks, so running it again finishes an interrupted copy; reports data that',
    'differs under the same uuid as a conflict. Ends with a verify: "N checked, M differences".',
    'Exit status 0 only with 0 differences, no conflict and no failed write.',
  ].join('\n'),
  options: {
    from: FROM,
    'from-token': FROM_TOKEN,
    to: TO,
    'to-token': TO_TOKEN,
    concurrency: CONCURRENCY,
    'dry-run': DRY_RUN,
    overwrite: OVERWRITE,
    quiet: QUIET,
  },
  check: (values) => void concurrencyOf(values.concurrency),
  run: async (values) => {
    const concurrency = concurrencyOf(values.concurrency);
    const source = await connect(values.from!, values['from-token'], OLDEST_READABLE);
    return copyRegion(apiSource(source, { concurrency, quiet: values.quiet }), {
      to: values.to!,
      toToken: values['to-token'],
      concurrency,
      quiet: values.quiet,
      dryRun: values['dry-run'],
      overwrite: values.overwrite,
    });
  },
});
