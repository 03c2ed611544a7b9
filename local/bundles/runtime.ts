/**
 * Serves a synthesized stack's bundles the way AWS would run them: the
 * table created from the template on DynamoDB Local, the template's custom
 * resources run (the catalog seeder), then the front door the template
 * describes (HTTP API with its authorizer, or a function URL) in front of
 * the functions, and the schedules and change-stream consumers beside it
 * (local/bundles/background.ts), each function run from its cdk.out asset on
 * Lambda's Node (local/bundles/lambda-function.ts). What the functions see differs from
 * AWS in one variable: PLACEMENT_DYNAMODB_ENDPOINT, DynamoDB Local's address
 * (and whatever `overrides` adds, e.g. a Secrets Manager stand-in).
 */
import { createServer, type Server } from 'node:http';
import { parseArgs } from 'node:util';
import {
  CreateTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
  type TimeToLiveSpecification,
} from '@aws-sdk/client-dynamodb';
import { dynamo } from '../../shared/storage/client.js';
import { clientErrorHandler, requestListener, type Dispatch } from '../api-gateway-adapter.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../dynamodb-local.js';
import { startBackgroundWork, type BackgroundWork } from './background.js';
import { readStack, stackNames, type StackSpec } from './cloud-assembly.js';
import { functionUrlDispatch, httpApiDispatch } from './front-doors.js';
import { LambdaFunction, type ColdStart, type Invocation } from './lambda-function.js';
import { lambdaNode } from './lambda-node.js';

export interface BundleRuntimeOptions {
  /** The cloud assembly: `cdk synth`'s output directory. */
  assembly: string;
  /** The stack to serve; unset: the assembly's only one. */
  stack?: string;
  port: number;
  host?: string;
  /** The Node binary for the functions; unset: the pinned Node of Lambda's runtime (local/bundles/lambda-node.ts). */
  node?: string;
  /** More variables for every function: local stand-ins for AWS services. */
  overrides?: Record<string, string>;
  /** Instances per function at most (default 4); Lambda has no such cap, this machine does. */
  maxInstances?: number;
  /** The functions' own output (their log streams); unset: this process's stderr. */
  output?: (functionName: string, text: string) => void;
  /** Each scheduled function this often instead of at its rule's rate. */
  scheduleEverySeconds?: number;
}

export interface BundleRuntime {
  url: string;
  stack: StackSpec;
  dynamoDbEndpoint: string;
  /** Every cold start so far, function by function. */
  coldStarts(): ColdStart[];
  /** Invokes one of the stack's functions directly (by logical id), as `aws lambda invoke` would. */
  invoke(functionId: string, event: unknown): Promise<Invocation>;
  /** A function of the stack with no warm instance yet (its next invocation is a cold start); the caller stops it. */
  coldFunction(functionId: string): LambdaFunction;
  /** Reads the change stream to its end now, every function it feeds given its records. */
  catchUpStream(): Promise<void>;
  /** The URL of one of the stack's queues by logical id (SQS's protocol, local/sqs-queues.ts). */
  queueUrl(logicalId: string): string;
  stop(): Promise<void>;
}

const ACCOUNT_ID = '000000000000';

/**
 * The options `npm run serve:bundles -- [--assembly cdk.out] [--stack NAME] [--port P] [--env NAME=VALUE]...
 * [--max-instances N] [--schedule-seconds S]` gives.
 */
export function runtimeOptions(args: string[]): BundleRuntimeOptions {
  const { values } = parseArgs({
    args,
    options: {
      assembly: { type: 'string', default: 'cdk.out' },
      stack: { type: 'string' },
      port: { type: 'string', default: process.env.PORT ?? '8778' },
      env: { type: 'string', multiple: true, default: [] },
      'max-instances': { type: 'string', default: '4' },
      'schedule-seconds': { type: 'string' },
    },
  });
  const overrides = Object.fromEntries(
    values.env.map((assignment) => {
      const equals = assignment.indexOf('=');
      if (equals <= 0) throw new Error(`--env ${assignment}: expected NAME=VALUE`);
      return [assignment.slice(0, equals), assignment.slice(equals + 1)];
    }),
  );
  const scheduleSeconds = values['schedule-seconds'];
  return {
    assembly: values.assembly,
    stack: values.stack,
    port: Number(values.port),
    overrides,
    maxInstances: Number(values['max-instances']),
    ...(scheduleSeconds === undefined ? {} : { scheduleEverySeconds: Number(scheduleSeconds) }),
  };
}

