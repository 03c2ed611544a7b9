/**
 * The single DynamoDB table, built from shared/storage/table-definition.ts
 * (the local server creates its table from the same definition): the key
 * schema and every secondary index, whatever indexes the definition lists;
 * on-demand, or provisioned with target-tracking auto scaling on the table
 * and each index (infra/table-capacity.ts).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { ProvisionedCapacity, ScalingRange, TableCapacity } from '../table-capacity.js';
import { CHANGE_STREAM_VIEW, PARTITION_KEY, SECONDARY_INDEXES, SORT_KEY, TTL_ATTRIBUTE } from '../../shared/storage/table-definition.js';

export class PlacementTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, capacity: TableCapacity) {
    super(scope, id);
    const provisioned = capacity.mode === 'provisioned' ? capacity : undefined;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      // On-demand by default: it costs nothing idle and needs no capacity planning; provisioned costs less for a region's
      // steady polling (docs/operators/deploy.md, "Table capacity").
      ...(provisioned
        ? { billingMode: BillingMode.PROVISIONED, readCapacity: provisioned.table.read.min, writeCapacity: provisioned.table.write.min }
        : { billingMode: BillingMode.PAY_PER_REQUEST }),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The table is the system of record for every allocation: neither a stack deletion nor a console click removes it.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The allocation history reads it (constructs/allocation-history.ts).
      stream: StreamViewType[CHANGE_STREAM_VIEW],
    });
    for (const index of SECONDARY_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
        ...(provisioned && { readCapacity: provisioned.index.read.min, writeCapacity: provisioned.index.write.min }),
      });
    }
    if (provisioned) this.autoScale(provisioned);
  }

  /** Target tracking on the read and write capacity of the table and of each index. */
  private autoScale(capacity: ProvisionedCapacity): void {
    const scaling = (range: ScalingRange) => ({ minCapacity: range.min, maxCapacity: range.max });
    const target = { targetUtilizationPercent: capacity.targetPercent };
    this.table.autoScaleReadCapacity(scaling(capacity.table.read)).scaleOnUtilization(target);
    this.table.autoScaleWriteCapacity(scaling(capacity.table.write)).scaleOnUtilization(target);
    for (const index of SECONDARY_INDEXES) {
      this.table.autoScaleGlobalSecondaryIndexReadCapacity(index.name, scaling(capacity.index.read)).scaleOnUtilization(target);
      this.table.autoScaleGlobalSecondaryIndexWriteCapacity(index.name, scaling(capacity.index.write)).scaleOnUtilization(target);
    }
  }
}

/**
 * The table's data actions for what a function does: CDK's grantReadData
 * and grantReadWriteData less Scan (nothing scans) and the stream actions
 * (only the history function's event source reads the stream, with the
 * grant its construct adds). A transaction's items are authorized as their
 * own Put, Update, Delete and ConditionCheck.
 */
const READ_ACTIONS = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem', 'dynamodb:DescribeTable'];
const WRITE_ACTIONS = ['dynamodb:BatchWriteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

/**
 * Grants a function the table and each of its indexes by name, rather than
 * CDK's `index/*`: a function may query the indexes the table definition
 * has, not any index a later change adds.
 */
export function grantTableAccess(table: ITable, grantee: IGrantable, access: 'read' | 'readWrite'): void {
  Grant.addToPrincipal({
    grantee,
    actions: access === 'read' ? READ_ACTIONS : [...READ_ACTIONS, ...WRITE_ACTIONS],
    resourceArns: [table.tableArn, ...SECONDARY_INDEXES.map((index) => `${table.tableArn}/index/${index.name}`)],
  });
}
