/**
 * The previous release of this service (the one CHANGELOG.md records before
 * this checkout's version), to run beside the current code on one table as an
 * upgrade does: its sources taken from this clone's git history at the
 * release's commit, once per machine, sharing this checkout's node_modules
 * (a release's dependencies are a subset of today's; the mixed-version run,
 * scripts/upgrade/mixed.ts, installs the release's own).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkoutReleases } from '../../scripts/upgrade/changelog.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface PreviousRelease {
  version: string;
  commit: string;
  /** Its `npm start` entry point (local/start.ts), for startServiceProcess. */
  entryPoint: string;
}

/** The previous release, unpacked; throws with what to do when the clone lacks its commit (a shallow clone). */
export function previousReleaseSources(): PreviousRelease {
  const { release } = checkoutReleases(ROOT);
  // One per release and checkout: its node_modules link points into this checkout.
  const checkout = createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
  const directory = join(tmpdir(), `placement-release-${release.version}-${release.commit}-${checkout}`);
  const entryPoint = join(directory, 'local/start.ts');
  if (!existsSync(entryPoint)) {
    let archive: Buffer;
    try {
      archive = execFileSync('git', ['-C', ROOT, 'archive', release.commit], { maxBuffer: 512 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch {
      throw new Error(
        `release ${release.version}'s commit ${release.commit} (CHANGELOG.md) is not in this clone: clone without --depth, or git fetch --unshallow`,
      );
    }
    // Unpacked beside and renamed into place, so that tests in parallel never see half a release.
    const unpacking = mkdtempSync(`${directory}.unpacking-`);
    execFileSync('tar', ['-x', '-C', unpacking], { input: archive });
    symlinkSync(join(ROOT, 'node_modules'), join(unpacking, 'node_modules'));
    try {
      renameSync(unpacking, directory);
    } catch (error) {
      rmSync(unpacking, { recursive: true, force: true });
      if (!existsSync(entryPoint)) throw error;
    }
  }
  return { version: release.version, commit: release.commit, entryPoint };
}
