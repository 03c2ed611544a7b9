/**
 * The change sweeper: a scheduled function that finishes the multi-step
 * changes of writers that died and removes deleted providers' search entries
 * (functions/change-sweeper.ts), every minute.
 */
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Rule } from 'aws-cdk-lib/aws-events';
import { Construct } from 'constructs';
import { CHANGE_SWEEPER_ENTRY } from '../bundling.js';
import type { SystemLogLevel } from '../settings.js';
import type { PlacementFunction } from './functions.js';
import { scheduledFunction } from './scheduled-function.js';

export interface ChangeSweeperProps {
  table: ITable;
  stage: string;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
}

export class ChangeSweeper extends Construct {
  readonly function: PlacementFunction;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: ChangeSweeperProps) {
    super(scope, id);
    ({ function: this.function, schedule: this.schedule } = scheduledFunction(this, {
      ...props,
      entry: CHANGE_SWEEPER_ENTRY,
      description: 'Placement change sweeper: finishes the multi-step changes of writers that died',
      // A sweep reads the partitions of open changes and entry cleanups; finishing a large dead change, or removing a
      // deleted provider's thousands of search entries, writes a few thousand items.
      settings: { memoryMb: 256, timeoutSeconds: 60 },
      access: 'readWrite',
      everyMinutes: 1,
      scheduleDescription: 'Placement change sweeper every minute',
    }));
  }
}
