/**
 * The allocation history's writer: the history function
 * (functions/allocation-history.ts) fed by the table's change stream, only
 * with the records of consumer items (the filter is evaluated by Lambda's
 * event source, which bills no invocation for the rest). Records of one
 * item reach it in commit order; a batch it fails is split and tried again
 * as shared/history-feed.ts says, the function writing the same events again
 * under the same keys, and a record it still cannot take goes to the
 * set-aside queue (Lambda sends the shard and sequence numbers, not the
 * record: docs/operators/history.md says how to replay it while the stream
 * still holds it), so that one bad record stops its shard for seconds, not
 * for the stream's 24 hours.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ALLOCATION_HISTORY_ENTRY } from '../bundling.js';
import type { SystemLogLevel } from '../settings.js';
import { HISTORY_FEED } from '../../shared/history-feed.js';
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
  /** Where the mapping sends the batches it gave up: an alarm watches it (observability.ts), the runbook replays it. */
  readonly setAsideQueue: Queue;

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
    this.setAsideQueue = new Queue(this, 'SetAside', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // SQS's longest: two weeks to notice and replay (the records themselves leave the stream after 24 hours).
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.setAsideQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "The set-aside queue is itself the dead letter queue of the history's stream mapping; an operator reads it (placement-admin history-set-aside)",
    });
    this.function.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: HISTORY_FEED.batchSize,
        maxBatchingWindow: Duration.seconds(1),
        bisectBatchOnError: HISTORY_FEED.bisectBatchOnError,
        retryAttempts: HISTORY_FEED.retryAttempts,
        onFailure: new SqsDlq(this.setAsideQueue),
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
