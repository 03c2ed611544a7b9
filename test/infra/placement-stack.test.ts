import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stage } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ROUTES, routeKey } from '../../shared/http/routes.js';
import { SECONDARY_INDEXES, TTL_ATTRIBUTE } from '../../shared/storage/table-definition.js';
import { HANDLER_FAMILIES } from '../../infra/settings.js';
import { provisionedCapacityFor } from '../../infra/table-capacity.js';
import { REQUEST_METRIC_DIMENSIONS, REQUEST_METRICS, type RequestMetric } from '../../shared/http/middleware/metrics.js';
import { SWEEPER_BACKLOG_METRIC } from '../../functions/change-sweeper.js';
import { resources, synth } from '../support/synth.js';

const { stacks, templates } = synth();
const template = templates[0]!;

/** Our functions, not the custom-resource framework CDK adds. */
const placementFunctions = (t = template) => resources(t, 'AWS::Lambda::Function').filter(([, fn]) => /^Placement /.test(fn.Properties.Description ?? ''));

describe('the CDK app', () => {
  it('has one independent stack per region in the regions context', () => {
    expect(stacks.map((stack) => stack.stackName)).toEqual(['Placement-test-us-east-1', 'Placement-test-eu-west-1']);
    expect(stacks.map((stack) => stack.region)).toEqual(['us-east-1', 'eu-west-1']);
    for (const t of templates) {
      t.resourceCountIs('AWS::DynamoDB::Table', 1);
      t.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
      // Plus the authorizer, the catalog seeder, the capacity function, the change sweeper and the history function.
      expect(placementFunctions(t)).toHaveLength(HANDLER_FAMILIES.length + 5);
    }
  });

  it('names the stacks after the stage so that several fit in one account', () => {
    expect(synth({ stage: 'alice', regions: 'us-west-2' }).stacks.map((stack) => stack.stackName)).toEqual(['Placement-alice-us-west-2']);
  });

  it('refuses malformed context', () => {
    expect(() => synth({ regions: 'us-east-1,mars' })).toThrow(/not an AWS region/);
    expect(() => synth({ memoryMb: '{"nope": 512}' })).toThrow(/unknown function nope/);
    expect(() => synth({ logRetentionDays: 8 })).toThrow(/logRetentionDays/);
    expect(() => synth({ environment: '{"HOME": "/"}' })).toThrow(/PLACEMENT_/);
  });

  it('refuses a Keystone deployment without keystoneUrl: every function would refuse to start', () => {
    expect(() => synth({ regions: 'us-east-1', keystoneUrl: undefined })).toThrow(/context keystoneUrl: required with auth=keystone/);
    expect(() => synth({ regions: 'us-east-1', keystoneUrl: undefined, auth: 'noauth2' })).not.toThrow();
  });

  it('refuses a region that lacks what the front door needs: function URLs', () => {
    expect(() => synth({ regions: 'eu-west-1,eu-central-2', frontDoor: 'functionUrl' })).toThrow(
      /context regions: eu-central-2 has no Lambda function URLs, which frontDoor=functionUrl needs/,
    );
    expect(synth({ regions: 'eu-central-2' }).stacks).toHaveLength(1);
  });
});

