/**
 * Configuration from environment variables, read on each use (getters), so a
 * variable set after import, as tests and the local server do, takes effect.
 * Documented in docs/operators/configuration.md; the local server and the CDK stack set the same variables.
 */
function flag(name: string): boolean {
  return /^(1|true|yes|on)$/i.test(process.env[name] ?? '');
}

/** A whole-number setting of at least `minimum`; anything else stops the service with the variable's name. */
function whole(name: string, fallback: number, minimum = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < minimum) throw new Error(`${name} must be a whole number of at least ${minimum}, not ${JSON.stringify(raw)}`);
  return value;
}

/** A comma-separated setting or header as its non-empty, trimmed items. */
export function commaSeparated(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

export const config = {
  get tableName(): string {
    return process.env.PLACEMENT_TABLE_NAME ?? 'placement';
  },
  /**
   * How long the actor of a multi-step change (its writer, or whoever took
   * over its rollback or completion) is presumed alive without renewing its
   * lease; a fence it holds longer is taken for a dead writer's
   * (docs/design/multi-step-changes.md).
   */
  get changeLeaseMs(): number {
    return whole('PLACEMENT_CHANGE_LEASE_MS', 8000, 100);
  },
  /**
   * How long a function keeps the table's storage format it read before reading it again (docs/operators/upgrade.md):
   * a finalize reaches every running function within this time.
   */
  get storageFormatSeconds(): number {
    return whole('PLACEMENT_STORAGE_FORMAT_SECONDS', 30);
  },
  /**
   * The longest a request may run (PLACEMENT_LONGEST_REQUEST_SECONDS): the stack sets the longest timeout of the functions
   * that write; by default Lambda's longest, 900 s. The build of a new storage format's entries waits this long, beside
   * storageFormatSeconds, for every request that read an older format to end (shared/storage/entries/build.ts).
   */
  get longestRequestSeconds(): number {
    return whole('PLACEMENT_LONGEST_REQUEST_SECONDS', 900);
  },
  /**
   * The time each request of the local server has, as a function's timeout gives it in AWS: by default Lambda's
   * longest (a slow, loaded machine is no reason to fail a request). A test may shorten it: what waits for a request's
   * time to end (entries written ahead of a change are held that long, at most a minute) then waits less.
   */
  get localRequestSeconds(): number {
    return whole('PLACEMENT_LOCAL_REQUEST_SECONDS', 900, 1);
  },
  /** How often the local service sweeps the changes of dead writers, as the stack's scheduled sweeper does; 0: only when it starts. */
  get localSweepSeconds(): number {
    return whole('PLACEMENT_LOCAL_SWEEP_SECONDS', 30);
  },
  /** How long the allocation history keeps an event (docs/operators/history.md). */
  get historyRetentionDays(): number {
    return whole('PLACEMENT_HISTORY_RETENTION_DAYS', 90, 1);
  },
  /**
   * How often the local service reads DynamoDB Local's change stream into the allocation history, as the stack's stream
   * does; 0: no history, and a table the service creates has no change stream (DynamoDB Local keeps every record a
   * stream ever had, deleted tables' too, and slows down as they pile up).
   */
  get localHistorySeconds(): number {
    return whole('PLACEMENT_LOCAL_HISTORY_SECONDS', 1);
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
  /** PLACEMENT_POLICY_FILE: operator overrides of the policy rules (YAML or JSON, rule name to check string). */
  get policyFile(): string | undefined {
    return process.env.PLACEMENT_POLICY_FILE || undefined;
  },
  /** `noauth2` (upstream's test strategy, the default) or `keystone`. */
  get authStrategy(): string {
    return process.env.PLACEMENT_AUTH_STRATEGY || 'noauth2';
  },
  /** Running as a Lambda function (Lambda sets this variable). */
  get inLambda(): boolean {
    return process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined;
  },
  /** noauth2 makes every caller an admin: in Lambda only when the deployment asked for it (the stack's `auth=noauth2`). */
  get allowNoauth2InLambda(): boolean {
    return process.env.PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA === 'true';
  },
  /** How long API Gateway caches the authorizer's answers (the stack sets it on the authorizer; 0: not at all). */
  get authorizerCacheSeconds(): number {
    return Number(process.env.PLACEMENT_AUTHORIZER_CACHE_SECONDS ?? 0);
  },
  get keystoneUrl(): string | undefined {
    return process.env.PLACEMENT_KEYSTONE_URL || undefined;
  },
  /** How long a token Keystone called valid is believed without asking again. */
  get keystoneCacheSeconds(): number {
    return Number(process.env.PLACEMENT_KEYSTONE_CACHE_SECONDS ?? 60);
  },
  /** How long one token check (the service's login and the validation together) may take before it is a 503. */
  get keystoneTimeoutSeconds(): number {
    return Number(process.env.PLACEMENT_KEYSTONE_TIMEOUT_SECONDS ?? 5);
  },
  /** The service's own Keystone credentials, when they are given in the environment. */
  get keystoneUsername(): string | undefined {
    return process.env.PLACEMENT_KEYSTONE_USERNAME || undefined;
  },
  get keystonePassword(): string | undefined {
    return process.env.PLACEMENT_KEYSTONE_PASSWORD || undefined;
  },
  get keystoneUserDomainName(): string {
    return process.env.PLACEMENT_KEYSTONE_USER_DOMAIN_NAME || 'Default';
  },
  get keystoneProjectName(): string {
    return process.env.PLACEMENT_KEYSTONE_PROJECT_NAME || 'service';
  },
  get keystoneProjectDomainName(): string {
    return process.env.PLACEMENT_KEYSTONE_PROJECT_DOMAIN_NAME || 'Default';
  },
  /** In AWS: the Secrets Manager secret holding the service credentials. */
  get keystoneSecretArn(): string | undefined {
    return process.env.PLACEMENT_KEYSTONE_SECRET_ARN || undefined;
  },
  /** CORS, oslo.middleware's [cors] options with upstream Placement's defaults; no allowed origin turns CORS off. */
  get corsAllowedOrigins(): string[] {
    return commaSeparated(process.env.PLACEMENT_CORS_ALLOWED_ORIGIN);
  },
  get corsAllowHeaders(): string[] {
    return commaSeparated(
      process.env.PLACEMENT_CORS_ALLOW_HEADERS ??
        'X-Auth-Token,X-Openstack-Request-Id,X-Identity-Status,X-Roles,X-Service-Catalog,X-User-Id,X-Tenant-Id,OpenStack-API-Version',
    );
  },
  get corsExposeHeaders(): string[] {
    return commaSeparated(
      process.env.PLACEMENT_CORS_EXPOSE_HEADERS ?? 'X-Auth-Token,X-Openstack-Request-Id,X-Subject-Token,X-Service-Token,OpenStack-API-Version',
    );
  },
  get corsAllowMethods(): string[] {
    return commaSeparated(process.env.PLACEMENT_CORS_ALLOW_METHODS ?? 'GET,PUT,POST,DELETE,PATCH');
  },
  get corsAllowCredentials(): boolean {
    return !/^(0|false|no|off)$/i.test(process.env.PLACEMENT_CORS_ALLOW_CREDENTIALS ?? 'true');
  },
  get corsMaxAge(): number {
    return Number(process.env.PLACEMENT_CORS_MAX_AGE ?? 3600);
  },
  /**
   * Most allocation candidates one response holds, whatever `limit` says
   * (like upstream's max_allocation_candidates): bounds the search and keeps
   * the response under Lambda's 6 MB.
   */
  get maxAllocationCandidates(): number {
    return Number(process.env.PLACEMENT_MAX_ALLOCATION_CANDIDATES ?? 5000);
  },
  /**
   * How long one GET /allocation_candidates may search before it answers
   * with the candidates found so far: well under the function's 29 s
   * timeout, which leaves time to read the trees it found and answer.
   */
  get searchDeadlineMs(): number {
    return Number(process.env.PLACEMENT_SEARCH_DEADLINE_MS ?? 10_000);
  },
  /**
   * The service's own retry policy (shared/storage/retry.ts): how often a
   * change that a concurrent writer got in the way of is read, planned and
   * committed again before the 409, and a batch's unprocessed keys sent
   * again before the 503; and the bounds of the jittered wait before each.
   */
  get retries(): number {
    return whole('PLACEMENT_RETRIES', 10);
  },
  get retryBaseDelayMs(): number {
    return whole('PLACEMENT_RETRY_BASE_DELAY_MS', 10);
  },
  get retryMaxDelayMs(): number {
    return whole('PLACEMENT_RETRY_MAX_DELAY_MS', 200);
  },
  /** Attempts made of one DynamoDB request (throttled, failed, timed out or cut off) before giving up with a 503: shared/storage/dynamodb.ts, and the SDK client of the tools. */
  get dynamoDbMaxAttempts(): number {
    return whole('PLACEMENT_DYNAMODB_MAX_ATTEMPTS', 4, 1);
  },
  /**
   * How long one attempt of a DynamoDB request may take, answer included.
   * DynamoDB answers in milliseconds; DynamoDB Local (an endpoint) on a busy
   * machine can take seconds, a cold CreateTable more.
   */
  get dynamoDbTimeoutMs(): number {
    return whole('PLACEMENT_DYNAMODB_TIMEOUT_MS', this.dynamoDbEndpoint === undefined ? 3000 : 30_000, 1);
  },
  /**
   * The release of this service the function runs (package.json's version): the stack and the local runtime set it;
   * on every log record and in GET /upgrade, never in upstream's answers.
   */
  get release(): string {
    return process.env.PLACEMENT_RELEASE || 'unknown';
  },
  /** The deployment this instance belongs to (several share an account); the dimension of its metrics. */
  get stage(): string {
    return process.env.PLACEMENT_STAGE || 'local';
  },
  /** Write per-route embedded-metric aggregates to stdout: on in Lambda, where CloudWatch reads them, off elsewhere unless asked. */
  get metrics(): boolean {
    return process.env.PLACEMENT_METRICS ? flag('PLACEMENT_METRICS') : this.inLambda;
  },
  /** Write a plain record of every request to stdout, for the benchmarks and tests: off unless asked. */
  get requestRecords(): boolean {
    return flag('PLACEMENT_REQUEST_RECORDS');
  },
};
