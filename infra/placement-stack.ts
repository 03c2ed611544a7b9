/**
 * One complete Placement deployment in one region: table, functions, HTTP
 * API with its authorizer (or, with `frontDoor=functionUrl`, one router
 * function behind a function URL), alarms and dashboard. Regions are independent
 * (each has its own table), as OpenStack regions each have their own
 * Placement.
 */
import { createHash } from 'node:crypto';
import { Annotations, CfnOutput, CustomResource, Duration, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Provider } from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS } from '../shared/domain/standard-catalog.js';
import { AUTHORIZER_ENTRY, CATALOG_SEEDER_ENTRY } from './bundling.js';
import { PlacementApi } from './constructs/api.js';
import { CapacityMetrics } from './constructs/capacity.js';
import { ChangeSweeper } from './constructs/change-sweeper.js';
import { AllocationHistory } from './constructs/allocation-history.js';
import { FunctionUrlFrontDoor } from './constructs/function-url.js';
import { functionUrlMetrics, httpApiMetrics, type FrontDoorMetrics } from './constructs/front-door-metrics.js';
import { executionRole, HandlerFunctions, PlacementFunction } from './constructs/functions.js';
import { Observability } from './constructs/observability.js';
import { grantTableAccess, PlacementTable } from './constructs/table.js';
import type { PlacementSettings, SystemLogLevel } from './settings.js';

export interface PlacementStackProps extends StackProps {
  settings: PlacementSettings;
}

/** What the rest of the stack needs of the front door: its metrics, the functions to watch, the endpoint. */
interface FrontDoor {
  metrics: FrontDoorMetrics;
  functions: Record<string, IFunction>;
  endpoint: string;
}

type Logging = { logRetentionDays: number; systemLogLevel: SystemLogLevel };

/** The operator's policy as the handlers get it: a JSON file in the bundle and the variable naming it (relative to /var/task, Lambda's working directory). */
type PolicyFiles = { environment: Record<string, string>; files?: Record<string, string> };
const POLICY_FILE_NAME = 'policy.json';

/** The secret named by context (an ARN or a name), or a new one for the operator to fill in. */
function keystoneSecret(scope: Construct, reference: string | undefined): ISecret {
  if (reference === undefined) {
    const secret = new Secret(scope, 'KeystoneCredentials', {
      description: 'Placement service user credentials for Keystone token validation',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ username: 'placement', userDomainName: 'Default', projectName: 'service', projectDomainName: 'Default' }),
        generateStringKey: 'password',
        excludePunctuation: true,
      },
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        "The secret is the Keystone service user's password, which Keystone owns: rotating it means changing the user in Keystone, which a " +
        'Secrets Manager rotation function could only do holding Keystone admin credentials. The operator rotates it in Keystone, then with ' +
        'put-secret-value; the functions read the secret at each Keystone login, so no redeploy is needed (docs/operators/deploy.md)',
    });
    return secret;
  }
  return reference.startsWith('arn:')
    ? Secret.fromSecretCompleteArn(scope, 'KeystoneCredentials', reference)
    : Secret.fromSecretNameV2(scope, 'KeystoneCredentials', reference);
}