describe('a policy file (the policyFile context)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'policy-context-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(directory, name), text);
    return join(directory, name);
  };

  it('is read at synth time and shipped as JSON beside the code of the functions that check the policy', () => {
    const policyFile = file('policy.yaml', '# open listing\n"placement:traits:list": "@"\n');
    const {
      stacks: [stack],
      templates: [withPolicy],
    } = synth({ regions: 'us-east-1', policyFile });
    const checked = placementFunctions(withPolicy).filter(([, fn]) => / handler$/.test(fn.Properties.Description));
    expect(checked).toHaveLength(HANDLER_FAMILIES.length);
    for (const [, fn] of checked) expect(fn.Properties.Environment.Variables.PLACEMENT_POLICY_FILE).toBe('policy.json');
    for (const [, fn] of placementFunctions(withPolicy).filter(([, f]) => !/ handler$/.test(f.Properties.Description))) {
      expect(fn.Properties.Environment.Variables?.PLACEMENT_POLICY_FILE).toBeUndefined();
    }
    // What the bundles get (copied in after esbuild): the rules as JSON, staged in the assembly's directory.
    const outdir = Stage.of(stack!)!.outdir;
    const [staged] = readdirSync(outdir).filter((name) => name.endsWith('.policy.json'));
    expect(JSON.parse(readFileSync(join(outdir, staged!), 'utf8'))).toEqual({ 'placement:traits:list': '@' });
  });

  it('fails synth when Lambda could not use it, naming the file and the line', () => {
    expect(() => synth({ regions: 'us-east-1', policyFile: file('nested.yaml', 'a:\n  b: c\n') })).toThrow(/context policyFile .*nested.yaml: line 2/);
    expect(() => synth({ regions: 'us-east-1', policyFile: file('undefined-rule.yaml', '"placement:traits:list": "rule:nope"\n') })).toThrow(
      /context policyFile .*refers to undefined rule "nope"/,
    );
    expect(() => synth({ regions: 'us-east-1', policyFile: join(directory, 'absent.yaml') })).toThrow(/context policyFile .*absent.yaml/);
    expect(() => synth({ regions: 'us-east-1', environment: '{"PLACEMENT_POLICY_FILE": "/etc/policy.yaml"}' })).toThrow(/the stack sets PLACEMENT_POLICY_FILE/);
  });
});

describe('the table', () => {
  const [[, table]] = resources(template, 'AWS::DynamoDB::Table') as [[string, any]];

  it('is on-demand by default, recoverable, protected from deletion and retained', () => {
    expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.Properties.ProvisionedThroughput).toBeUndefined();
    expect(resources(template, 'AWS::ApplicationAutoScaling::ScalableTarget')).toEqual([]);
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    // SSEEnabled without a key of our own: DynamoDB's AWS-managed key (aws/dynamodb).
    expect(table.Properties.SSESpecification).toEqual({ SSEEnabled: true });
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
  });

  it('has every secondary index of the shared table definition, projecting all attributes', () => {
    expect(table.Properties.GlobalSecondaryIndexes).toHaveLength(SECONDARY_INDEXES.length);
    for (const index of SECONDARY_INDEXES) {
      expect(table.Properties.GlobalSecondaryIndexes).toContainEqual({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      });
    }
  });
});

