/**
 * The real upstream Placement (../shared/reference/start-reference.sh) for
 * integration tests, on a free loopback port with a fresh database. When it
 * cannot be started the tests that need it are skipped with the reason,
 * unless PLACEMENT_REQUIRE_REFERENCE=1 (set by .ci/run), which fails them.
 * The scripts are looked for in ../shared beside the clone, or in
 * $PLACEMENT_SHARED_DIR.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../../local/dynamodb-local.js';

/** ../shared beside the clone (as CI has it), or PLACEMENT_SHARED_DIR (a git worktree elsewhere). */
const SCRIPTS = join(process.env.PLACEMENT_SHARED_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '../../../shared'), 'reference');
const run = promisify(execFile);

export interface Reference {
  url: string;
  stop(): Promise<void>;
}

export type ReferenceOrReason = { reference: Reference; reason?: undefined } | { reference?: undefined; reason: string };

export async function startReference(): Promise<ReferenceOrReason> {
  const required = process.env.PLACEMENT_REQUIRE_REFERENCE === '1';
  const unavailable = (reason: string): ReferenceOrReason => {
    if (required) throw new Error(`the reference Placement is required (PLACEMENT_REQUIRE_REFERENCE=1) but ${reason}`);
    console.warn(`skipping the tests against the real Placement: ${reason}`);
    return { reason };
  };
  if (!existsSync(join(SCRIPTS, 'start-reference.sh'))) return unavailable(`${SCRIPTS}/start-reference.sh does not exist`);
  const state = mkdtempSync(join(tmpdir(), 'placement-reference-test-'));
  // A port found free here can be taken before uWSGI binds it (another worker, a second CI run): a failed start tries
  // another, twice.
  for (let attempt = 1; ; attempt++) {
    const port = String(await freeLoopbackPort());
    const script = (name: string) => run('bash', [join(SCRIPTS, `${name}-reference.sh`), '--port', port, '--state-dir', state], { timeout: 300_000 });
    try {
      const { stdout } = await script('start');
      const url = /^URL=(\S+)$/m.exec(stdout)?.[1];
      if (url === undefined) return unavailable('start-reference.sh printed no URL');
      return { reference: { url, stop: async () => void (await script('stop')) } };
    } catch (error) {
      await script('stop').catch(() => undefined);
      if (attempt < 3) continue;
      return unavailable(
        `start-reference.sh failed: ${String((error as { stderr?: string }).stderr ?? error)
          .trim()
          .split('\n')
          .slice(-3)
          .join(' | ')}`,
      );
    }
  }
}
