/** placement-admin's command line, run as the built single file under plain node. */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_BUNDLE, runAdmin } from '../support/admin.js';

const COMMANDS = ['migrate', 'export', 'import', 'verify', 'capacity', 'upgrade check', 'upgrade finalize', 'explain'];

describe('placement-admin', () => {
  const alone = mkdtempSync(join(tmpdir(), 'placement-admin-'));
  afterAll(() => rmSync(alone, { recursive: true, force: true }));

  it('runs from a copy of its one file in a directory without node_modules', async () => {
    const copy = join(alone, 'placement-admin.cjs');
    copyFileSync(ADMIN_BUNDLE, copy);
    const run = await runAdmin(['--help'], { cwd: alone, bundle: copy });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^usage: placement-admin <command> \[options\]$/m);
    for (const name of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
  });

  it.each(COMMANDS)('describes %s and every option it takes with --help', async (name) => {
    const run = await runAdmin([...name.split(' '), '--help']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^usage: placement-admin ${name} `));
    expect(run.stdout).toMatch(/^options:$/m);
    expect(run.stdout).toMatch(/^ {2}--help +print this help$/m);
  });

  it('refuses an unknown command, an unknown option and a missing one with usage and status 2', async () => {
    const none = await runAdmin([]);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/^no command given\n\nusage: placement-admin <command>/);
    const unknown = await runAdmin(['copy']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown command "copy"/);
    const option = await runAdmin(['export', '--from', 'http://127.0.0.1:1', '--verify-only']);
    expect(option.status).toBe(2);
    expect(option.stderr).toMatch(/Unknown option '--verify-only'[\s\S]*usage: placement-admin export --from URL/);
    const missing = await runAdmin(['capacity']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^--url URL is required\n\nusage: placement-admin capacity/);
    const concurrency = await runAdmin(['migrate', '--from', 'http://a', '--to', 'http://b', '--concurrency', '0']);
    expect(concurrency.status).toBe(2);
    expect(concurrency.stderr).toMatch(/^--concurrency takes a whole number from 1 to 256/);
  });

  it('says in one line when a Placement cannot be reached, with status 1', async () => {
    const run = await runAdmin(['capacity', '--url', 'http://127.0.0.1:9', '--quiet']);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^error: .*ECONNREFUSED/m);
  });
});