describe.each(['httpApi', 'functionUrl'])('provisioned table capacity (-c capacity=provisioned), frontDoor=%s', (frontDoor) => {
  const context = { regions: 'us-east-1', frontDoor, capacity: 'provisioned' };
  const [provisioned] = synth(context).templates;
  const [[tableId, table]] = resources(provisioned!, 'AWS::DynamoDB::Table') as [[string, any]];
  const sized = provisionedCapacityFor({ computeNodes: 1000, instancesPerNode: 30 });
  const targets = resources(provisioned!, 'AWS::ApplicationAutoScaling::ScalableTarget');
  const policies = resources(provisioned!, 'AWS::ApplicationAutoScaling::ScalingPolicy');
  const targetOf = (dimension: string, index?: string) =>
    targets.find(
      ([, target]) =>
        target.Properties.ScalableDimension === dimension && JSON.stringify(target.Properties.ResourceId).includes(index ? `/index/${index}` : tableId),
    )?.[1].Properties;

  it('provisions the table and each index at the floor sized for a 1,000-node region', () => {
    // CDK leaves BillingMode out for CloudFormation's default, PROVISIONED.
    expect(table.Properties.BillingMode ?? 'PROVISIONED').toBe('PROVISIONED');
    expect(table.Properties.ProvisionedThroughput).toEqual({ ReadCapacityUnits: sized.table.read.min, WriteCapacityUnits: sized.table.write.min });
    for (const index of table.Properties.GlobalSecondaryIndexes)
      expect(index.ProvisionedThroughput).toEqual({ ReadCapacityUnits: sized.index.read.min, WriteCapacityUnits: sized.index.write.min });
    // Still recoverable, protected and retained.
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.DeletionPolicy).toBe('Retain');
  });

  it('scales reads and writes of the table and of each index between their floor and ceiling', () => {
    expect(targets).toHaveLength(2 * (1 + SECONDARY_INDEXES.length));
    expect(targetOf('dynamodb:table:ReadCapacityUnits')).toMatchObject({ MinCapacity: 1181, MaxCapacity: 2362 });
    expect(targetOf('dynamodb:table:WriteCapacityUnits')).toMatchObject({ MinCapacity: 26, MaxCapacity: 260 });
    for (const index of SECONDARY_INDEXES) {
      expect(targetOf('dynamodb:index:ReadCapacityUnits', index.name)).toMatchObject({ MinCapacity: sized.index.read.min, MaxCapacity: sized.index.read.max });
      expect(targetOf('dynamodb:index:WriteCapacityUnits', index.name)).toMatchObject({
        MinCapacity: sized.index.write.min,
        MaxCapacity: sized.index.write.max,
      });
    }
  });

  it('tracks 70% utilisation, or the capacityTargetPercent context', () => {
    expect(policies).toHaveLength(targets.length);
    for (const [, policy] of policies) {
      expect(policy.Properties.PolicyType).toBe('TargetTrackingScaling');
      expect(policy.Properties.TargetTrackingScalingPolicyConfiguration.TargetValue).toBe(70);
    }
    const [tight] = synth({ ...context, capacityTargetPercent: 50 }).templates;
    const tightPolicies = resources(tight!, 'AWS::ApplicationAutoScaling::ScalingPolicy');
    expect(tightPolicies.map(([, policy]) => policy.Properties.TargetTrackingScalingPolicyConfiguration.TargetValue)).toEqual(tightPolicies.map(() => 50));
    const [tightTable] = resources(tight!, 'AWS::DynamoDB::Table') as [[string, any]];
    expect(tightTable[1].Properties.ProvisionedThroughput.ReadCapacityUnits).toBe(
      provisionedCapacityFor({ computeNodes: 1000, instancesPerNode: 30 }, 50).table.read.min,
    );
  });

  it('sizes from the computeNodes and instancesPerNode contexts', () => {
    const [small] = synth({ ...context, computeNodes: 100, instancesPerNode: 20 }).templates;
    const [[, smallTable]] = resources(small!, 'AWS::DynamoDB::Table') as [[string, any]];
    expect(smallTable.Properties.ProvisionedThroughput.ReadCapacityUnits).toBe(
      provisionedCapacityFor({ computeNodes: 100, instancesPerNode: 20 }).table.read.min,
    );
  });

  it('refuses a target outside 20-90, an unknown mode, and a target without provisioned capacity', () => {
    expect(() => synth({ ...context, capacityTargetPercent: 95 })).toThrow(/context capacityTargetPercent: expected a number from 20 to 90/);
    expect(() => synth({ ...context, capacityTargetPercent: 10 })).toThrow(/capacityTargetPercent/);
    expect(() => synth({ ...context, capacity: 'reserved' })).toThrow(/context capacity: one of on-demand, provisioned, not reserved/);
    expect(() => synth({ regions: 'us-east-1', frontDoor, capacityTargetPercent: 60 })).toThrow(/capacityTargetPercent: only with capacity=provisioned/);
  });
});

