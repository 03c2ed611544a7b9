/**
 * The Lambda functions: one per handler family of the route table (a family
 * shares one warm pool, so fewer functions means fewer cold starts than one
 * per route), all arm64 on Node.js 22, bundled locally by esbuild as ES
 * modules with the AWS SDK inside (infra/bundling.ts).
 */
import { Duration, Stage } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel as LambdaSystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Role, ServicePrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { HandlerName } from '../../shared/http/routes.js';
import { BUNDLING, DEPS_LOCK_FILE, PROJECT_ROOT, bundlingWithFiles, entryPath, handlerEntry } from '../bundling.js';
import { HANDLER_FAMILIES, type FunctionSettings, type SystemLogLevel } from '../settings.js';
import { grantTableAccess } from './table.js';
import { CHECKOUT_RELEASE } from '../../shared/release.js';

/** What each family does with the table; typed by family so a new one cannot be forgotten. */
const TABLE_ACCESS: Record<HandlerName, 'none' | 'read' | 'readWrite'> = {
  root: 'none',
  'resource-providers': 'readWrite',
  inventories: 'readWrite',
  aggregates: 'readWrite',
  traits: 'readWrite',
  'resource-classes': 'readWrite',
  allocations: 'readWrite',
  usages: 'read',
  'allocation-candidates': 'read',
  reshaper: 'readWrite',
  upgrade: 'readWrite',
  history: 'read',
  health: 'read',
};

export interface PlacementFunctionProps {
  /** Source of the module exporting `handler`, relative to the project root. */
  entry: string;
  description: string;
  settings: FunctionSettings;
  environment: Record<string, string>;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
  /** Files shipped beside the code (name to content), read relative to the function's directory. */
  files?: Record<string, string>;
}

/**
 * A function's execution role: it may write to its own log group and
 * nothing else until granted more (the table, the secret). Lambda's
 * AWSLambdaBasicExecutionRole would let it create and write any log group
 * of the account.
 */
export function executionRole(scope: Construct, id: string, logGroup: ILogGroup): IRole {
  const role = new Role(scope, id, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  logGroup.grantWrite(role);
  return role;
}

/**
 * A NodejsFunction with the project's runtime, architecture, bundling, an
 * explicit, expiring log group, and Lambda's JSON log format. With it the
 * system log level applies: at WARN Lambda writes no START, END and REPORT
 * lines, which cost about as many bytes per request as our own record. The
 * application level stays INFO because our records (written straight to
 * stdout, without a "level") count as INFO; what the handlers log is set by
 * PLACEMENT_LOG_LEVEL.
 */
export class PlacementFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: PlacementFunctionProps) {
    if (!Object.values(RetentionDays).includes(props.logRetentionDays)) {
      throw new Error(`logRetentionDays ${props.logRetentionDays} is not one CloudWatch Logs offers (1, 3, 5, 7, 14, 30, 60, 90, ...)`);
    }
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: props.logRetentionDays as RetentionDays });
    super(scope, id, {
      role: executionRole(scope, `${id}Role`, logGroup),
      entry: entryPath(props.entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: DEPS_LOCK_FILE,
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.settings.memoryMb,
      timeout: Duration.seconds(props.settings.timeoutSeconds),
      reservedConcurrentExecutions: props.settings.reservedConcurrency,
      // Every function knows the release it runs (its log records, GET /upgrade, placement-admin upgrade check).
      environment: { ...props.environment, PLACEMENT_RELEASE: CHECKOUT_RELEASE },
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      systemLogLevelV2: LambdaSystemLogLevel[props.systemLogLevel],
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      bundling: props.files ? bundlingWithFiles(props.files, Stage.of(scope)!.outdir) : BUNDLING,
    });
  }
}

export interface HandlerFunctionsProps {
  table: ITable;
  settings: Record<HandlerName, FunctionSettings>;
  environment: Record<string, string>;
  files?: Record<string, string>;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
}

/** The Placement handlers, one per family, with the table access their family needs. */
export class HandlerFunctions extends Construct {
  readonly byFamily: Record<HandlerName, PlacementFunction>;

  constructor(scope: Construct, id: string, props: HandlerFunctionsProps) {
    super(scope, id);
    const entries = HANDLER_FAMILIES.map((family) => {
      const fn = new PlacementFunction(this, family, {
        entry: handlerEntry(family),
        description: `Placement ${family} handler`,
        settings: props.settings[family],
        environment: props.environment,
        files: props.files,
        logRetentionDays: props.logRetentionDays,
        systemLogLevel: props.systemLogLevel,
      });
      const access = TABLE_ACCESS[family];
      if (access !== 'none') grantTableAccess(props.table, fn, access);
      return [family, fn] as const;
    });
    this.byFamily = Object.fromEntries(entries) as Record<HandlerName, PlacementFunction>;
  }
}
