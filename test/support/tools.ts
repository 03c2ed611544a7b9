/** Runs the project's command-line tools (scripts/...) as an operator would, in a process of their own. */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface ToolRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runTool(script: string, args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script), ...args], {
      cwd: ROOT,
      env: { ...process.env, NODE_NO_WARNINGS: '1', ...options.env },
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
export function verifyLine(run: ToolRun): { checked: number; differences: number } | undefined {
  const match = /^(\d+) checked, (\d+) differences$/m.exec(run.stdout);
  return match ? { checked: Number(match[1]), differences: Number(match[2]) } : undefined;
}
