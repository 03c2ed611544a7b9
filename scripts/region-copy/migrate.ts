/**
 * npm run migrate -- --from URL --to URL [--from-token T] [--to-token T] [--concurrency N]
 *                    [--dry-run | --verify-only] [--overwrite] [--quiet]
 *
 * Copies a region from any Placement API (upstream or this service) into
 * another through their APIs, then verifies the two. See
 * docs/operators/region-copy.md.
 */
import { progressReporter } from '../lib/progress.js';
import { connect } from '../lib/placement-endpoint.js';
import { OLDEST_READABLE } from './versions.js';
import { apiSource, commandLine, copyRegion, run } from './copy.js';

const USAGE = `usage: npm run migrate -- --from URL --to URL [options]
  --from-token T, --to-token T   X-Auth-Token for each side (default: noauth2's "admin")
  --concurrency N                requests under way at once on each side (default 8)
  --dry-run                      read both sides, report what would be written, write nothing
  --verify-only                  only compare the two sides; exit status 1 on any difference
  --overwrite                    replace what the target holds differently instead of reporting it
  --quiet                        no progress on stderr`;

run(async () => {
  const options = commandLine(USAGE, { from: true, to: true, copy: true });
  const source = await connect(options.from!, options.fromToken, OLDEST_READABLE);
  return copyRegion(apiSource(source, options, progressReporter({ quiet: options.quiet })), options);
});
