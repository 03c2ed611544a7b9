// One Lambda function instance (an execution environment), started by local/bundles/lambda-function.ts
// on the Node Lambda runs. Plain JavaScript without a loader, so that nothing but the bundle is
// imported the way Lambda's Node runtime imports it: `_HANDLER` is `file.export`, the file is looked up in
// LAMBDA_TASK_ROOT as .js, .mjs or .cjs. The time the import takes is the instance's init duration;
// invocations then come one at a time over the IPC channel, as Lambda hands an instance one event at a time.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const taskRoot = process.env.LAMBDA_TASK_ROOT;
const [file, exportName] = (() => {
  const handler = process.env._HANDLER ?? '';
  const dot = handler.lastIndexOf('.');
  return [handler.slice(0, dot), handler.slice(dot + 1)];
})();

const errorRecord = (error) => ({
  errorType: error instanceof Error ? error.name : typeof error,
  errorMessage: error instanceof Error ? error.message : String(error),
  stack: error instanceof Error ? error.stack : undefined,
});

let handler;
let initError;
const started = performance.now();
try {
  const path = ['.js', '.mjs', '.cjs'].map((extension) => join(taskRoot, file + extension)).find((candidate) => existsSync(candidate));
  if (path === undefined) throw new Error(`Cannot find module '${file}' in ${taskRoot}`);
  const module = await import(pathToFileURL(path).href);
  handler = module[exportName];
  if (typeof handler !== 'function') throw new Error(`${file}.${exportName} is not a function`);
  // From nodejs24.x on, Lambda calls no callback-style handler (event, context, callback): one that is not
  // async and takes three parameters is what its runtime interface client takes for one
  // (aws/aws-lambda-nodejs-runtime-interface-client, issue 137). Such a bundle fails here as it would there.
  const runtimeMajor = Number(/^AWS_Lambda_nodejs(\d+)/.exec(process.env.AWS_EXECUTION_ENV ?? '')?.[1] ?? 0);
  if (runtimeMajor >= 24 && handler.length >= 3 && handler.constructor.name !== 'AsyncFunction') {
    throw new Error(`${file}.${exportName} is a callback-style handler (three parameters, not async): nodejs${runtimeMajor}.x calls only async handlers`);
  }
} catch (error) {
  initError = errorRecord(error);
  console.error(`ERROR\tInit Error\t${JSON.stringify(initError)}`);
}
process.send({ type: 'ready', initMs: performance.now() - started, error: initError });

process.on('message', async (message) => {
  const { id, event, requestId, deadline } = message;
  const context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION,
    invokedFunctionArn: message.functionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  const begun = performance.now();
  try {
    const result = await handler(event, context);
    process.send({ type: 'result', id, result, durationMs: performance.now() - begun });
  } catch (error) {
    // Lambda's runtime logs a failed invocation to the function's log stream.
    console.error(`ERROR\tInvoke Error\t${JSON.stringify(errorRecord(error))}`);
    process.send({ type: 'error', id, error: errorRecord(error), durationMs: performance.now() - begun });
  }
});
// The runtime that started this instance is gone: so is the instance (Lambda reclaims it).
process.on('disconnect', () => process.exit(0));