describe('the functions', () => {
  it('are arm64 Node.js 24 ES module bundles', () => {
    for (const [, fn] of placementFunctions()) {
      expect(fn.Properties.Runtime).toBe('nodejs24.x');
      expect(fn.Properties.Architectures).toEqual(['arm64']);
      expect(fn.Properties.Handler).toBe('index.handler');
    }
  });

  it('are one per handler family, told the table, stage and auth strategy', () => {
    const descriptions = placementFunctions().map(([, fn]) => fn.Properties.Description);
    for (const family of HANDLER_FAMILIES) expect(descriptions).toContain(`Placement ${family} handler`);
    const allocations = placementFunctions().find(([, fn]) => fn.Properties.Description === 'Placement allocations handler')![1];
    expect(allocations.Properties.Environment.Variables).toMatchObject({
      PLACEMENT_TABLE_NAME: { Ref: expect.stringMatching(/Table/) },
      PLACEMENT_STAGE: 'test',
      PLACEMENT_AUTH_STRATEGY: 'keystone',
      PLACEMENT_KEYSTONE_URL: 'https://keystone.example.test/v3',
    });
  });

  it('are sized by default for what they compute: 256 MB for the CRUD families nova polls, more for the reshaper and the search', () => {
    const memory = (family: string) =>
      placementFunctions().find(([, fn]) => fn.Properties.Description === `Placement ${family} handler`)![1].Properties.MemorySize;
    for (const family of ['allocations', 'resource-providers', 'inventories', 'aggregates', 'traits']) expect(memory(family), family).toBe(256);
    expect(memory('reshaper')).toBe(512);
    expect(memory('allocation-candidates')).toBe(1536);
  });

  it('give every family that writes the time a change of any size takes (29 s), and the search and the history; the others 10 s', () => {
    const timeout = (family: string) =>
      placementFunctions().find(([, fn]) => fn.Properties.Description === `Placement ${family} handler`)![1].Properties.Timeout;
    const writers = ['resource-providers', 'inventories', 'aggregates', 'traits', 'resource-classes', 'allocations', 'reshaper'];
    for (const family of writers) expect(timeout(family), family).toBe(29);
    expect(timeout('allocation-candidates')).toBe(29);
    expect(timeout('history')).toBe(29);
    for (const family of HANDLER_FAMILIES.filter((name) => !writers.includes(name) && name !== 'allocation-candidates' && name !== 'history')) {
      expect(timeout(family), family).toBe(10);
    }
  });

  it('take memory, timeout and reserved concurrency from context, per function or for all', () => {
    const {
      templates: [custom],
    } = synth({
      regions: 'us-east-1',
      memoryMb: '{"default": 1024, "allocations": 2048}',
      timeoutSeconds: 20,
      reservedConcurrency: '{"allocations": 50, "traits": "none"}',
    });
    const byFamily = (family: string) =>
      placementFunctions(custom).find(([, fn]) => fn.Properties.Description === `Placement ${family} handler`)![1].Properties;
    expect(byFamily('allocations')).toMatchObject({ MemorySize: 2048, Timeout: 20, ReservedConcurrentExecutions: 50 });
    expect(byFamily('traits')).toMatchObject({ MemorySize: 1024, Timeout: 20 });
    // The finalize of a new storage format waits out the longest request: every handler says how long that is.
    const longest = (template?: Parameters<typeof placementFunctions>[0]) =>
      new Set(
        placementFunctions(template)
          .filter(([, fn]) => / handler$/.test(fn.Properties.Description))
          .map(([, fn]) => fn.Properties.Environment.Variables.PLACEMENT_LONGEST_REQUEST_SECONDS),
      );
    expect(longest(custom)).toEqual(new Set(['20']));
    expect(longest()).toEqual(new Set(['29']));
    expect(byFamily('traits').ReservedConcurrentExecutions).toBeUndefined();
    // Nothing reserved unless asked: a new account's low quota would fail the first deploy.
    expect(byFamily('usages').ReservedConcurrentExecutions).toBeUndefined();
  });

  it("write JSON logs without Lambda's per-request START, END and REPORT lines", () => {
    for (const [, fn] of placementFunctions()) {
      expect(fn.Properties.LoggingConfig).toEqual({
        LogFormat: 'JSON',
        SystemLogLevel: 'WARN',
        // Our metric records carry no level, which Lambda files as INFO.
        ApplicationLogLevel: 'INFO',
        LogGroup: { Ref: expect.stringMatching(/Logs/) },
      });
    }
    const {
      templates: [verbose],
    } = synth({ regions: 'us-east-1', systemLogLevel: 'INFO' });
    for (const [, fn] of placementFunctions(verbose)) expect(fn.Properties.LoggingConfig.SystemLogLevel).toBe('INFO');
  });
});

