/** The options several commands share, declared once. */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { OptionSpec } from '../command-line.js';
import { readRegionFile } from '../region-copy/region-file.js';
import type { Region } from '../region-copy/region.js';

const TOKEN_DEFAULT = `(default: noauth2's "admin")`;

export const FROM = {
  type: 'string',
  value: 'URL',
  help: 'the Placement API to read (upstream or this service)',
  required: true,
} as const satisfies OptionSpec;
export const FROM_TOKEN = { type: 'string', value: 'T', help: `X-Auth-Token for --from ${TOKEN_DEFAULT}` } as const satisfies OptionSpec;
export const TO = { type: 'string', value: 'URL', help: 'the Placement API to write or compare', required: true } as const satisfies OptionSpec;
export const TO_TOKEN = { type: 'string', value: 'T', help: `X-Auth-Token for --to ${TOKEN_DEFAULT}` } as const satisfies OptionSpec;
/** --url of a command that asks this service's own routes (explain, history, health). */
export const THIS_SERVICE_URL = { type: 'string', value: 'URL', help: 'the Placement API (this service)', required: true } as const satisfies OptionSpec;
export const TOKEN = { type: 'string', value: 'T', help: `X-Auth-Token ${TOKEN_DEFAULT}` } as const satisfies OptionSpec;
export const CONCURRENCY = { type: 'string', value: 'N', help: 'requests under way at once on each side (default 8)' } as const satisfies OptionSpec;
export const DRY_RUN = { type: 'boolean', help: 'read both sides, report what would be written, write nothing' } as const satisfies OptionSpec;
export const OVERWRITE = {
  type: 'boolean',
  help: 'replace what the target holds differently instead of reporting it as a conflict',
} as const satisfies OptionSpec;
export const QUIET = { type: 'boolean', help: 'no progress on stderr' } as const satisfies OptionSpec;
export const INPUT = { type: 'string', value: 'FILE', help: 'the region file to read (default: standard input)' } as const satisfies OptionSpec;

/** A region file from `path`, or from standard input when there is none (refused when it is a terminal). */
export async function readRegionInput(path: string | undefined): Promise<Region> {
  if (path === undefined && process.stdin.isTTY) throw new Error('give the region file with --input FILE or on standard input');
  const input = path === undefined ? process.stdin : createReadStream(path);
  return (await readRegionFile(createInterface({ input, crlfDelay: Infinity }))).region;
}
