/**
 * A Placement function run on a schedule rather than by requests (the
 * capacity figures, the change sweeper): its function, its access to the
 * table and the rule that invokes it, created in the caller's construct (ids
 * `Function` and `Schedule`). Never retried: a missed run is made up by the
 * next one.
 */
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Construct } from 'constructs';
import type { FunctionSettings, SystemLogLevel } from '../settings.js';
import { PlacementFunction } from './functions.js';
import { grantTableAccess } from './table.js';

export interface ScheduledFunctionProps {
  entry: string;
  description: string;
  settings: Pick<FunctionSettings, 'memoryMb' | 'timeoutSeconds'>;
  table: ITable;
  access: Parameters<typeof grantTableAccess>[2];
  stage: string;
  everyMinutes: number;
  /** The rule's description, e.g. "Placement change sweeper every minute". */
  scheduleDescription: string;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
}

export function scheduledFunction(scope: Construct, props: ScheduledFunctionProps): { function: PlacementFunction; schedule: Rule } {
  const fn = new PlacementFunction(scope, 'Function', {
    entry: props.entry,
    description: props.description,
    settings: props.settings,
    environment: { PLACEMENT_TABLE_NAME: props.table.tableName, PLACEMENT_STAGE: props.stage },
    logRetentionDays: props.logRetentionDays,
    systemLogLevel: props.systemLogLevel,
  });
  grantTableAccess(props.table, fn, props.access);
  const schedule = new Rule(scope, 'Schedule', {
    description: props.scheduleDescription,
    schedule: Schedule.rate(Duration.minutes(props.everyMinutes)),
    targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
  });
  return { function: fn, schedule };
}
