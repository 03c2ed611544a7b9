/**
 * `npm run serve:bundles -- [--assembly cdk.out] [--stack NAME] [--port 8778] [--env NAME=VALUE]...`:
 * serves a synthesized stack's bundles on Lambda's Node (local/bundles/runtime.ts),
 * the HTTP API or the function URL as the template has it. On SIGINT or SIGTERM it
 * stops and prints the cold starts it saw, per function.
 */
import { runtimeOptions, startBundleRuntime, type BundleRuntime } from './runtime.js';
import { coldStartTable } from './lambda-function.js';

let runtime: BundleRuntime;
try {
  runtime = await startBundleRuntime(runtimeOptions(process.argv.slice(2)));
} catch (error) {
  console.error(`placement bundles: cannot start: ${(error as Error).message}`);
  process.exit(1);
}
console.log(
  `Placement bundles of ${runtime.stack.stackName} (${runtime.stack.frontDoor.kind}) listening on ${runtime.url} (DynamoDB at ${runtime.dynamoDbEndpoint})`,
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log(`\nCold starts:\n${coldStartTable(runtime.coldStarts())}`);
    runtime.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
