/**
 * One Lambda function of a synthesized stack, run here as Lambda runs it:
 * its bundle copied to a directory of its own (Lambda's /var/task, outside
 * the project, so that nothing the bundle lacks is found in node_modules),
 * each instance a Node process of the function's runtime with the
 * function's environment from the template, Lambda's own variables and
 * Lambda's memory flags, the module imported once per instance and the
 * instance kept warm between invocations, one invocation at a time per
 * instance (a second concurrent one starts another instance: a cold start).
 * Every cold start is measured: the instance's init (the bundle's import) and
 * its first invocation.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FunctionSpec } from './cloud-assembly.js';

const BOOTSTRAP = join(dirname(fileURLToPath(import.meta.url)), 'lambda-bootstrap.mjs');
/** Lambda gives an on-demand instance's init at most 10 s. */
const INIT_TIMEOUT_MS = 10_000;

/** A function's answer or failure, and the handler's own time (Lambda's Duration, init apart) when it ran. */
export type Invocation =
  | { ok: true; result: unknown; durationMs?: number }
  | { ok: false; errorType: string; errorMessage: string; phase: 'init' | 'invoke' | 'timeout' | 'crash'; durationMs?: number };

export interface ColdStart {
  function: string;
  /** The bundle's import (Lambda's Init Duration). */
  initMs: number;
  /** The instance's first invocation, the handler's own time. */
  firstInvocationMs: number;
}

export interface LambdaFunctionOptions {
  /** The Node binary the runtime stands for (local/bundles/lambda-node.ts). */
  node: string;
  region: string;
  accountId: string;
  /** Variables the deployed function does not have: the local stand-ins for AWS (DynamoDB Local's endpoint). */
  overrides: Record<string, string>;
  /** What the instances write to stdout and stderr (Lambda's log stream). */
  output: (functionName: string, text: string) => void;
  /** Instances at most; further concurrent invocations wait for one to be free. */
  maxInstances: number;
}

type Message =
  | { type: 'ready'; initMs: number; error?: { errorType: string; errorMessage: string } }
  | { type: 'result'; id: string; result: unknown; durationMs: number }
  | { type: 'error'; id: string; error: { errorType: string; errorMessage: string }; durationMs: number };

/** The V8 heap flags Lambda's Node bootstrap derives from the memory size: a tenth for the young generation, the rest old. */
function memoryFlags(memoryMb: number): string[] {
  const youngMb = Math.floor(memoryMb / 10);
  return ['--expose-gc', '--max-http-header-size', '81920', `--max-semi-space-size=${Math.floor(youngMb / 2)}`, `--max-old-space-size=${memoryMb - youngMb}`];
}

class Instance {
  private readonly child: ChildProcess;
  readonly ready: Promise<Extract<Message, { type: 'ready' }>>;
  private readonly pending = new Map<string, (message: Message | undefined) => void>();
  alive = true;

  constructor(node: string, taskRoot: string, spec: FunctionSpec, env: Record<string, string>, output: (text: string) => void) {
    this.child = fork(BOOTSTRAP, [], { execPath: node, execArgv: memoryFlags(spec.memoryMb), cwd: taskRoot, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    this.child.stdout!.on('data', (chunk: Buffer) => output(chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => output(chunk.toString()));
    this.ready = new Promise((resolve) => {
      const timer = setTimeout(
        () => resolve({ type: 'ready', initMs: INIT_TIMEOUT_MS, error: { errorType: 'Runtime.InitTimeout', errorMessage: 'init timed out' } }),
        INIT_TIMEOUT_MS,
      );
      this.child.on('message', (message: Message) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          resolve(message);
        } else this.pending.get(message.id)?.(message);
      });
      const ended = (errorMessage: string) => {
        this.alive = false;
        clearTimeout(timer);
        resolve({ type: 'ready', initMs: 0, error: { errorType: 'Runtime.ExitError', errorMessage } });
        for (const settle of this.pending.values()) settle(undefined);
      };
      this.child.on('exit', (code, signal) => ended(`exited before init finished (${signal ?? code})`));
      // A sandbox that cannot start (its Node gone, as when a runtime is stopped while an invocation is on its way) fails
      // that invocation, as Lambda's would, instead of the process that runs it.
      this.child.on('error', (error) => ended(`could not start: ${error.message}`));
    });
  }

  /** One invocation; the instance is killed when it times out, as Lambda ends a timed-out sandbox. */
  invoke(event: unknown, functionArn: string, timeoutMs: number): Promise<{ invocation: Invocation; durationMs: number }> {
    const id = randomUUID();
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.kill();
        resolve({
          invocation: {
            ok: false,
            errorType: 'Sandbox.Timedout',
            errorMessage: `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`,
            phase: 'timeout',
          },
          durationMs: timeoutMs,
        });
      }, timeoutMs);
      this.pending.set(id, (message) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (message === undefined) {
          resolve({ invocation: { ok: false, errorType: 'Runtime.ExitError', errorMessage: 'the instance exited', phase: 'crash' }, durationMs: 0 });
        } else if (message.type === 'result') resolve({ invocation: { ok: true, result: message.result }, durationMs: message.durationMs });
        else if (message.type === 'error') resolve({ invocation: { ok: false, ...message.error, phase: 'invoke' }, durationMs: message.durationMs });
      });
      // An instance whose channel closed since it was picked (killed, or gone between invocations) fails this
      // invocation as a crash, and is ended: the write's error comes back here, not as an uncaught 'error' event.
      this.child.send({ id, event, requestId: id, deadline, functionArn }, (error) => {
        if (error === null) return;
        this.kill();
        this.pending.get(id)?.(undefined);
      });
    });
  }

  kill(): void {
    this.alive = false;
    this.child.kill('SIGKILL');
  }
}

