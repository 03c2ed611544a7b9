/**
 * The function-URL front door (`-c frontDoor=functionUrl`), for large
 * regions: one router function (functions/router.ts) serving every route
 * from the same handlers, behind a Lambda function URL, which costs nothing
 * per request beyond the invocation where API Gateway's HTTP API costs $1.00
 * per million (docs/operators/cost.md, "Front doors").
 *
 * The URL's auth type is NONE: anyone can reach it, as they can reach the
 * HTTP API; the handlers refuse every request without a valid Keystone
 * token (401) before touching the table. Reserved concurrency is the only
 * brake a function URL offers.
 */
import { Fn } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FunctionUrlAuthType } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { ROUTER_ENTRY } from '../bundling.js';
import type { FunctionSettings, SystemLogLevel } from '../settings.js';
import { PlacementFunction } from './functions.js';
import { grantTableAccess } from './table.js';

export interface FunctionUrlFrontDoorProps {
  table: ITable;
  settings: FunctionSettings;
  environment: Record<string, string>;
  files?: Record<string, string>;
  /** The Keystone service credentials: the handlers validate tokens themselves here. */
  secret?: ISecret;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
}

/**
 * How long the router believes a token Keystone called valid (its instances
 * share validations through the table): 300 s, the HTTP API front door's
 * revocation bound (240 s + 60 s) and keystonemiddleware's default
 * token_cache_time in front of upstream Placement. The `environment` context
 * can set another.
 */
export const ROUTER_TOKEN_CACHE_SECONDS = 300;

export class FunctionUrlFrontDoor extends Construct {
  readonly router: PlacementFunction;
  /** The endpoint without the trailing slash Lambda gives it, as Keystone's catalog and nova expect. */
  readonly endpoint: string;

  constructor(scope: Construct, id: string, props: FunctionUrlFrontDoorProps) {
    super(scope, id);
    this.router = new PlacementFunction(this, 'Router', {
      entry: ROUTER_ENTRY,
      description: 'Placement router: every route, behind the function URL',
      settings: props.settings,
      environment: { PLACEMENT_KEYSTONE_CACHE_SECONDS: String(ROUTER_TOKEN_CACHE_SECONDS), ...props.environment },
      files: props.files,
      logRetentionDays: props.logRetentionDays,
      systemLogLevel: props.systemLogLevel,
    });
    grantTableAccess(props.table, this.router, 'readWrite');
    props.secret?.grantRead(this.router);
    const url = this.router.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
    // https://<id>.lambda-url.<region>.on.aws/ -> https://<id>.lambda-url.<region>.on.aws
    this.endpoint = Fn.join('', ['https://', Fn.select(2, Fn.split('/', url.url))]);
  }
}
