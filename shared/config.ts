/**
 * Configuration from environment variables, read once. Documented in the
 * README; the local server and the CDK stack set the same variables.
 */
function flag(name: string): boolean {
  return /^(1|true|yes|on)$/i.test(process.env[name] ?? '');
}

export const config = {
  get tableName(): string {
    return process.env.PLACEMENT_TABLE_NAME ?? 'placement';
  },
  /** A DynamoDB endpoint other than AWS's (DynamoDB Local). */
  get dynamoDbEndpoint(): string | undefined {
    return process.env.PLACEMENT_DYNAMODB_ENDPOINT || undefined;
  },
  get enforceScope(): boolean {
    return flag('PLACEMENT_ENFORCE_SCOPE');
  },
  get enforceNewDefaults(): boolean {
    return flag('PLACEMENT_ENFORCE_NEW_DEFAULTS');
  },
  /**
   * Most allocation candidates one response holds, whatever `limit` says
   * (like upstream's max_allocation_candidates): bounds the search and keeps
   * the response under Lambda's 6 MB.
   */
  get maxAllocationCandidates(): number {
    return Number(process.env.PLACEMENT_MAX_ALLOCATION_CANDIDATES ?? 5000);
  },
  /** How many times a claim is retried after a concurrent update before answering 409. */
  get claimRetries(): number {
    return Number(process.env.PLACEMENT_CLAIM_RETRIES ?? 10);
  },
};