describe('brakes on abusive load', () => {
  const [[, stage]] = resources(template, 'AWS::ApiGatewayV2::Stage');
  const byDescription = (t: typeof template, description: string) =>
    placementFunctions(t).find(([, fn]) => fn.Properties.Description === description)![1].Properties;

  it('throttle the one stage at twice the steady rate of a 1,000-node region, or as the context says', () => {
    expect(stage!.Properties).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 1100, ThrottlingBurstLimit: 2200 },
    });
    const {
      templates: [small],
    } = synth({ regions: 'us-east-1', computeNodes: 100, throttleBurstLimit: 500 });
    const [[, smallStage]] = resources(small!, 'AWS::ApiGatewayV2::Stage');
    expect(smallStage!.Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 150, ThrottlingBurstLimit: 500 });
    expect(() => synth({ regions: 'us-east-1', throttleRateLimit: 0 })).toThrow(/throttleRateLimit/);
  });

  it('reserve no concurrency by default, and with reservedConcurrency=sized each function its share of the load', () => {
    for (const [, fn] of placementFunctions(template)) expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
    const {
      templates: [sized],
    } = synth({ regions: 'us-east-1', reservedConcurrency: 'sized' });
    expect(byDescription(sized!, 'Placement allocations handler').ReservedConcurrentExecutions).toBe(54);
    for (const family of HANDLER_FAMILIES.filter((name) => name !== 'allocations')) {
      expect(byDescription(sized!, `Placement ${family} handler`).ReservedConcurrentExecutions, family).toBe(10);
    }
    expect(byDescription(sized!, 'Placement X-Auth-Token authorizer').ReservedConcurrentExecutions).toBe(10);
  });

  it('write no access log unless asked', () => {
    expect(stage!.Properties.AccessLogSettings).toBeUndefined();
    expect(() => synth({ accessLog: 'maybe' })).toThrow(/context accessLog: expected true or false/);
  });

  it("with -c accessLog=true, log every request as one JSON line, kept as long as the functions' logs", () => {
    const {
      templates: [logged],
    } = synth({ accessLog: 'true' });
    const [[, loggedStage]] = resources(logged!, 'AWS::ApiGatewayV2::Stage');
    const logGroupId = loggedStage!.Properties.AccessLogSettings.DestinationArn['Fn::GetAtt'][0];
    expect(logged!.toJSON().Resources[logGroupId]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } });
    const format = JSON.parse(loggedStage!.Properties.AccessLogSettings.Format);
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      route: '$context.routeKey',
      status: '$context.status',
      authError: '$context.authorizer.error',
    });
  });

  it('let the authorizer know whether API Gateway caches its answers', () => {
    const authorizer = byDescription(template, 'Placement X-Auth-Token authorizer');
    expect(authorizer.Environment.Variables.PLACEMENT_AUTHORIZER_CACHE_SECONDS).toBe('240');
    const {
      templates: [uncached],
    } = synth({ regions: 'us-east-1', authorizerCacheTtlSeconds: 0 });
    expect(byDescription(uncached!, 'Placement X-Auth-Token authorizer').Environment.Variables.PLACEMENT_AUTHORIZER_CACHE_SECONDS).toBe('0');
  });

  it('allow noauth2 in Lambda only through the auth=noauth2 context', () => {
    for (const [, fn] of placementFunctions()) expect(fn.Properties.Environment.Variables.PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA).toBeUndefined();
    const {
      templates: [open],
    } = synth({ regions: 'us-east-1', auth: 'noauth2' });
    // Every function that serves requests; the seeder and the capacity function authenticate no one.
    for (const [, fn] of placementFunctions(open).filter(([, f]) => /handler|authorizer/.test(f.Properties.Description))) {
      expect(fn.Properties.Environment.Variables).toMatchObject({ PLACEMENT_AUTH_STRATEGY: 'noauth2', PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA: 'true' });
    }
    expect(() => synth({ regions: 'us-east-1', environment: '{"PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA": "true"}' })).toThrow(/the stack sets/);
    expect(() => synth({ regions: 'us-east-1', environment: '{"PLACEMENT_AUTH_STRATEGY": "noauth2"}' })).toThrow(/the stack sets/);
    // noauth2 reads x-roles and the like besides the token: a cache keyed on the token alone would hand one caller's roles to another.
    const authorizer = placementFunctions(open).find(([, fn]) => /authorizer/.test(fn.Properties.Description))!;
    expect(authorizer[1].Properties.Environment.Variables.PLACEMENT_AUTHORIZER_CACHE_SECONDS).toBe('0');
  });
});

