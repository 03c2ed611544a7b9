/**
 * placement-admin as operators run it: the built single file (npm run
 * build:admin, run once before the tests by build-admin.ts) under plain
 * node, in a process of its own.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** Where npm run build:admin writes the command (package.json's bin). */
export const ADMIN_BUNDLE = join(ROOT, 'dist/placement-admin.cjs');

export interface AdminRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the command with `args`; `bundle` runs another copy of the built file. */
export function runAdmin(args: string[], options: { stdin?: string; env?: Record<string, string>; cwd?: string; bundle?: string } = {}): Promise<AdminRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bundle ?? ADMIN_BUNDLE, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** The closing line of a verify: "N checked, M differences". */
export function verifyLine(run: AdminRun): { checked: number; differences: number } | undefined {
  const match = /^(\d+) checked, (\d+) differences$/m.exec(run.stdout);
  return match ? { checked: Number(match[1]), differences: Number(match[2]) } : undefined;
}
