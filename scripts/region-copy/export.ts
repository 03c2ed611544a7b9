/**
 * npm run export -- --from URL [--from-token T] [--concurrency N] [--quiet] > region.jsonl
 *
 * Writes a region as a region file (region-file.ts; docs/operators/region-copy.md, "Region files").
 */
import { once } from 'node:events';
import { progressReporter } from '../lib/progress.js';
import { connect } from '../lib/placement-endpoint.js';
import { OLDEST_READABLE } from './versions.js';
import { commandLine, run } from './copy.js';
import { readRegion } from './read-api.js';
import { regionFileLines } from './region-file.js';

const USAGE = `usage: npm run export -- --from URL [options] > region.jsonl
  --from-token T    X-Auth-Token (default: noauth2's "admin")
  --concurrency N   requests under way at once (default 8)
  --quiet           no progress on stderr`;

run(async () => {
  const options = commandLine(USAGE, { from: true });
  const source = await connect(options.from!, options.fromToken, OLDEST_READABLE);
  const started = performance.now();
  const region = await readRegion(source, { concurrency: options.concurrency, progress: progressReporter({ quiet: options.quiet }), label: 'source' });
  const header = { created_at: new Date().toISOString(), source: source.client.baseUrl, microversion: source.readVersion.toString() };
  for (const line of regionFileLines(region, header)) {
    if (!process.stdout.write(`${line}\n`)) await once(process.stdout, 'drain');
  }
  console.error(
    `exported ${region.resourceClasses.length} custom resource classes, ${region.traits.length} custom traits, ` +
      `${region.providers.length} resource providers, ${region.consumers.length} consumers ` +
      `in ${((performance.now() - started) / 1000).toFixed(1)} s (${source.requests} requests)`,
  );
  return 0;
});