describe('the HTTP API', () => {
  const routes = resources(template, 'AWS::ApiGatewayV2::Route').map(([, route]) => route.Properties);
  const integrations = Object.fromEntries(resources(template, 'AWS::ApiGatewayV2::Integration'));
  const functions = Object.fromEntries(placementFunctions());
  /** The handler family a route's integration invokes, from the function's description. */
  const familyOf = (route: Record<string, any>) => {
    const integrationId = route.Target['Fn::Join'][1][1].Ref;
    const functionId = integrations[integrationId]!.Properties.IntegrationUri['Fn::GetAtt'][0];
    return /^Placement (\S+) handler$/.exec(functions[functionId]!.Properties.Description)![1];
  };

  it('has exactly the route table plus $default', () => {
    expect(routes.map((route) => route.RouteKey).sort()).toEqual([...ROUTES.map(routeKey), '$default'].sort());
  });

  it('sends each route to its family and unknown paths to the root function', () => {
    for (const route of ROUTES) {
      expect(familyOf(routes.find((candidate) => candidate.RouteKey === routeKey(route))!), routeKey(route)).toBe(route.handler);
    }
    expect(familyOf(routes.find((route) => route.RouteKey === '$default')!)).toBe('root');
  });

  it('authorizes every route but the public version document', () => {
    for (const route of routes) {
      if (route.RouteKey === 'GET /') expect(route.AuthorizationType ?? 'NONE').toBe('NONE');
      else expect(route.AuthorizationType, route.RouteKey).toBe('CUSTOM');
    }
  });

  it('has a request authorizer keyed and cached on the token', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'REQUEST',
      IdentitySource: ['$request.header.X-Auth-Token'],
      AuthorizerResultTtlInSeconds: 240,
      EnableSimpleResponses: true,
      AuthorizerPayloadFormatVersion: '2.0',
    });
    const {
      templates: [uncached],
    } = synth({ regions: 'us-east-1', authorizerCacheTtlSeconds: 0 });
    const [[, authorizer]] = resources(uncached!, 'AWS::ApiGatewayV2::Authorizer');
    expect(authorizer!.Properties.AuthorizerResultTtlInSeconds).toBe(0);
    expect(authorizer!.Properties.IdentitySource ?? []).toEqual([]);
  });

  it('lets CORS preflights through unauthenticated when CORS is configured', () => {
    const {
      templates: [cors],
    } = synth({ regions: 'us-east-1', environment: '{"PLACEMENT_CORS_ALLOWED_ORIGIN": "https://horizon.example.test"}' });
    const preflights = resources(cors!, 'AWS::ApiGatewayV2::Route').filter(([, route]) => route.Properties.RouteKey.startsWith('OPTIONS'));
    expect(preflights.map(([, route]) => [route.Properties.RouteKey, route.Properties.AuthorizationType ?? 'NONE']).sort()).toEqual([
      ['OPTIONS /', 'NONE'],
      ['OPTIONS /{proxy+}', 'NONE'],
    ]);
  });
});

describe('the authorizer', () => {
  const authorizer = placementFunctions().find(([, fn]) => fn.Properties.Description.includes('authorizer'))!;

  it('gets the Keystone credentials secret by ARN, never as values, and may read it', () => {
    const [[secretId, secret]] = resources(template, 'AWS::SecretsManager::Secret') as [[string, any]];
    expect(secret.Properties.GenerateSecretString).toBeDefined();
    expect(secret.Properties.SecretString).toBeUndefined();
    expect(authorizer[1].Properties.Environment.Variables.PLACEMENT_KEYSTONE_SECRET_ARN).toEqual({ Ref: secretId });
    expect(JSON.stringify(template.toJSON())).not.toMatch(/PLACEMENT_KEYSTONE_PASSWORD/);
    const role = authorizer[1].Properties.Role['Fn::GetAtt'][0];
    const policies = resources(template, 'AWS::IAM::Policy').filter(([, policy]) => policy.Properties.Roles.some((r: any) => r.Ref === role));
    expect(JSON.stringify(policies)).toContain('secretsmanager:GetSecretValue');
  });

  it('uses an existing secret when the context names one', () => {
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:placement-keystone-AbCdEf';
    const {
      templates: [existing],
    } = synth({ regions: 'us-east-1', keystoneSecret: arn });
    existing!.resourceCountIs('AWS::SecretsManager::Secret', 0);
    const fn = placementFunctions(existing).find(([, f]) => f.Properties.Description.includes('authorizer'))!;
    expect(fn[1].Properties.Environment.Variables.PLACEMENT_KEYSTONE_SECRET_ARN).toBe(arn);
  });
});

