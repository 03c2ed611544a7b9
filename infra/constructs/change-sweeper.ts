/**
 * The change sweeper: a scheduled function that finishes the multi-step
 * changes of writers that died (functions/change-sweeper.ts), every minute.
 */
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { CHANGE_SWEEPER_ENTRY } from '../bundling.js';
import type { SystemLogLevel } from '../settings.js';
import { PlacementFunction } from './functions.js';
import { grantTableAccess } from './table.js';

export interface ChangeSweeperProps {
  table: ITable;
  stage: string;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
}

/** A sweep reads one partition of open changes; finishing a large dead change writes a few thousand items. */
const FUNCTION_SETTINGS = { memoryMb: 256, timeoutSeconds: 60 };

export class ChangeSweeper extends Construct {
  readonly function: PlacementFunction;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: ChangeSweeperProps) {
    super(scope, id);
    this.function = new PlacementFunction(this, 'Function', {
      entry: CHANGE_SWEEPER_ENTRY,
      description: 'Placement change sweeper: finishes the multi-step changes of writers that died',
      settings: FUNCTION_SETTINGS,
      environment: { PLACEMENT_TABLE_NAME: props.table.tableName, PLACEMENT_STAGE: props.stage },
      logRetentionDays: props.logRetentionDays,
      systemLogLevel: props.systemLogLevel,
    });
    grantTableAccess(props.table, this.function, 'readWrite');
    // A missed run is made up by the next one a minute later.
    this.schedule = new Rule(this, 'Schedule', {
      description: 'Placement change sweeper every minute',
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(this.function, { retryAttempts: 0 })],
    });
  }
}
