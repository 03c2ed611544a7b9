/**
 * The bundle runtime (local/bundles/): small hand-written cloud assemblies
 * show what it promises of Lambda and API Gateway (Lambda's environment on
 * its Node, a bundle that needs a package it lacks failing as in Lambda,
 * timeouts, the authorizer's identity source and cache, route selection);
 * then the stack itself, synthesized with its real bundles for both front
 * doors, answers through it.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPlacementStacks } from '../../../infra/placement-app.js';
import { readStack } from '../../../local/bundles/cloud-assembly.js';
import { coldStartTable } from '../../../local/bundles/lambda-function.js';
import { LAMBDA_NODE, lambdaNode } from '../../../local/bundles/lambda-node.js';
import { runtimeOptions, startBundleRuntime, type BundleRuntime } from '../../../local/bundles/runtime.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../../local/dynamodb-local.js';
import { client } from '../../../admin/placement-client.js';

const TABLE = {
  Type: 'AWS::DynamoDB::Table',
  Properties: {
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    BillingMode: 'PAY_PER_REQUEST',
  },
};

/** A cloud assembly of one stack: the template's resources, and each function's index.mjs. */
function assembly(resources: Record<string, unknown>, code: Record<string, string>, stackName = 'Test'): string {
  const directory = mkdtempSync(join(tmpdir(), 'assembly-'));
  for (const [id, source] of Object.entries(code)) {
    mkdirSync(join(directory, `asset.${id}`));
    writeFileSync(join(directory, `asset.${id}`, 'index.mjs'), source);
  }
  writeFileSync(join(directory, `${stackName}.template.json`), JSON.stringify({ Resources: { Table: TABLE, ...resources } }));
  writeFileSync(
    join(directory, 'manifest.json'),
    JSON.stringify({
      artifacts: {
        [stackName]: {
          type: 'aws:cloudformation:stack',
          environment: 'aws://unknown-account/eu-west-1',
          properties: { templateFile: `${stackName}.template.json` },
        },
      },
    }),
  );
  return directory;
}

const lambda = (id: string, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::Function',
  Properties: { Handler: 'index.handler', Runtime: 'nodejs24.x', MemorySize: 256, Timeout: 3, ...properties },
  Metadata: { 'aws:asset:path': `asset.${id}` },
});
const route = (routeKey: string, integration: string, authorized = false) => ({
  Type: 'AWS::ApiGatewayV2::Route',
  Properties: {
    RouteKey: routeKey,
    Target: { 'Fn::Join': ['', ['integrations/', { Ref: integration }]] },
    AuthorizationType: authorized ? 'CUSTOM' : 'NONE',
    ...(authorized ? { AuthorizerId: { Ref: 'Authorizer' } } : {}),
  },
});
const integration = (fn: string) => ({ Type: 'AWS::ApiGatewayV2::Integration', Properties: { IntegrationUri: { 'Fn::GetAtt': [fn, 'Arn'] } } });
const reply = (body: string) => `export const handler = async (event, context) => ({ statusCode: 200, body: JSON.stringify(${body}) });`;
const rule = (expression: string, fn: string) => ({
  Type: 'AWS::Events::Rule',
  Properties: { ScheduleExpression: expression, State: 'ENABLED', Targets: [{ Arn: { 'Fn::GetAtt': [fn, 'Arn'] }, Id: 'Target0' }] },
});
const eventSource = (fn: string, pattern?: unknown) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: {
    EventSourceArn: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
    FunctionName: { Ref: fn },
    BatchSize: 10,
    ...(pattern === undefined ? {} : { FilterCriteria: { Filters: [{ Pattern: JSON.stringify(pattern) }] } }),
  },
});

/** A mapping that splits a failing batch, tries twice more and sends what it gives up to a queue. */
const settingAside = (source: ReturnType<typeof eventSource>, queue: string) => ({
  ...source,
  Properties: {
    ...source.Properties,
    BisectBatchOnFunctionError: true,
    MaximumRetryAttempts: 2,
    DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
  },
});
/** Lambda's defaults: a failing batch whole, again until it succeeds. */
const RETRIED_UNTIL_TAKEN = { bisectBatchOnError: false, retryAttempts: -1, onFailureQueueId: undefined };

let database: DynamoDbLocal;
let node: string;
const runtimes: BundleRuntime[] = [];
// An empty cache: the pinned Node is fetched with npm (from npm's own cache when it has it) and checked, as CI's first run does.
const cache = mkdtempSync(join(tmpdir(), 'lambda-node-'));
beforeAll(async () => {
  process.env.PLACEMENT_LAMBDA_NODE_CACHE = cache;
  node = lambdaNode();
  database = await startDynamoDbLocal({});
  process.env.PLACEMENT_DYNAMODB_ENDPOINT = database.endpoint;
});
afterAll(async () => {
  for (const runtime of runtimes) await runtime.stop();
  delete process.env.PLACEMENT_DYNAMODB_ENDPOINT;
  delete process.env.PLACEMENT_LAMBDA_NODE_CACHE;
  await database?.stop();
  rmSync(cache, { recursive: true, force: true });
});

