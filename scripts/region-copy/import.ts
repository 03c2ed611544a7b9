/**
 * npm run import -- --to URL [--to-token T] [--concurrency N] [--dry-run | --verify-only]
 *                   [--overwrite] [--quiet] < region.jsonl
 *
 * migrate with a region file as the source: writes what the target lacks,
 * then verifies the target against the file.
 */
import { createInterface } from 'node:readline';
import { commandLine, copyRegion, run } from './copy.js';
import { readRegionFile } from './region-file.js';

const USAGE = `usage: npm run import -- --to URL [options] < region.jsonl
  --to-token T      X-Auth-Token (default: noauth2's "admin")
  --concurrency N   requests under way at once (default 8)
  --dry-run         report what would be written, write nothing
  --verify-only     only compare the target with the file; exit status 1 on any difference
  --overwrite       replace what the target holds differently instead of reporting it
  --quiet           no progress on stderr`;

run(async () => {
  const options = commandLine(USAGE, { to: true, copy: true });
  if (process.stdin.isTTY) throw new Error('the region file is read from standard input: npm run import -- --to URL < region.jsonl');
  const { region } = await readRegionFile(createInterface({ input: process.stdin, crlfDelay: Infinity }));
  return copyRegion({ name: 'the region file', read: async () => region, requests: () => 0 }, options);
});
