/**
 * An earlier release of this service, to run beside the current code on one
 * table (an upgrade runs both at once): its sources at the release's commit,
 * taken from this clone's history into a temporary directory once per
 * process, sharing this checkout's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Release 1.0.0: what may still be running while the current code is deployed. */
export const RELEASE_1_0_0 = 'bbd7376';

/** The release's `npm start` entry point, or the reason it cannot be had (a shallow clone without the commit). */
export function releaseEntryPoint(commit: string): { entryPoint: string; reason?: undefined } | { entryPoint?: undefined; reason: string } {
  const directory = join(tmpdir(), `placement-release-${commit}-${process.pid}`);
  const entryPoint = join(directory, 'local/start.ts');
  if (existsSync(entryPoint)) return { entryPoint };
  try {
    const archive = execFileSync('git', ['-C', ROOT, 'archive', commit], { maxBuffer: 256 * 1024 * 1024 });
    mkdirSync(directory, { recursive: true });
    execFileSync('tar', ['-x', '-C', directory], { input: archive });
    symlinkSync(join(ROOT, 'node_modules'), join(directory, 'node_modules'));
    return { entryPoint };
  } catch (error) {
    return { reason: `release ${commit} could not be taken from git: ${String(error).split('\n')[0]}` };
  }
}
