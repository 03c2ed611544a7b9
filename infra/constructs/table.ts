/**
 * The single DynamoDB table, built from shared/storage/table-definition.ts
 * (the local server creates its table from the same definition): the key
 * schema and every secondary index, whatever indexes the definition lists.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
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
