/** placement-admin export: writes a region as a region file (docs/operators/region-copy.md, "Region files"). */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { command, concurrencyOf } from '../command-line.js';
import { connect } from '../endpoint.js';
import { progressReporter } from '../progress.js';
import { readRegion } from '../region-copy/read-api.js';
import { regionFileLines } from '../region-copy/region-file.js';
import { OLDEST_READABLE } from '../region-copy/versions.js';
import { CONCURRENCY, FROM, FROM_TOKEN, QUIET } from './options.js';

export const exportRegion = command({
  name: 'export',
  summary: 'write a region to a region file (a backup, or the source of an import)',
  synopsis: '--from URL [--output FILE | > region.jsonl] [options]',
  description: [
    'Reads a whole region from a Placement API (upstream or this service) and writes it as a region file:',
    'one JSON object per line, custom classes and traits, providers (parents first), consumers, and a',
    'closing line that counts them, so that a cut-off file is refused by import and verify.',
  ].join('\n'),
  options: {
    from: FROM,
    'from-token': FROM_TOKEN,
    output: { type: 'string', value: 'FILE', help: 'write the region file here (default: standard output)' },
    concurrency: CONCURRENCY,
    quiet: QUIET,
  },
  check: (values) => void concurrencyOf(values.concurrency),
  run: async (values) => {
    const source = await connect(values.from!, values['from-token'], OLDEST_READABLE);
    const started = performance.now();
    const progress = progressReporter({ quiet: values.quiet });
    const region = await readRegion(source, { concurrency: concurrencyOf(values.concurrency), progress, label: 'source' });
    const header = { created_at: new Date().toISOString(), source: source.client.baseUrl, microversion: source.readVersion.toString() };
    const output: Writable = values.output === undefined ? process.stdout : createWriteStream(values.output);
    for (const line of regionFileLines(region, header)) {
      if (!output.write(`${line}\n`)) await once(output, 'drain');
    }
    if (output !== process.stdout) {
      output.end();
      await once(output, 'finish');
    }
    console.error(
      `exported ${region.resourceClasses.length} custom resource classes, ${region.traits.length} custom traits, ` +
        `${region.providers.length} resource providers, ${region.consumers.length} consumers ` +
        `in ${((performance.now() - started) / 1000).toFixed(1)} s (${source.requests} requests)`,
    );
    return 0;
  },
});
