/**
 * The single DynamoDB table, built from shared/storage/table-definition.ts
 * (the local server creates its table from the same definition): the key
 * schema and every secondary index, whatever indexes the definition lists.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { PARTITION_KEY, SECONDARY_INDEXES, SORT_KEY, TTL_ATTRIBUTE } from '../../shared/storage/table-definition.js';

export class PlacementTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: AttributeType.STRING },
      // Scheduling traffic comes in bursts and idles between them: on-demand costs nothing idle and needs no capacity planning.
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The table is the system of record for every allocation: neither a stack deletion nor a console click removes it.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      encryption: TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: TTL_ATTRIBUTE,
    });
    for (const index of SECONDARY_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
  }
}

/**
 * The table's data actions for what a function does: CDK's grantReadData
 * and grantReadWriteData less Scan (nothing scans) and the stream actions
 * (the table has no stream). A transaction's items are authorized as their
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
