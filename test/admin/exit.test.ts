/**
 * placement-admin's exit keeps what it printed: a child prints 4 MB to a
 * pipe whose reader waits before reading, then exits; every byte must
 * arrive (with a bare process.exit the tail was lost).
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';

const BYTES = 4 * 1024 * 1024;

function printThenExit(exit: 'exitOnceWritten' | 'process.exit'): Promise<number> {
  const script = [
    "import { exitOnceWritten } from './admin/exit.ts';",
    `process.stdout.write('x'.repeat(${BYTES}));`,
    exit === 'exitOnceWritten' ? 'void exitOnceWritten(0);' : 'process.exit(0);',
  ].join('\n');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout.pause();
  return new Promise((resolve, reject) => {
    let received = 0;
    child.on('error', reject);
    child.on('close', () => resolve(received));
    // A slow reader: nothing is read until the child had time to exit.
    void sleep(1000).then(() => child.stdout.on('data', (chunk: Buffer) => (received += chunk.length)).resume());
  });
}

describe("placement-admin's exit", () => {
  it('leaves nothing it printed behind for a slow reader', async () => {
    expect(await printThenExit('exitOnceWritten')).toBe(BYTES);
  });

  it('is needed: a bare process.exit loses what the reader had not taken', async () => {
    expect(await printThenExit('process.exit')).toBeLessThan(BYTES);
  });
});