/** The template's table, created on DynamoDB Local as CloudFormation would create it. */
async function createTable(name: string, properties: Record<string, unknown>): Promise<void> {
  const { AttributeDefinitions, KeySchema, GlobalSecondaryIndexes, LocalSecondaryIndexes, BillingMode, StreamSpecification, TimeToLiveSpecification } =
    properties;
  const creation = dynamo().send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions,
      KeySchema,
      GlobalSecondaryIndexes,
      LocalSecondaryIndexes,
      // CloudFormation's StreamSpecification holds the view type only; DynamoDB's API wants the stream enabled too.
      StreamSpecification: StreamSpecification && { StreamEnabled: true, ...StreamSpecification },
      BillingMode: BillingMode ?? 'PROVISIONED',
      ...(BillingMode === 'PAY_PER_REQUEST' ? {} : { ProvisionedThroughput: properties.ProvisionedThroughput }),
    } as CreateTableCommandInput),
  );
  try {
    await creation;
  } catch (error) {
    // A DynamoDB that outlives the runtime (PLACEMENT_DYNAMODB_ENDPOINT) keeps the table and its data, as a redeploy would.
    if (error instanceof ResourceInUseException) return;
    throw error;
  }
  const ttl = TimeToLiveSpecification as TimeToLiveSpecification | undefined;
  if (ttl?.Enabled) await dynamo().send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: ttl }));
}

export async function startBundleRuntime(options: BundleRuntimeOptions): Promise<BundleRuntime> {
  const stacks = stackNames(options.assembly);
  const stackName = options.stack ?? (stacks.length === 1 ? stacks[0] : undefined);
  if (stackName === undefined) throw new Error(`${options.assembly} holds ${stacks.length} stacks (${stacks.join(', ')}): name one`);
  const tableName = `${stackName}-table`;
  const stack = readStack(options.assembly, stackName, { tableName, accountId: ACCOUNT_ID });

  let database: DynamoDbLocal | undefined;
  if (!process.env.PLACEMENT_DYNAMODB_ENDPOINT) {
    database = await startDynamoDbLocal({});
    process.env.PLACEMENT_DYNAMODB_ENDPOINT = database.endpoint;
  }
  const endpoint = process.env.PLACEMENT_DYNAMODB_ENDPOINT;
  const node = options.node ?? lambdaNode();
  const output = options.output ?? ((name: string, text: string) => process.stderr.write(text.replace(/^(?=.)/gm, `[${name}] `)));
  const functions = new Map<string, LambdaFunction>();
  const coldFunction = (id: string): LambdaFunction => {
    const spec = stack.functions.get(id);
    if (spec === undefined) throw new Error(`${stackName}: no function ${id}`);
    return new LambdaFunction(`${stackName}-${id}`.slice(0, 64), spec, {
      node,
      region: stack.region,
      accountId: ACCOUNT_ID,
      overrides: { PLACEMENT_DYNAMODB_ENDPOINT: endpoint, ...options.overrides },
      output,
      maxInstances: options.maxInstances ?? 4,
    });
  };
  const functionFor = (id: string): LambdaFunction => {
    let fn = functions.get(id);
    if (fn === undefined) {
      fn = coldFunction(id);
      functions.set(id, fn);
    }
    return fn;
  };
  const invoke = (id: string, event: unknown) => functionFor(id).invoke(event);
  let server: Server | undefined;
  let background: BackgroundWork | undefined;
  const stop = async () => {
    await background?.stop();
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise((resolve) => server!.close(resolve));
    }
    for (const fn of functions.values()) fn.stop();
    if (database !== undefined) {
      delete process.env.PLACEMENT_DYNAMODB_ENDPOINT;
      await database.stop();
    }
  };

  try {
    await createTable(tableName, stack.table.properties);
    // What CloudFormation does at the first deploy: each custom resource's Create.
    for (const resource of stack.customResources) {
      const invocation = await invoke(resource.functionId, {
        RequestType: 'Create',
        RequestId: `local-${resource.logicalId}`,
        LogicalResourceId: resource.logicalId,
        ResourceType: resource.resourceType,
        StackId: `arn:aws:cloudformation:${stack.region}:${ACCOUNT_ID}:stack/${stackName}/local`,
        ResourceProperties: resource.properties,
      });
      if (!invocation.ok) throw new Error(`custom resource ${resource.logicalId} failed: ${invocation.errorType}: ${invocation.errorMessage}`);
    }

    // The schedules and the stream's consumers, as AWS runs them once the stack is deployed.
    background = await startBackgroundWork(stack, invoke, {
      endpoint,
      table: tableName,
      accountId: ACCOUNT_ID,
      scheduleEverySeconds: options.scheduleEverySeconds,
      report: (functionId, text) => output(functionId, text),
    });

    const door = stack.frontDoor;
    const dispatch: Dispatch =
      door.kind === 'functionUrl' ? functionUrlDispatch(door.functionId, invoke) : httpApiDispatch(door.routes, door.authorizer, invoke);
    const listener = requestListener(dispatch);
    // The listener answers every error itself: its promise never rejects.
    server = createServer((request, response) => void listener(request, response));
    server.on('clientError', clientErrorHandler(dispatch));
    server.keepAliveTimeout = 65_000;
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(options.port, host, resolve);
    });
    const { port } = server.address() as { port: number };
    return {
      url: `http://${host}:${port}`,
      stack,
      dynamoDbEndpoint: endpoint,
      coldStarts: () => [...functions.values()].flatMap((fn) => fn.coldStarts),
      invoke,
      coldFunction,
      catchUpStream: () => background!.catchUp(),
      queueUrl: (logicalId) => background!.queueUrl(logicalId),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