describe('observability and operations', () => {
  it('alarms on the 5xx rate, p99 latency and every function throttling', () => {
    const alarms = resources(template, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    expect(alarms.some((alarm) => alarm.Metrics?.some((metric: any) => /100 \* errors \/ requests/.test(metric.Expression ?? '')))).toBe(true);
    expect(alarms.some((alarm) => alarm.ExtendedStatistic === 'p99' && alarm.MetricName === 'Latency')).toBe(true);
    expect(alarms.filter((alarm) => alarm.MetricName === 'Throttles')).toHaveLength(HANDLER_FAMILIES.length + 1);
    for (const alarm of alarms) expect(alarm.AlarmActions).toHaveLength(1);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  it("graphs and alarms on metrics that exist: the handlers' and the sweeper's records, API Gateway's, Lambda's, DynamoDB's and SQS's", () => {
    const [[, dashboard]] = resources(template, 'AWS::CloudWatch::Dashboard');
    const body = dashboard!.Properties.DashboardBody;
    const text: string = typeof body === 'string' ? body : body['Fn::Join'][1].filter((part: unknown) => typeof part === 'string').join('');
    // The handlers' aggregates, searched by their dimensions across routes.
    const searches = [...text.matchAll(/SEARCH\('\{Placement,([^}]+)\} Stage=\\"[^\\]+\\" MetricName=\\"([^\\]+)\\"/g)].filter(
      (match) => match[1] === REQUEST_METRIC_DIMENSIONS.join(','),
    );
    const placementMetrics = new Set(searches.map((match) => match[2]));
    expect(placementMetrics).toEqual(new Set(['Claims', 'Conflicts', 'ServerErrors', 'ReadCapacityUnits', 'WriteCapacityUnits', 'Latency']));
    for (const name of placementMetrics) expect(REQUEST_METRICS).toContain(name as RequestMetric);
    const namespaces = new Set([...text.matchAll(/\["(AWS\/[^"]+)"/g)].map((match) => match[1]));
    expect(namespaces).toEqual(new Set(['AWS/ApiGateway', 'AWS/DynamoDB', 'AWS/Lambda']));
    for (const [, alarm] of resources(template, 'AWS::CloudWatch::Alarm')) {
      const metrics: { Namespace: string; MetricName: string }[] = alarm.Properties.Namespace
        ? [alarm.Properties]
        : alarm.Properties.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric);
      for (const { Namespace, MetricName } of metrics) {
        if (Namespace === 'Placement') expect(MetricName).toBe(SWEEPER_BACKLOG_METRIC);
        else if (Namespace === 'AWS/SQS') expect(MetricName).toBe('ApproximateNumberOfMessagesVisible');
        else expect(['AWS/ApiGateway', 'AWS/Lambda', 'AWS/DynamoDB']).toContain(Namespace);
      }
    }
  });

  it('seeds the standard catalogs at deploy time', () => {
    template.hasResourceProperties('AWS::CloudFormation::CustomResource', { catalogs: Match.stringLikeRegexp('^[0-9a-f]{16}$') });
  });
});

describe('the function-URL front door (-c frontDoor=functionUrl)', () => {
  const {
    templates: [door],
  } = synth({ regions: 'us-east-1', frontDoor: 'functionUrl', reservedConcurrency: 'sized' });
  const functions = placementFunctions(door);
  const [routerId, router] = functions.find(([, fn]) => /router/.test(fn.Properties.Description))!;

  it('replaces the HTTP API, its authorizer and the per-family functions by one router function', () => {
    for (const type of ['AWS::ApiGatewayV2::Api', 'AWS::ApiGatewayV2::Stage', 'AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::Authorizer'])
      door!.resourceCountIs(type, 0);
    expect(
      functions
        .map(([, fn]) => fn.Properties.Description)
        .filter((description) => !/capacity metrics/.test(description))
        .sort(),
    ).toEqual([
      'Placement allocation history: the change stream of consumers into allocation events',
      'Placement catalog seeder: writes the standard resource classes and traits into the table',
      'Placement change sweeper: finishes the multi-step changes of writers that died',
      'Placement router: every route, behind the function URL',
    ]);
    template.resourceCountIs('AWS::Lambda::Url', 0);
  });

  it('is a public URL on the router; the handlers authenticate with Keystone themselves', () => {
    const [[, url]] = resources(door!, 'AWS::Lambda::Url');
    expect(url!.Properties).toMatchObject({ AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': [routerId, 'Arn'] } });
    const permissions = resources(door!, 'AWS::Lambda::Permission').map(([, permission]) => permission.Properties);
    expect(permissions).toContainEqual(expect.objectContaining({ Action: 'lambda:InvokeFunctionUrl', Principal: '*', FunctionUrlAuthType: 'NONE' }));
    expect(permissions).toContainEqual(expect.objectContaining({ Action: 'lambda:InvokeFunction', Principal: '*', InvokedViaFunctionUrl: true }));
    const [[secretId]] = resources(door!, 'AWS::SecretsManager::Secret');
    expect(router.Properties.Environment.Variables).toMatchObject({
      PLACEMENT_TABLE_NAME: { Ref: expect.stringMatching(/Table/) },
      PLACEMENT_AUTH_STRATEGY: 'keystone',
      PLACEMENT_KEYSTONE_URL: 'https://keystone.example.test/v3',
      PLACEMENT_KEYSTONE_SECRET_ARN: { Ref: secretId },
      // The revocation bound of the default front door (240 s + 60 s), keystonemiddleware's default.
      PLACEMENT_KEYSTONE_CACHE_SECONDS: '300',
    });
    const role = router.Properties.Role['Fn::GetAtt'][0];
    const policies = JSON.stringify(resources(door!, 'AWS::IAM::Policy').filter(([, policy]) => policy.Properties.Roles.some((r: any) => r.Ref === role)));
    expect(policies).toContain('secretsmanager:GetSecretValue');
    expect(policies).toContain('dynamodb:UpdateItem');
  });

  it("brakes with the router's reserved concurrency: the families' together", () => {
    expect(router.Properties).toMatchObject({ ReservedConcurrentExecutions: 54 + 10 * (HANDLER_FAMILIES.length - 1), MemorySize: 512, Timeout: 29 });
    expect(router.Properties.LoggingConfig).toMatchObject({ LogFormat: 'JSON', SystemLogLevel: 'WARN' });
  });

  it("alarms on the URL's 5xx rate, the router's p99 duration and its throttles", () => {
    const alarms = resources(door!, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    const rate = alarms.find((alarm) => alarm.Metrics?.some((metric: any) => /100 \* errors \/ requests/.test(metric.Expression ?? '')))!;
    const used = rate.Metrics.filter((metric: any) => metric.MetricStat)
      .map((metric: any) => metric.MetricStat.Metric.MetricName)
      .sort();
    expect(used).toEqual(['Url5xxCount', 'UrlRequestCount']);
    expect(alarms.find((alarm) => alarm.ExtendedStatistic === 'p99')).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Duration' });
    expect(alarms.filter((alarm) => alarm.MetricName === 'Throttles')).toHaveLength(1);
  });

  it('outputs the endpoint without the trailing slash', () => {
    expect(JSON.stringify(door!.toJSON().Outputs.ApiUrl.Value)).toContain('https://');
    expect(() => synth({ regions: 'us-east-1', frontDoor: 'alb' })).toThrow(/frontDoor: one of httpApi, functionUrl/);
  });
});

describe('the allocation history', () => {
  it("reads the table's change stream (new and old images), consumer items only; a failing batch split, and what it cannot take set aside", () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
    const [queueId] = Object.keys(template.findResources('AWS::SQS::Queue', { Properties: { MessageRetentionPeriod: 14 * 86_400 } }));
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ dynamodb: { Keys: { sk: { S: ['CONSUMER'] } } } }) }] },
    });
    template.hasOutput('HistorySetAsideQueueUrl', { Value: { Ref: queueId } });
  });
});
