/**
 * A second, third... local service for tests that need several at once: one
 * process each (`npm start`'s entry point on a free port, with its own
 * DynamoDB Local), since the storage client of a process talks to one
 * DynamoDB only.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../../local/dynamodb-local.js';

const START = join(dirname(fileURLToPath(import.meta.url)), '../../local/start.ts');

export interface ServiceProcess {
  url: string;
  stop(): Promise<void>;
}

export async function startServiceProcess(): Promise<ServiceProcess> {
  const port = await freeLoopbackPort();
  const env = { ...process.env, PORT: String(port), PLACEMENT_DYNAMODB_ENDPOINT: '', PLACEMENT_DATA_DIR: '', NODE_NO_WARNINGS: '1' };
  const child = spawn(process.execPath, ['--import', 'tsx', START], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}: ${output}`)));
    const listen = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Placement listening on/.test(output)) resolve();
    };
    child.stdout.on('data', listen);
    child.stderr.on('data', listen);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
