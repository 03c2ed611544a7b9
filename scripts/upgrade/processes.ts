/**
 * The processes of a mixed-version run: each in a process group of its own
 * (so that stopping it stops npm, tsx and node together), its output in a
 * log file that is kept.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Started {
  name: string;
  log: string;
  child: ChildProcess;
  exited: Promise<number>;
}

/** Starts `command` in a new process group, stdout and stderr appended to `logs/<name>.log`. */
export function startGroup(name: string, logs: string, command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Started {
  const log = join(logs, `${name}.log`);
  const output = openSync(log, 'a');
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', output, output], detached: true });
  closeSync(output);
  const exited = new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
  return { name, log, child, exited };
}

/** SIGTERM to the whole group, SIGKILL if it is still there after `graceMs`. */
export async function stopGroup(started: Started, graceMs = 15_000): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-started.child.pid!, signal);
    } catch {
      // The group is gone already.
    }
  };
  signalGroup('SIGTERM');
  const stopped = await Promise.race([started.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!stopped) {
    signalGroup('SIGKILL');
    await started.exited;
  }
}

/** Runs `command` to its end in a process group of its own; its exit status and its output (also kept in the log). */
export async function runToEnd(name: string, logs: string, command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const started = startGroup(name, logs, command, args, options);
  const status = await started.exited;
  return { status, output: readFileSync(started.log, 'utf8'), log: started.log };
}

/** Waits until the log shows a line matching `pattern` (its match), or fails when the process exits or `timeoutMs` passes. */
export async function waitForLine(started: Started, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(readFileSync(started.log, 'utf8'));
    if (match) return match;
    if (started.child.exitCode !== null) throw new Error(`${started.name} exited with ${started.child.exitCode} before it was ready; its log: ${started.log}`);
    if (Date.now() > deadline) throw new Error(`${started.name} was not ready within ${timeoutMs / 1000} s; its log: ${started.log}`);
    await sleep(250);
  }
}
