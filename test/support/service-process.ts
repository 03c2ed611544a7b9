/**
 * A second, third... local service for tests that need several at once, or
 * one to kill: one process each (`npm start`'s entry point on a free port,
 * with its own DynamoDB Local unless given one), since the storage client of
 * a process talks to one DynamoDB only.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../../local/dynamodb-local.js';

const START = join(dirname(fileURLToPath(import.meta.url)), '../../local/start.ts');

export interface ServiceProcess {
  url: string;
  stop(): Promise<void>;
  /** SIGKILL: the process dies at once, running nothing more, as a Lambda instance or a host can. */
  kill(): Promise<void>;
}

export interface ServiceProcessOptions {
  /** A DynamoDB (Local, or a proxy in front of one) to use instead of starting one. */
  dynamoDbEndpoint?: string;
  /** Further environment variables of the service. */
  environment?: Record<string, string>;
  /** The entry point to run instead of this checkout's (another release's local/start.ts: test/support/release.ts). */
  entryPoint?: string;
}

export async function startServiceProcess({
  dynamoDbEndpoint = '',
  environment = {},
  entryPoint = START,
}: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  const port = await freeLoopbackPort();
  const env = {
    ...process.env,
    PORT: String(port),
    PLACEMENT_DYNAMODB_ENDPOINT: dynamoDbEndpoint,
    PLACEMENT_DATA_DIR: '',
    NODE_NO_WARNINGS: '1',
    ...environment,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', entryPoint], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  const ended = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  return { url: `http://127.0.0.1:${port}`, stop: () => ended('SIGTERM'), kill: () => ended('SIGKILL') };
}
