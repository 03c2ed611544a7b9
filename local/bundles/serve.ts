/**
 * `npm run serve:bundles -- [--assembly cdk.out] [--stack NAME] [--port 8778] [--env NAME=VALUE]...`:
 * serves a synthesized stack's bundles on Lambda's Node 22 (local/bundles/runtime.ts),
 * the HTTP API or the function URL as the template has it. On SIGINT or SIGTERM it
 * stops and prints the cold starts it saw, per function.
 */
import { parseArgs } from 'node:util';
import { startBundleRuntime, type BundleRuntime } from './runtime.js';
import { coldStartTable } from './lambda-function.js';

const { values } = parseArgs({
  options: {
    assembly: { type: 'string', default: 'cdk.out' },
    stack: { type: 'string' },
    port: { type: 'string', default: process.env.PORT ?? '8778' },
    env: { type: 'string', multiple: true, default: [] },
    'max-instances': { type: 'string', default: '4' },
  },
});

const overrides = Object.fromEntries(
  values.env.map((assignment) => {
    const equals = assignment.indexOf('=');
    if (equals <= 0) throw new Error(`--env ${assignment}: expected NAME=VALUE`);
    return [assignment.slice(0, equals), assignment.slice(equals + 1)];
  }),
);

let runtime: BundleRuntime;
try {
  runtime = await startBundleRuntime({
    assembly: values.assembly,
    stack: values.stack,
    port: Number(values.port),
    overrides,
    maxInstances: Number(values['max-instances']),
  });
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
