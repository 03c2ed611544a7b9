/** placement-admin import: migrate with a region file as the source. */
import { command, concurrencyOf } from '../command-line.js';
import { copyRegion, fileSource } from '../region-copy/copy.js';
import { CONCURRENCY, DRY_RUN, INPUT, OVERWRITE, QUIET, TO, TO_TOKEN, readRegionInput } from './options.js';

export const importRegion = command({
  name: 'import',
  summary: 'write a region file into a Placement, then verify it against the file',
  synopsis: '--to URL [--input FILE | < region.jsonl] [options]',
  description: [
    'Writes what the target lacks of the region file (written by export), then verifies the target against',
    'the file: "N checked, M differences". Like migrate, it can be run again after an interruption.',
    'A malformed or cut-off file is refused before anything is written.',
  ].join('\n'),
  options: { to: TO, 'to-token': TO_TOKEN, input: INPUT, concurrency: CONCURRENCY, 'dry-run': DRY_RUN, overwrite: OVERWRITE, quiet: QUIET },
  check: (values) => void concurrencyOf(values.concurrency),
  run: async (values) => {
    const region = await readRegionInput(values.input);
    return copyRegion(fileSource(region), {
      to: values.to!,
      toToken: values['to-token'],
      concurrency: concurrencyOf(values.concurrency),
      quiet: values.quiet,
      dryRun: values['dry-run'],
      overwrite: values.overwrite,
    });
  },
});