export class PlacementStack extends Stack {
  constructor(
    scope: Construct,
    id: string,
    private readonly props: PlacementStackProps,
  ) {
    super(scope, id, props);
    const { settings } = props;
    const name = `placement-${settings.stage}-${this.region}`;
    Tags.of(this).add('service', 'placement');
    Tags.of(this).add('stage', settings.stage);

    const { table } = new PlacementTable(this, 'Storage', settings.tableCapacity);

    // Every function gets the strategy and Keystone's URL (401s point clients at it); only what validates tokens reads the secret.
    const auth: Record<string, string> = { PLACEMENT_AUTH_STRATEGY: settings.auth.strategy };
    let secret: ISecret | undefined;
    if (settings.auth.strategy === 'keystone') {
      secret = keystoneSecret(this, settings.auth.keystoneSecret);
      auth.PLACEMENT_KEYSTONE_SECRET_ARN = secret.secretArn;
      // readSettings refuses a keystone deployment without it.
      if (settings.auth.keystoneUrl) auth.PLACEMENT_KEYSTONE_URL = settings.auth.keystoneUrl;
    } else {
      Annotations.of(this).addWarningV2(
        'placement:noauth2',
        'auth=noauth2: anyone who can reach the API can act as admin. For throw-away test deployments only.',
      );
      // Without it the functions refuse to start with noauth2 (shared/auth/authenticate.ts); only this context sets it.
      auth.PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA = 'true';
    }
    // The longest a request runs: the build of a new storage format's entries waits it out (shared/storage/entries/build.ts).
    const longestRequest = Math.max(...Object.values(settings.functions).map((settings) => settings.timeoutSeconds));
    const common = { ...settings.environment, ...auth, PLACEMENT_STAGE: settings.stage, PLACEMENT_LONGEST_REQUEST_SECONDS: String(longestRequest) };
    // The policy file, read at synth, ships to the functions that check the policy as JSON: they carry no YAML parser.
    const policy: PolicyFiles =
      settings.policyRules === undefined
        ? { environment: {} }
        : { environment: { PLACEMENT_POLICY_FILE: POLICY_FILE_NAME }, files: { [POLICY_FILE_NAME]: JSON.stringify(settings.policyRules) } };
    const logging = { logRetentionDays: settings.logRetentionDays, systemLogLevel: settings.systemLogLevel };
    const door: FrontDoor =
      settings.frontDoor === 'functionUrl'
        ? this.functionUrlFrontDoor(table, common, policy, secret, logging)
        : this.httpApiFrontDoor(name, table, common, policy, secret, logging);

    const { email: alarmEmail, ...thresholds } = settings.alarms;
    const observability = new Observability(this, 'Observability', {
      name,
      stage: settings.stage,
      frontDoor: door.metrics,
      table,
      tableCapacity: settings.tableCapacity,
      functions: door.functions,
      thresholds,
      alarmEmail,
    });

    // What works in the background, each watched (docs/operators/observability.md, "Runbook").
    observability.watchBackgroundFunction('catalog-seeder', this.seedStandardCatalogs(table, settings));
    observability.watchBackgroundFunction('change-sweeper', new ChangeSweeper(this, 'ChangeSweeper', { table, stage: settings.stage, ...logging }).function);
    const history = new AllocationHistory(this, 'AllocationHistory', {
      table,
      stage: settings.stage,
      retentionDays: settings.historyRetentionDays,
      ...logging,
    });
    observability.watchHistory(history.function, history.setAsideQueue);
    new CfnOutput(this, 'HistorySetAsideQueueUrl', {
      value: history.setAsideQueue.queueUrl,
      description: 'Where the allocation history sets aside change stream records it could not take: placement-admin history-set-aside --queue-url',
    });
    if (settings.capacityMetrics.enabled) {
      const capacity = new CapacityMetrics(this, 'Capacity', {
        table,
        stage: settings.stage,
        everyMinutes: settings.capacityMetrics.everyMinutes,
        dashboard: observability.dashboard,
        ...logging,
      });
      observability.watchBackgroundFunction('capacity-metrics', capacity.function, Duration.minutes(settings.capacityMetrics.everyMinutes));
    }

    new CfnOutput(this, 'ApiUrl', { value: door.endpoint, description: 'Placement endpoint: [placement] endpoint_override in nova.conf' });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    if (secret) new CfnOutput(this, 'KeystoneSecretArn', { value: secret.secretArn, description: 'Service credentials the service logs in to Keystone with' });
  }

