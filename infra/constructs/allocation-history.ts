/**
 * The allocation history's writer: the history function
 * (functions/allocation-history.ts) fed by the table's change stream, only
 * with the records of consumer items (the filter is evaluated by Lambda's
 * event source, which bills no invocation for the rest). Records of one
 * item reach it in commit order; a batch it fails is given again until it
 * succeeds or its records leave the stream (24 hours), and the function
 * writes the same events again under the same keys.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { ALLOCATION_HISTORY_ENTRY } from '../bundling.js';
import type { SystemLogLevel } from '../settings.js';
import { CONSUMER_SK } from '../../shared/storage/items/consumer.js';
import { PlacementFunction } from './functions.js';
import { grantTableAccess } from './table.js';

export interface AllocationHistoryProps {
  table: ITable;
  stage: string;
  retentionDays: number;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
}

export class AllocationHistory extends Construct {
  readonly function: PlacementFunction;

  constructor(scope: Construct, id: string, props: AllocationHistoryProps) {
    super(scope, id);
    this.function = new PlacementFunction(this, 'Function', {
      entry: ALLOCATION_HISTORY_ENTRY,
      description: 'Placement allocation history: the change stream of consumers into allocation events',
      // A batch of 100 changes writes a few hundred small items with BatchWriteItem, waiting on DynamoDB.
      settings: { memoryMb: 256, timeoutSeconds: 60 },
      environment: {
        PLACEMENT_TABLE_NAME: props.table.tableName,
        PLACEMENT_STAGE: props.stage,
        PLACEMENT_HISTORY_RETENTION_DAYS: String(props.retentionDays),
      },
      logRetentionDays: props.logRetentionDays,
      systemLogLevel: props.systemLogLevel,
    });
    grantTableAccess(props.table, this.function, 'readWrite');
    this.function.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        // Retried until the records leave the stream: an event given up would be missing from the history.
        retryAttempts: -1,
        filters: [FilterCriteria.filter({ dynamodb: { Keys: { sk: { S: FilterRule.isEqual(CONSUMER_SK) } } } })],
      }),
    );
    Validations.of(this.function.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "The stream event source's dynamodb:ListStreams takes no resource but *; the records themselves are read from this table's stream only " +
        '(DescribeStream, GetShardIterator and GetRecords on its ARN)',
    });
  }
}
