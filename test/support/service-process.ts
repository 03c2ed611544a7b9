/**
 * A second, third... local service for tests that need several at once, or
 * one to kill: one process each (`npm start`'s entry point on a free port),
 * since the storage client of a process talks to one DynamoDB only. Given a
 * DynamoDB (a proxy in front of the worker's DynamoDB Local, say), it works
 * in the test's table (PLACEMENT_TABLE_NAME), as another instance of one
 * region; else in an empty table of its own on the worker's.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshTableName } from './tables.js';

const START = join(dirname(fileURLToPath(import.meta.url)), '../../local/start.ts');

export interface ServiceProcess {
  url: string;
  stop(): Promise<void>;
  /** SIGKILL: the process dies at once, running nothing more, as a Lambda instance or a host can. */
  kill(): Promise<void>;
  /** What it has written so far, stdout and stderr together. */
  output(): string;
}

export interface ServiceProcessOptions {
  /** A DynamoDB (Local, or a proxy in front of one) holding the test's table. */
  dynamoDbEndpoint?: string;
  /** Further environment variables of the service. */
  environment?: Record<string, string>;
  /** Another checkout's local/start.ts (an earlier release, test/support/release.ts) instead of this one's. */
  entryPoint?: string;
}

export async function startServiceProcess({ dynamoDbEndpoint, environment = {}, entryPoint = START }: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  const env = {
    ...process.env,
    // The service binds a port the system picks and says which: a port found free here could be taken before the child
    // binds it (by another worker, or a second CI run on the machine).
    PORT: '0',
    ...(dynamoDbEndpoint === undefined ? { PLACEMENT_TABLE_NAME: freshTableName() } : { PLACEMENT_DYNAMODB_ENDPOINT: dynamoDbEndpoint }),
    PLACEMENT_DATA_DIR: '',
    NODE_NO_WARNINGS: '1',
    ...environment,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', entryPoint], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}: ${output}`)));
    const listen = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /Placement listening on (http:\/\/[\d.:]+)/.exec(output);
      if (listening) resolve(listening[1]!);
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
  return { url, stop: () => ended('SIGTERM'), kill: () => ended('SIGKILL'), output: () => output };
}
