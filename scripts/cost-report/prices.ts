/**
 * AWS list prices the cost report uses: us-east-1, on demand, in USD, as
 * published on the pages named when this was written (November 2026). Every
 * figure of the bill in docs/operators/cost.md is one of these times a measurement.
 */
export const PRICES = {
  /**
   * https://aws.amazon.com/api-gateway/pricing/ : HTTP APIs, per million
   * requests (each metered in 512 KB steps): the first 300 million a month,
   * the next 700 million, then the rest. Entries: [requests up to, USD per million].
   */
  httpApiTiers: [
    [300e6, 1.0],
    [1e9, 0.9],
    [Infinity, 0.8],
  ] as const,
  /** https://aws.amazon.com/lambda/pricing/ : requests, and Arm (the stack's architecture) GB-seconds up to 7.5 billion a month. */
  lambdaRequestPerMillion: 0.2,
  lambdaArmGbSecond: 0.0000133334,
  /** https://aws.amazon.com/dynamodb/pricing/on-demand/ : on-demand request units (since the November 2024 cut). */
  dynamoReadUnitPerMillion: 0.125,
  dynamoWriteUnitPerMillion: 0.625,
  /** https://aws.amazon.com/dynamodb/pricing/ : Standard table class storage beyond the free 25 GB a month. */
  dynamoStorageGbMonth: 0.25,
  /**
   * https://aws.amazon.com/dynamodb/pricing/provisioned/ : provisioned capacity, per RCU-hour and WCU-hour. The stored
   * copy of that page this was checked against does not show the figures (they load separately); these are the us-east-1
   * list prices as issue 22 took them from a secondary page.
   */
  dynamoReadCapacityUnitHour: 0.00013,
  dynamoWriteCapacityUnitHour: 0.00065,
  /** https://aws.amazon.com/cloudwatch/pricing/ : Logs, standard class, ingestion (Lambda's logs: the first 10 TB a month). */
  logsIngestedPerGb: 0.5,
  /** https://aws.amazon.com/ec2/pricing/on-demand/ : data transfer out to the internet, up to 10 TB a month (the first 100 GB free). */
  transferOutPerGb: 0.09,
  /** https://aws.amazon.com/ec2/pricing/on-demand/ : m7g.large (2 vCPU Graviton3, 8 GiB), Linux. */
  ec2M7gLargeHour: 0.0816,
  /** https://aws.amazon.com/ebs/pricing/ : gp3 per GB-month. */
  ebsGp3GbMonth: 0.08,
  /** https://aws.amazon.com/elasticloadbalancing/pricing/ : Application Load Balancer hour and LCU-hour. */
  albHour: 0.0225,
  albLcuHour: 0.008,
  /** https://aws.amazon.com/rds/mysql/pricing/ : db.t4g.large (2 vCPU, 8 GiB) Single-AZ; Multi-AZ is twice that. */
  rdsMysqlT4gLargeHour: 0.073,
  /** https://aws.amazon.com/rds/mysql/pricing/ : gp3 storage per GB-month, Single-AZ (Multi-AZ: twice). */
  rdsGp3GbMonth: 0.115,
} as const;

export const HOURS_PER_MONTH = 730;