it("fetches Lambda's pinned Node from the npm registry into its cache, once", () => {
  expect(node.startsWith(cache)).toBe(true);
  expect(execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()).toBe(`v${LAMBDA_NODE.version}`);
  expect(lambdaNode()).toBe(node);
});

it('refuses a Node whose package does not have the pinned integrity', () => {
  const pinned = LAMBDA_NODE.integrity;
  const elsewhere = mkdtempSync(join(tmpdir(), 'lambda-node-tampered-'));
  process.env.PLACEMENT_LAMBDA_NODE_CACHE = elsewhere;
  LAMBDA_NODE.integrity = 'sha512-not-what-the-registry-has';
  try {
    expect(() => lambdaNode()).toThrow(/integrity sha512-.* is not the pinned sha512-not-what-the-registry-has/);
  } finally {
    LAMBDA_NODE.integrity = pinned;
    process.env.PLACEMENT_LAMBDA_NODE_CACHE = cache;
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

async function serve(directory: string, options: Partial<Parameters<typeof startBundleRuntime>[0]> = {}): Promise<BundleRuntime> {
  const runtime = await startBundleRuntime({ assembly: directory, port: 0, node, output: () => undefined, ...options });
  runtimes.push(runtime);
  return runtime;
}

describe('a function as Lambda runs it', () => {
  it("sees Lambda's Node, its variables, its directory and no node_modules above it", async () => {
    const runtime = await serve(
      assembly(
        {
          Echo: lambda('Echo', { MemorySize: 512, Environment: { Variables: { TABLE: { Ref: 'Table' }, PLAIN: 'value' } } }),
          EchoIntegration: integration('Echo'),
          EchoRoute: route('GET /echo', 'EchoIntegration'),
        },
        {
          Echo: reply(`{
            version: process.version, cwd: process.cwd(), env: process.env, remaining: context.getRemainingTimeInMillis(),
            heapMb: (await import('node:v8')).getHeapStatistics().heap_size_limit / 2 ** 20,
            resolves: (() => { try { return (0, eval)('require')('yaml') && 'yaml'; } catch { try { return import.meta.resolve('vitest'); } catch { return null; } } })(),
          }`),
        },
      ),
    );
    const response = await client(runtime.url)('GET', '/echo');
    expect(response.status).toBe(200);
    const seen = response.body;
    expect(seen.version).toBe(`v${LAMBDA_NODE.version}`);
    expect(seen.env).toMatchObject({
      TABLE: 'Test-table',
      PLAIN: 'value',
      _HANDLER: 'index.handler',
      AWS_REGION: 'eu-west-1',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      AWS_LAMBDA_FUNCTION_NAME: 'Test-Echo',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
      LAMBDA_TASK_ROOT: seen.cwd,
      TZ: ':UTC',
      PLACEMENT_DYNAMODB_ENDPOINT: database.endpoint,
    });
    // Nothing of this machine's environment leaks in.
    expect(seen.env.HOME).toBeUndefined();
    expect(seen.env.VITEST).toBeUndefined();
    expect(seen.remaining).toBeGreaterThan(2000);
    expect(seen.remaining).toBeLessThanOrEqual(3000);
    // V8's heap sized for 512 MB as Lambda sizes it, not for this machine's 24 GB.
    expect(Math.abs(seen.heapMb - 512) / 512).toBeLessThan(0.15);
    expect(seen.resolves).toBeNull();
  });

  it('keeps an instance warm between requests and measures each cold start', async () => {
    const runtime = await serve(
      assembly(
        { Count: lambda('Count'), CountIntegration: integration('Count'), CountRoute: route('GET /count', 'CountIntegration') },
        {
          Count: `let calls = 0; const loadedAt = Date.now();
            export const handler = async (event) => {
              calls++;
              if (event.rawQueryString === 'slow') await new Promise((resolve) => setTimeout(resolve, 500));
              return { statusCode: 200, body: JSON.stringify({ calls, loadedAt }) };
            };`,
        },
      ),
    );
    const call = client(runtime.url);
    const first = (await call('GET', '/count')).body;
    const second = (await call('GET', '/count')).body;
    expect(second).toEqual({ calls: 2, loadedAt: first.loadedAt });
    // Two at once: the busy instance is not shared, a second one starts cold.
    const both = await Promise.all([call('GET', '/count?slow'), call('GET', '/count?slow')]);
    expect(both.map((response) => response.body.calls).sort()).toEqual([1, 3]);
    const starts = runtime.coldStarts();
    expect(starts).toHaveLength(2);
    expect(coldStartTable(starts)).toMatch(/^\| function \| cold starts .*\n\|---.*\n\| Test-Count \| 2 \| \d+ \| \d+ \|$/);
    for (const start of starts) {
      expect(start.function).toBe('Test-Count');
      expect(start.initMs).toBeGreaterThan(0);
      expect(start.firstInvocationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('fails as Lambda does: a bundle that imports what it lacks, a callback-style handler, a handler that throws or outlasts its timeout', async () => {
    const runtime = await serve(
      assembly(
        {
          Lacking: lambda('Lacking'),
          Callback: lambda('Callback'),
          CallbackIntegration: integration('Callback'),
          CallbackRoute: route('GET /callback', 'CallbackIntegration'),
          Throwing: lambda('Throwing'),
          Slow: lambda('Slow', { Timeout: 1 }),
          LackingIntegration: integration('Lacking'),
          ThrowingIntegration: integration('Throwing'),
          SlowIntegration: integration('Slow'),
          LackingRoute: route('GET /lacking', 'LackingIntegration'),
          ThrowingRoute: route('GET /throwing', 'ThrowingIntegration'),
          SlowRoute: route('GET /slow', 'SlowIntegration'),
        },
        {
          // The project's node_modules hold yaml; /var/task does not.
          Lacking: `import 'yaml'; export const handler = async () => ({ statusCode: 200 });`,
          // nodejs24.x calls no callback-style handler.
          Callback: `export function handler(event, context, callback) { callback(null, { statusCode: 200 }); }`,
          Throwing: `export const handler = async () => { throw new Error('boom'); };`,
          Slow: `export const handler = () => new Promise(() => undefined);`,
        },
      ),
    );
    const call = client(runtime.url);
    for (const path of ['/lacking', '/callback', '/throwing', '/slow']) {
      const response = await call('GET', path);
      expect(response.status, path).toBe(500);
      expect(response.body, path).toEqual({ message: 'Internal Server Error' });
    }
    expect((await runtime.invoke('Lacking', {})).ok).toBe(false);
    expect(await runtime.invoke('Callback', {})).toMatchObject({ ok: false, errorMessage: expect.stringMatching(/callback-style handler/) });
    expect(await runtime.invoke('Slow', {})).toMatchObject({ ok: false, phase: 'timeout', errorMessage: 'Task timed out after 1.00 seconds' });
  });
});

describe('a function URL as the template wires it', () => {
  it("hands the function the URL's event, and answers 502 when it fails", async () => {
    const runtime = await serve(
      assembly(
        {
          Router: lambda('Router'),
          Url: { Type: 'AWS::Lambda::Url', Properties: { AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': ['Router', 'Arn'] } } },
        },
        {
          Router: `export const handler = async (event) => {
            if (event.rawPath === '/fail') throw new Error('boom');
            return { statusCode: 200, body: JSON.stringify({ routeKey: event.routeKey, path: event.rawPath, query: event.rawQueryString, params: event.pathParameters ?? null, proto: event.headers['x-forwarded-proto'] }) };
          };`,
        },
      ),
    );
    const call = client(runtime.url);
    expect((await call('GET', '/resource_providers/x?in_tree=y')).body).toEqual({
      routeKey: '$default',
      path: '/resource_providers/x',
      query: 'in_tree=y',
      params: null,
      proto: 'http',
    });
    expect((await call('GET', '/fail')).status).toBe(502);
  });
});

describe('a template the runtime cannot serve as AWS would', () => {
  const stack = (resources: Record<string, unknown>) => () => readStack(assembly(resources, {}), 'Test', { tableName: 'table', accountId: '000000000000' });

  it('is refused with the reason, naming the resource', () => {
    expect(stack({ Fn: lambda('Fn', { Environment: { Variables: { X: { 'Fn::ImportValue': 'elsewhere' } } } }) })).toThrow(
      /Fn's X is \{"Fn::ImportValue":"elsewhere"\}, which the bundle runtime cannot resolve/,
    );
    expect(stack({ Integration: integration('Nowhere') })).toThrow(/Integration's IntegrationUri names no bundled function/);
    expect(stack({ Fn: lambda('Fn'), Route: route('GET /x', 'Missing') })).toThrow(/route Route has no Lambda integration/);
    expect(stack({ Fn: lambda('Fn'), I: integration('Fn'), Route: route('GET /x', 'I', true) })).toThrow(/asks for an authorizer the API lacks/);
    expect(() => readStack(assembly({}, {}), 'Other', { tableName: 'table', accountId: '0' })).toThrow(/no stack Other \(stacks: Test\)/);
    expect(stack({ Second: TABLE })).toThrow(/expected one DynamoDB table/);
    const authorizer = (properties: Record<string, unknown>) => ({
      Type: 'AWS::ApiGatewayV2::Authorizer',
      Properties: { AuthorizerType: 'REQUEST', AuthorizerPayloadFormatVersion: '2.0', AuthorizerUri: { 'Fn::GetAtt': ['Fn', 'Arn'] }, ...properties },
    });
    expect(stack({ Fn: lambda('Fn'), A: authorizer({ AuthorizerType: 'JWT' }) })).toThrow(/A is not a REQUEST authorizer of payload 2.0/);
    expect(stack({ Fn: lambda('Fn'), A: authorizer({}), B: authorizer({}) })).toThrow(/more than one authorizer/);
    expect(stack({ Fn: lambda('Fn'), Rule: rule('cron(0 12 * * ? *)', 'Fn') })).toThrow(/Rule's schedule "cron\(0 12 \* \* \? \*\)" is not a rate/);
    expect(stack({ Fn: lambda('Fn'), Rule: rule('rate(1 minute)', 'Nowhere') })).toThrow(/Rule's target names no bundled function/);
    const elsewhere = { ...eventSource('Fn'), Properties: { ...eventSource('Fn').Properties, EventSourceArn: 'arn:aws:kinesis:eu-west-1:0:stream/x' } };
    expect(stack({ Fn: lambda('Fn'), Source: elsewhere })).toThrow(/Source reads "arn:aws:kinesis:eu-west-1:0:stream\/x", not the table's change stream/);
  });

  it("reads the schedules at their rates and the change stream's consumers with their batch sizes and filters", () => {
    const { schedules, streamConsumers } = stack({
      Fn: lambda('Fn'),
      Minutely: rule('rate(1 minute)', 'Fn'),
      Hourly: rule('rate(2 hours)', 'Fn'),
      Daily: rule('rate(1 day)', 'Fn'),
      Off: { ...rule('rate(1 minute)', 'Fn'), Properties: { ...rule('rate(1 minute)', 'Fn').Properties, State: 'DISABLED' } },
      Source: eventSource('Fn', { dynamodb: { Keys: { sk: { S: ['CONSUMER'] } } } }),
      Unfiltered: { ...eventSource('Fn'), Properties: { EventSourceArn: { 'Fn::GetAtt': ['Table', 'StreamArn'] }, FunctionName: { Ref: 'Fn' } } },
      Aside: { Type: 'AWS::SQS::Queue' },
      Split: settingAside(eventSource('Fn'), 'Aside'),
    })();
    expect(schedules.map(({ logicalId, everySeconds }) => [logicalId, everySeconds])).toEqual([
      ['Minutely', 60],
      ['Hourly', 7200],
      ['Daily', 86_400],
    ]);
    expect(streamConsumers).toEqual([
      { ...RETRIED_UNTIL_TAKEN, logicalId: 'Source', functionId: 'Fn', batchSize: 10, filters: [{ dynamodb: { Keys: { sk: { S: ['CONSUMER'] } } } }] },
      { ...RETRIED_UNTIL_TAKEN, logicalId: 'Unfiltered', functionId: 'Fn', batchSize: 100, filters: [] },
      { logicalId: 'Split', functionId: 'Fn', batchSize: 10, filters: [], bisectBatchOnError: true, retryAttempts: 2, onFailureQueueId: 'Aside' },
    ]);
    expect(() => stack({ Fn: lambda('Fn'), Other: lambda('Other'), Split: settingAside(eventSource('Fn'), 'Other') })()).toThrow(
      /Split's on-failure destination is not a queue of the stack/,
    );
  });

  it('resolves what CloudFormation would: the table, a secret, a function ARN, the region and account', () => {
    const { functions } = stack({
      Secret: { Type: 'AWS::SecretsManager::Secret' },
      Other: lambda('Other'),
      Fn: lambda('Fn', {
        Environment: {
          Variables: {
            TABLE: { Ref: 'Table' },
            SECRET: { Ref: 'Secret' },
            TARGET: { 'Fn::GetAtt': ['Other', 'Arn'] },
            REGION: { Ref: 'AWS::Region' },
            ACCOUNT: { Ref: 'AWS::AccountId' },
            NUMBER: 7,
          },
        },
      }),
    })();
    expect(functions.get('Fn')!.environment).toEqual({
      TABLE: 'table',
      SECRET: 'arn:aws:secretsmanager:eu-west-1:000000000000:secret:Secret',
      TARGET: 'arn:aws:lambda:eu-west-1:000000000000:function:Other',
      REGION: 'eu-west-1',
      ACCOUNT: '000000000000',
      NUMBER: '7',
    });
  });
});

describe('answers that are not the usual', () => {
  it('passes a result without a status code as a 200 JSON body; a crash, an init failure and a broken authorizer are 500s', async () => {
    const runtime = await serve(
      assembly(
        {
          Plain: lambda('Plain'),
          Exit: lambda('Exit'),
          NotAFunction: lambda('NotAFunction'),
          Auth: lambda('Auth'),
          PlainIntegration: integration('Plain'),
          ExitIntegration: integration('Exit'),
          NotAFunctionIntegration: integration('NotAFunction'),
          PlainRoute: route('GET /plain', 'PlainIntegration'),
          ExitRoute: route('GET /exit', 'ExitIntegration'),
          NotAFunctionRoute: route('GET /not-a-function', 'NotAFunctionIntegration'),
          GuardedRoute: route('GET /guarded', 'PlainIntegration', true),
          Authorizer: {
            Type: 'AWS::ApiGatewayV2::Authorizer',
            Properties: {
              AuthorizerType: 'REQUEST',
              AuthorizerPayloadFormatVersion: '2.0',
              AuthorizerUri: { 'Fn::GetAtt': ['Auth', 'Arn'] },
              IdentitySource: [],
              AuthorizerResultTtlInSeconds: 0,
              EnableSimpleResponses: true,
            },
          },
        },
        {
          Plain: `export const handler = async () => ({ hello: 'world' });`,
          Exit: `export const handler = async () => process.exit(3);`,
          NotAFunction: `export const handler = 42;`,
          Auth: `export const handler = async (event) => {
            if (event.headers['x-auth-token'] === 'throw') throw new Error('no');
            return event.headers['x-auth-token'] === 'odd' ? { context: {} } : { isAuthorized: true, context: {} };
          };`,
        },
      ),
    );
    const call = client(runtime.url);
    const plain = await call('GET', '/plain');
    expect([plain.status, plain.headers.get('content-type'), plain.body]).toEqual([200, 'application/json', { hello: 'world' }]);
    expect((await call('GET', '/exit')).status).toBe(500);
    expect(await runtime.invoke('Exit', {})).toMatchObject({ ok: false, phase: 'crash' });
    expect((await call('GET', '/not-a-function')).status).toBe(500);
    expect(await runtime.invoke('NotAFunction', {})).toMatchObject({ ok: false, phase: 'init', errorMessage: 'index.handler is not a function' });
    // No identity source: every request reaches the authorizer, uncached.
    expect((await client(runtime.url, { token: 'fine' })('GET', '/guarded')).status).toBe(200);
    expect((await client(runtime.url, { token: 'throw' })('GET', '/guarded')).status).toBe(500);
    expect((await client(runtime.url, { token: 'odd' })('GET', '/guarded')).status).toBe(500);
  });
});

describe('what runs beside the front door, as AWS runs it', () => {
  /** A table with a stream, a schedule, and a stream consumer that records what it was given in the table, failing its first batch. */
  const background = (pattern: unknown) =>
    assembly(
      {
        Table: { ...TABLE, Properties: { ...TABLE.Properties, StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } } },
        Tick: lambda('Tick'),
        Broken: lambda('Broken'),
        Reader: lambda('Reader', { Environment: { Variables: { TABLE: { Ref: 'Table' } } } }),
        TickRule: rule('rate(1 minute)', 'Tick'),
        BrokenRule: rule('rate(1 minute)', 'Broken'),
        Source: eventSource('Reader', pattern),
      },
      {
        Tick: `let ticks = 0; export const handler = async (event) => { console.log('tick from ' + event.source); return { ticks: ++ticks, source: event.source, type: event['detail-type'] }; };`,
        Broken: `export const handler = async () => { throw new Error('broken schedule'); };`,
        Reader: `let batches = 0; const seen = [];
          export const handler = async (event) => {
            if (++batches === 1) throw new Error('first batch fails');
            seen.push(...event.Records.map((record) => record.dynamodb.Keys.pk.S));
            return { batches, seen };
          };`,
      },
      // Its table has a stream, unlike the other tests' Test-table on this file's DynamoDB Local, which a runtime keeps.
      'Background',
    );

  it('invokes each scheduled function at its interval, and tells of a failed invocation', async () => {
    let output = '';
    await serve(background({ dynamodb: { Keys: { sk: { S: ['WANTED'] } } } }), {
      scheduleEverySeconds: 1,
      output: (name, text) => (output += `[${name}] ${text}`),
    });
    // The runtime's line comes after the instance's own log of the error (its Invoke Error): wait for the runtime's, and
    // for two scheduled ticks (each instance counts its own: a count read back could come from another instance).
    const told = '[Broken] scheduled invocation failed: Error: broken schedule';
    const ticks = () => output.split('tick from aws.events').length - 1;
    const deadline = Date.now() + 60_000;
    while ((!output.includes(told) || ticks() < 2) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(output).toContain(told);
    expect(ticks()).toBeGreaterThan(1);
  });

  it("hands the stream's records its filter lets through to the consumer, a failed batch again until it takes it", async () => {
    const runtime = await serve(background({ dynamodb: { Keys: { sk: { S: ['WANTED'] } } } }));
    const dynamo = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: database.endpoint, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } }),
    );
    for (const [pk, sk] of [
      ['a', 'WANTED'],
      ['b', 'OTHER'],
      ['c', 'WANTED'],
    ]) {
      await dynamo.send(new PutCommand({ TableName: 'Background-table', Item: { pk, sk } }));
    }
    // The stream is also read every second: whichever pass meets the failed batch, a later one hands it again.
    await runtime.catchUpStream().catch(() => undefined);
    await runtime.catchUpStream();
    const reader = (await runtime.invoke('Reader', { Records: [] })) as { result: { batches: number; seen: string[] } };
    expect(reader.result.seen).toEqual(['a', 'c']);
    // The failed first batch, the same two records again, and the empty one just sent.
    expect(reader.result.batches).toBe(3);
    dynamo.destroy();
  });

  it('splits a batch its consumer fails until the record it cannot take is alone, and sends that to the on-failure queue', async () => {
    const runtime = await serve(
      assembly(
        {
          Table: { ...TABLE, Properties: { ...TABLE.Properties, StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } } },
          Picky: lambda('Picky'),
          Aside: { Type: 'AWS::SQS::Queue' },
          Source: settingAside(eventSource('Picky'), 'Aside'),
        },
        {
          Picky: `const seen = [];
            export const handler = async (event) => {
              const keys = event.Records.map((record) => record.dynamodb.Keys.pk.S);
              if (keys.length === 0) return { seen };
              if (keys.includes('poison')) throw new Error('cannot take poison');
              seen.push(...keys);
              return { seen };
            };`,
        },
        'SetAside',
      ),
    );
    const dynamo = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: database.endpoint, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } }),
    );
    for (const pk of ['a', 'b', 'poison', 'c', 'd']) await dynamo.send(new PutCommand({ TableName: 'SetAside-table', Item: { pk, sk: 'x' } }));
    dynamo.destroy();
    await runtime.catchUpStream();
    const picky = (await runtime.invoke('Picky', { Records: [] })) as { result: { seen: string[] } };
    expect(picky.result.seen).toEqual(['a', 'b', 'c', 'd']);
    const sqs = new SQSClient({ region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
    const { Messages: messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: runtime.queueUrl('Aside'), MaxNumberOfMessages: 10 }));
    sqs.destroy();
    expect(messages).toHaveLength(1);
    const setAside = JSON.parse(messages[0]!.Body!);
    expect(setAside.requestContext).toMatchObject({ condition: 'RetryAttemptsExhausted', functionArn: expect.stringMatching(/:function:Picky$/) });
    expect(setAside.DDBStreamBatchInfo).toMatchObject({ batchSize: 1, shardId: expect.stringMatching(/^shardId-/) });
    expect(setAside.DDBStreamBatchInfo.startSequenceNumber).toBe(setAside.DDBStreamBatchInfo.endSequenceNumber);
  });

  it('refuses a filter it cannot judge as it starts', async () => {
    await expect(serve(background({ dynamodb: { Keys: { sk: { S: [{ prefix: 'W' }] } } } }))).rejects.toThrow(
      /Source\.dynamodb\.Keys\.sk\.S: only value lists are supported/,
    );
    await expect(serve(background({ dynamodb: 'everything' }))).rejects.toThrow(/Source\.dynamodb: "everything" is not a filter pattern/);
  });
});

describe("CloudFormation's defaults and API Gateway's other route keys", () => {
  it('reads a function without memory, timeout or logging settings as Lambda defaults them', () => {
    const spec = readStack(assembly({ Bare: { ...lambda('Bare'), Properties: { Handler: 'index.handler', Runtime: 'nodejs24.x' } } }, {}), 'Test', {
      tableName: 'table',
      accountId: '0',
    }).functions.get('Bare')!;
    expect(spec).toMatchObject({ memoryMb: 128, timeoutSeconds: 3, environment: {}, logFormat: undefined, applicationLogLevel: undefined });
  });

  it('takes ANY and greedy routes, answers 404 itself without a $default route, and refuses an assembly of several stacks unless one is named', async () => {
    const directory = assembly(
      {
        Echo: lambda('Echo'),
        EchoIntegration: integration('Echo'),
        AnyRoute: route('ANY /any', 'EchoIntegration'),
        GreedyRoute: route('GET /files/{path+}', 'EchoIntegration'),
      },
      { Echo: reply(`{ route: event.routeKey, params: event.pathParameters ?? null }`) },
    );
    const runtime = await serve(directory);
    const call = client(runtime.url);
    expect((await call('DELETE', '/any')).body).toEqual({ route: 'ANY /any', params: null });
    expect((await call('GET', '/files/a/b/c')).body).toEqual({ route: 'GET /files/{path+}', params: { path: 'a/b/c' } });
    const missing = await call('GET', '/nowhere');
    expect([missing.status, missing.body]).toEqual([404, { message: 'Not Found' }]);
    const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8'));
    manifest.artifacts.Again = manifest.artifacts.Test;
    writeFileSync(join(directory, 'manifest.json'), JSON.stringify(manifest));
    await expect(startBundleRuntime({ assembly: directory, port: 0, node })).rejects.toThrow(/holds 2 stacks \(Test, Again\): name one/);
  });
});

describe('npm run serve:bundles', () => {
  it('reads the assembly, stack, port, variables and instance cap from its arguments', () => {
    expect(runtimeOptions(['--assembly', 'out', '--stack', 'S', '--port', '30999', '--env', 'A=1', '--env', 'B=x=y', '--max-instances', '2'])).toEqual({
      assembly: 'out',
      stack: 'S',
      port: 30999,
      overrides: { A: '1', B: 'x=y' },
      maxInstances: 2,
    });
    expect(runtimeOptions([])).toMatchObject({ assembly: 'cdk.out', stack: undefined, overrides: {}, maxInstances: 4 });
    expect(runtimeOptions(['--schedule-seconds', '5'])).toMatchObject({ scheduleEverySeconds: 5 });
    expect(runtimeOptions([])).not.toHaveProperty('scheduleEverySeconds');
    expect(() => runtimeOptions(['--env', 'nothing'])).toThrow(/--env nothing: expected NAME=VALUE/);
  });
});

describe('instances at the cap, and an init that outlasts its limit', () => {
  it('makes a request wait for a free instance once the cap is reached, and passes a string result on as its body', async () => {
    const directory = assembly(
      { Slow: lambda('Slow'), SlowIntegration: integration('Slow'), SlowRoute: route('GET /slow', 'SlowIntegration') },
      { Slow: `export const handler = async () => { await new Promise((resolve) => setTimeout(resolve, 300)); return 'done'; };` },
    );
    const runtime = await startBundleRuntime({ assembly: directory, port: 0, node, maxInstances: 1, output: () => undefined });
    runtimes.push(runtime);
    const call = client(runtime.url);
    const answers = await Promise.all([call('GET', '/slow'), call('GET', '/slow')]);
    expect(answers.map((answer) => [answer.status, answer.text])).toEqual([
      [200, 'done'],
      [200, 'done'],
    ]);
    // One instance served both, one after the other.
    expect(runtime.coldStarts()).toHaveLength(1);
  });

  it('fails an invocation whose instance exits while its module loads', async () => {
    const runtime = await serve(assembly({ Quit: lambda('Quit') }, { Quit: `process.exit(1);` }));
    expect(await runtime.invoke('Quit', {})).toMatchObject({ ok: false, phase: 'init', errorType: 'Runtime.ExitError' });
  });

  it('fails an invocation whose instance can no longer be reached, and ends that instance', async () => {
    const runtime = await serve(
      // The instance closes its channel and lives on: it neither exits nor answers (the bootstrap would exit on it).
      assembly(
        { Gone: lambda('Gone') },
        {
          Gone: `setTimeout(() => { process.removeAllListeners('disconnect'); process.disconnect(); }, 100); setInterval(() => undefined, 1000); ${reply("'here'")}`,
        },
      ),
    );
    expect(await runtime.invoke('Gone', {})).toMatchObject({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await runtime.invoke('Gone', {})).toMatchObject({ ok: false, phase: 'crash', errorType: 'Runtime.ExitError' });
    // The next invocation is a cold start of a new instance.
    expect(await runtime.invoke('Gone', {})).toMatchObject({ ok: true });
    expect(runtime.coldStarts()).toHaveLength(2);
  });

  it('fails an invocation under way when it stops, and starts no instance afterwards', async () => {
    const runtime = await serve(
      assembly({ Slow: lambda('Slow') }, { Slow: `export const handler = () => new Promise((resolve) => setTimeout(resolve, 2000));` }),
    );
    const underWay = runtime.invoke('Slow', {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    await runtime.stop();
    expect(await underWay).toMatchObject({ ok: false, phase: 'crash' });
    expect(await runtime.invoke('Slow', {})).toMatchObject({ ok: false, errorType: 'Runtime.Stopped' });
  });

  it("fails an invocation whose instance's init takes longer than Lambda's 10 s", async () => {
    const runtime = await serve(assembly({ Stuck: lambda('Stuck') }, { Stuck: `await new Promise(() => setInterval(() => undefined, 1000));` }));
    expect(await runtime.invoke('Stuck', {})).toMatchObject({ ok: false, phase: 'init', errorType: 'Runtime.InitTimeout' });
  });
});

describe('the HTTP API as the template wires it', () => {
  let runtime: BundleRuntime;
  beforeAll(async () => {
    runtime = await serve(
      assembly(
        {
          Specific: lambda('Specific'),
          Variable: lambda('Variable'),
          Fallback: lambda('Fallback'),
          Auth: lambda('Auth'),
          SpecificIntegration: integration('Specific'),
          VariableIntegration: integration('Variable'),
          FallbackIntegration: integration('Fallback'),
          SpecificRoute: route('GET /things/special', 'SpecificIntegration', true),
          VariableRoute: route('GET /things/{name}', 'VariableIntegration', true),
          DefaultRoute: route('$default', 'FallbackIntegration'),
          Authorizer: {
            Type: 'AWS::ApiGatewayV2::Authorizer',
            Properties: {
              AuthorizerType: 'REQUEST',
              AuthorizerPayloadFormatVersion: '2.0',
              AuthorizerUri: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':apigateway:', { 'Fn::GetAtt': ['Auth', 'Arn'] }, '/invocations']] },
              IdentitySource: ['$request.header.X-Auth-Token'],
              AuthorizerResultTtlInSeconds: 60,
              EnableSimpleResponses: true,
            },
          },
        },
        {
          Specific: reply(`{ route: event.routeKey, who: event.requestContext.authorizer.lambda.who }`),
          Variable: reply(`{ route: event.routeKey, name: event.pathParameters.name }`),
          Fallback: reply(`{ route: event.routeKey }`),
          Auth: `let asked = 0; export const handler = async (event) => ({ isAuthorized: event.headers['x-auth-token'] !== 'no', context: { who: event.headers['x-auth-token'], asked: ++asked } });`,
        },
      ),
    );
  });

  it('selects the most specific route, decodes path parameters and sends the rest to $default', async () => {
    const call = client(runtime.url, { token: 'alice' });
    expect((await call('GET', '/things/special')).body).toEqual({ route: 'GET /things/special', who: 'alice' });
    expect((await call('GET', '/things/a%20b')).body).toEqual({ route: 'GET /things/{name}', name: 'a b' });
    expect((await call('GET', '/elsewhere')).body).toEqual({ route: '$default' });
    expect((await call('POST', '/things/special')).body).toEqual({ route: '$default' });
  });

  it('answers for the authorizer as API Gateway does: 401 without the identity source, 403 for its no, its answer cached per token', async () => {
    const anonymous = await client(runtime.url)('GET', '/things/special');
    expect([anonymous.status, anonymous.body]).toEqual([401, { message: 'Unauthorized' }]);
    const refused = await client(runtime.url, { token: 'no' })('GET', '/things/special');
    expect([refused.status, refused.body]).toEqual([403, { message: 'Forbidden' }]);
    const bob = client(runtime.url, { token: 'bob' });
    await bob('GET', '/things/special');
    await bob('GET', '/things/x');
    // The authorizer was asked about bob once: the second request was answered from the cache.
    const asked = await runtime.invoke('Auth', { headers: { 'x-auth-token': 'carol' } });
    expect(asked).toMatchObject({ ok: true });
    const before = (asked as { result: { context: { asked: number } } }).result.context.asked;
    await bob('GET', '/things/y');
    const after = (await runtime.invoke('Auth', { headers: { 'x-auth-token': 'carol' } })) as { result: { context: { asked: number } } };
    expect(after.result.context.asked).toBe(before + 1);
  });
});

describe.each(['httpApi', 'functionUrl'])('the stack synthesized with its bundles (frontDoor=%s)', (frontDoor) => {
  let runtime: BundleRuntime;
  /** What the functions wrote (their log streams), and what the runtime told of failed scheduled invocations. */
  let output = '';
  beforeAll(async () => {
    const outdir = mkdtempSync(join(tmpdir(), `cdk-${frontDoor}-`));
    // As `cdk synth` does: the asset metadata says where each function's bundle is. A stage per door: the database is shared.
    const context = { 'aws:cdk:enable-asset-metadata': true, regions: 'us-east-1', stage: `test-${frontDoor}`, auth: 'noauth2', frontDoor };
    const app = new App({ outdir, context });
    addPlacementStacks(app);
    app.synth();
    // The schedules every second rather than every minute or more, so that each runs within the test.
    runtime = await serve(outdir, { scheduleEverySeconds: 1, output: (name, text) => (output += `[${name}] ${text}`) });
  });

  it('serves Placement from the bundles: the catalogs seeded at deploy, a provider written and read, 401 and 404 as upstream', async () => {
    expect(runtime.stack.frontDoor.kind).toBe(frontDoor);
    const admin = client(runtime.url, { token: 'admin', version: 'latest' });
    expect((await admin('GET', '/')).body.versions[0].max_version).toBe('1.39');
    expect((await admin('GET', '/resource_classes/VCPU')).status).toBe(200);
    const uuid = '6a5bb6d1-3f6a-4e36-9a9c-3f1b1c1e3a52';
    expect((await admin('POST', '/resource_providers', { uuid, name: 'bundled' })).status).toBe(200);
    expect((await admin('GET', `/resource_providers/${uuid}`)).body).toMatchObject({ uuid, name: 'bundled', generation: 0 });
    expect((await client(runtime.url)('GET', '/resource_providers')).status).toBe(401);
    expect((await admin('GET', '/nowhere')).status).toBe(404);
    expect(runtime.coldStarts().length).toBeGreaterThan(0);
  });

  it('runs what AWS runs beside the front door: the change stream into the allocation history, the schedules', async () => {
    const admin = client(runtime.url, { token: 'admin', version: 'latest' });
    const [node, consumer] = [randomUUID(), randomUUID()];
    expect((await admin('POST', '/resource_providers', { uuid: node, name: `node-${node}` })).status).toBe(200);
    expect(
      (await admin('PUT', `/resource_providers/${node}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } })).status,
    ).toBe(200);
    const claim = { allocations: { [node]: { resources: { VCPU: 2 } } }, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE' };
    expect((await admin('PUT', `/allocations/${consumer}`, claim)).status).toBe(204);
    await runtime.catchUpStream();
    const { events } = (await admin('GET', `/history/allocations/${consumer}`)).body as { events: { after: unknown }[] };
    expect(events).toMatchObject([{ after: { [node]: { VCPU: 2 } } }]);

    // Every scheduled function (the change sweeper, the capacity metrics) was invoked, and none failed.
    expect(runtime.stack.schedules.length).toBeGreaterThanOrEqual(2);
    const invoked = () => new Set(runtime.coldStarts().map((start) => start.function));
    const deadline = Date.now() + 60_000;
    const scheduled = runtime.stack.schedules.map((schedule) => `${runtime.stack.stackName}-${schedule.functionId}`.slice(0, 64));
    while (!scheduled.every((name) => invoked().has(name)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
    expect([...invoked()]).toEqual(expect.arrayContaining(scheduled));
    expect(output).not.toContain('scheduled invocation failed');
  });
});