export class LambdaFunction {
  readonly coldStarts: ColdStart[] = [];
  private readonly taskRoot: string;
  private readonly idle: Instance[] = [];
  private readonly all = new Set<Instance>();
  private readonly waiting: (() => void)[] = [];
  private readonly arn: string;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly spec: FunctionSpec,
    private readonly options: LambdaFunctionOptions,
  ) {
    // Lambda unpacks the bundle into /var/task: a directory of its own, with no node_modules above it.
    this.taskRoot = mkdtempSync(join(tmpdir(), `lambda-${name}-`));
    cpSync(spec.codeDirectory, this.taskRoot, { recursive: true });
    this.arn = `arn:aws:lambda:${options.region}:${options.accountId}:function:${name}`;
  }

  /** The variables a Lambda instance of this function sees. */
  private environment(): Record<string, string> {
    const { spec, name, options } = this;
    return {
      ...spec.environment,
      _HANDLER: spec.handler,
      LAMBDA_TASK_ROOT: this.taskRoot,
      LAMBDA_RUNTIME_DIR: dirname(BOOTSTRAP),
      AWS_EXECUTION_ENV: `AWS_Lambda_${spec.runtime}`,
      AWS_REGION: options.region,
      AWS_DEFAULT_REGION: options.region,
      AWS_LAMBDA_FUNCTION_NAME: name,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${name}`,
      AWS_LAMBDA_LOG_STREAM_NAME: `local/[$LATEST]${randomUUID().replaceAll('-', '')}`,
      ...(spec.logFormat === 'JSON' ? { AWS_LAMBDA_LOG_FORMAT: 'JSON', AWS_LAMBDA_LOG_LEVEL: spec.applicationLogLevel ?? 'INFO' } : {}),
      // The role's credentials: DynamoDB Local accepts any.
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SESSION_TOKEN: 'local',
      LANG: 'en_US.UTF-8',
      TZ: ':UTC',
      PATH: `${dirname(options.node)}:/usr/local/bin:/usr/bin:/bin`,
      ...options.overrides,
    };
  }

  private async acquire(): Promise<{ instance: Instance; cold: boolean }> {
    for (;;) {
      const instance = this.idle.pop();
      if (instance?.alive) return { instance, cold: false };
      if (instance === undefined) break;
      this.all.delete(instance);
    }
    if (this.all.size >= this.options.maxInstances) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      return this.acquire();
    }
    const instance = new Instance(this.options.node, this.taskRoot, this.spec, this.environment(), (text) => this.options.output(this.name, text));
    this.all.add(instance);
    return { instance, cold: true };
  }

  private release(instance: Instance): void {
    if (instance.alive) this.idle.push(instance);
    else this.all.delete(instance);
    this.waiting.shift()?.();
  }

  async invoke(event: unknown): Promise<Invocation> {
    // A schedule's tick or a stream batch already under way when the runtime stops must not start an
    // instance from a bundle (or a Node) that is being removed.
    if (this.stopped) return { ok: false, errorType: 'Runtime.Stopped', errorMessage: `${this.name} has been stopped`, phase: 'init' };
    const { instance, cold } = await this.acquire();
    try {
      const ready = await instance.ready;
      if (ready.error) {
        instance.kill();
        return { ok: false, ...ready.error, phase: 'init' };
      }
      const { invocation, durationMs } = await instance.invoke(event, this.arn, this.spec.timeoutSeconds * 1000);
      if (cold) this.coldStarts.push({ function: this.name, initMs: ready.initMs, firstInvocationMs: durationMs });
      return { ...invocation, durationMs };
    } finally {
      this.release(instance);
    }
  }

  /** Ends every instance and removes the unpacked bundle. */
  stop(): void {
    this.stopped = true;
    for (const instance of this.all) instance.kill();
    this.all.clear();
    this.idle.length = 0;
    rmSync(this.taskRoot, { recursive: true, force: true });
  }
}

const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;

/** One line per function: how many cold starts, their median init and first invocation (a Markdown table). */
export function coldStartTable(coldStarts: ColdStart[]): string {
  const byFunction = new Map<string, ColdStart[]>();
  for (const start of coldStarts) byFunction.set(start.function, [...(byFunction.get(start.function) ?? []), start]);
  const rows = [...byFunction].map(
    ([name, starts]) =>
      `| ${name} | ${starts.length} | ${median(starts.map((start) => start.initMs)).toFixed(0)} | ${median(starts.map((start) => start.firstInvocationMs)).toFixed(0)} |`,
  );
  return ['| function | cold starts | median init ms | median first invocation ms |', '|---|---|---|---|', ...rows].join('\n');
}