  /** The default front door: API Gateway's HTTP API, one function per handler family, the authorizer (the only reader of the secret). */
  private httpApiFrontDoor(
    name: string,
    table: ITable,
    common: Record<string, string>,
    policy: PolicyFiles,
    secret: ISecret | undefined,
    logging: Logging,
  ): FrontDoor {
    const { settings } = this.props;
    const handlers = new HandlerFunctions(this, 'Handlers', {
      table,
      settings: settings.functions,
      environment: { ...common, ...policy.environment, PLACEMENT_TABLE_NAME: table.tableName },
      files: policy.files,
      ...logging,
    });
    // The authorizer never reads the table; it must know whether API Gateway caches its answers (functions/authorizer.ts).
    const authorizer = new PlacementFunction(this, 'Authorizer', {
      entry: AUTHORIZER_ENTRY,
      description: 'Placement X-Auth-Token authorizer',
      settings: settings.functions.authorizer,
      environment: { ...common, PLACEMENT_AUTHORIZER_CACHE_SECONDS: String(settings.auth.cacheTtlSeconds) },
      ...logging,
    });
    secret?.grantRead(authorizer);

    const api = new PlacementApi(this, 'Api', {
      apiName: name,
      handlers: handlers.byFamily,
      authorizer,
      authorizerCacheTtlSeconds: settings.auth.cacheTtlSeconds,
      corsPreflight: Boolean(settings.environment.PLACEMENT_CORS_ALLOWED_ORIGIN),
      throttle: settings.throttle,
      logRetentionDays: settings.logRetentionDays,
      accessLog: settings.accessLog,
    });
    return { metrics: httpApiMetrics(api.httpApi), functions: { ...handlers.byFamily, authorizer }, endpoint: api.httpApi.apiEndpoint };
  }

  /** `-c frontDoor=functionUrl`: one router function behind a function URL; the handlers validate tokens themselves. */
  private functionUrlFrontDoor(table: ITable, common: Record<string, string>, policy: PolicyFiles, secret: ISecret | undefined, logging: Logging): FrontDoor {
    const door = new FunctionUrlFrontDoor(this, 'FunctionUrl', {
      table,
      settings: this.props.settings.functions.router,
      environment: { ...common, ...policy.environment, PLACEMENT_TABLE_NAME: table.tableName },
      files: policy.files,
      secret,
      ...logging,
    });
    return { metrics: functionUrlMetrics(door.router), functions: { router: door.router }, endpoint: door.endpoint };
  }

  /**
   * A new table has no standard resource classes or traits; a custom resource
   * writes them at deploy time, again whenever the shipped catalogs change.
   */
  private seedStandardCatalogs(table: PlacementTable['table'], settings: PlacementSettings): PlacementFunction {
    const seeder = new PlacementFunction(this, 'CatalogSeeder', {
      entry: CATALOG_SEEDER_ENTRY,
      description: 'Placement catalog seeder: writes the standard resource classes and traits into the table',
      settings: { memoryMb: 512, timeoutSeconds: 300 },
      environment: { PLACEMENT_TABLE_NAME: table.tableName },
      logRetentionDays: settings.logRetentionDays,
      systemLogLevel: settings.systemLogLevel,
    });
    grantTableAccess(table, seeder, 'readWrite');
    const providerLogs = new LogGroup(this, 'CatalogSeederProviderLogs', { retention: settings.logRetentionDays as RetentionDays });
    const providerRole = executionRole(this, 'CatalogSeederProviderRole', providerLogs);
    const provider = new Provider(this, 'CatalogSeederProvider', { onEventHandler: seeder, logGroup: providerLogs, frameworkOnEventRole: providerRole });
    Validations.of(providerRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::<CatalogSeeder6BBB85D2.Arn>:*]',
      reason:
        "CDK's custom-resource framework is granted lambda:InvokeFunction on the seeder function and its qualified ARNs (versions); it is the only function it may invoke",
    });
    const catalogs = createHash('sha256')
      .update(JSON.stringify([STANDARD_RESOURCE_CLASSES, STANDARD_TRAITS]))
      .digest('hex')
      .slice(0, 16);
    new CustomResource(this, 'StandardCatalogs', { serviceToken: provider.serviceToken, properties: { catalogs } });
    return seeder;
  }
}
