/**
 * Deployment settings from CDK context (`-c key=value` or cdk.json's
 * "context"), checked once with clear errors. Every key is documented in the
 * docs/operators/deploy.md, "Stack context settings".
 */
import { readFileSync } from 'node:fs';
import type { Node } from 'constructs';
import { parsePolicyFile } from '../shared/auth/policy-yaml.js';
import { buildPolicy } from '../shared/domain/policy.js';
import { DEFAULT_POLICY_RULES } from '../shared/domain/policy-defaults.js';
import { ROUTES, type HandlerName } from '../shared/http/routes.js';
import { brakesFor, type RegionSize } from './brakes.js';
import { FRONT_DOORS, knownMissing, type FrontDoor } from './front-doors.js';
import { CAPACITY_MODES, DEFAULT_TARGET_PERCENT, provisionedCapacityFor, TARGET_PERCENT_RANGE, type TableCapacity } from './table-capacity.js';

/** One Lambda function per handler family the route table names. */
export const HANDLER_FAMILIES: readonly HandlerName[] = [...new Set(ROUTES.map((route) => route.handler))];

/** Every function sized by context: the handler families, the authorizer, and the function-URL front door's router. */
export type FunctionName = HandlerName | 'authorizer' | 'router';

/** Lambda's own log lines (START, END, REPORT are INFO): WARN keeps them out of the bill. */
export type SystemLogLevel = 'DEBUG' | 'INFO' | 'WARN';
const SYSTEM_LOG_LEVELS: readonly SystemLogLevel[] = ['DEBUG', 'INFO', 'WARN'];

/**
 * Variables the stack sets itself: the context's `environment` may not
 * override them (the auth strategy and its noauth2 guard follow the `auth`
 * context only), and service credentials never go into an environment.
 */
const STACK_VARIABLES = [
  'PLACEMENT_TABLE_NAME',
  'PLACEMENT_STAGE',
  'PLACEMENT_RELEASE',
  'PLACEMENT_AUTH_STRATEGY',
  'PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA',
  'PLACEMENT_AUTHORIZER_CACHE_SECONDS',
  'PLACEMENT_KEYSTONE_URL',
  'PLACEMENT_KEYSTONE_SECRET_ARN',
  'PLACEMENT_KEYSTONE_USERNAME',
  'PLACEMENT_KEYSTONE_PASSWORD',
  'PLACEMENT_METRICS',
  'PLACEMENT_POLICY_FILE',
];

export interface FunctionSettings {
  memoryMb: number;
  timeoutSeconds: number;
  /** Unset: the function draws on the account's unreserved concurrency. */
  reservedConcurrency?: number;
}

export interface PlacementSettings {
  stage: string;
  regions: string[];
  account?: string;
  frontDoor: FrontDoor;
  functions: Record<FunctionName, FunctionSettings>;
  /** The region the brakes are sized for, and the API stage's limits (infra/brakes.ts). */
  region: RegionSize;
  throttle: { rateLimit: number; burstLimit: number };
  /** On-demand, or provisioned with auto scaling sized for the region (infra/table-capacity.ts). */
  tableCapacity: TableCapacity;
  auth: {
    strategy: 'keystone' | 'noauth2';
    keystoneUrl?: string;
    /** Name or ARN of an existing secret with the service credentials; unset: the stack creates one. */
    keystoneSecret?: string;
    /** 0 turns API Gateway's authorizer cache off. */
    cacheTtlSeconds: number;
  };
  /** Extra PLACEMENT_* variables for the handlers (policy enforcement, CORS, log level...). */
  environment: Record<string, string>;
  /** The operator's policy overrides (the `policyFile` context, read and checked at synth time), shipped to the handlers as JSON. */
  policyRules?: Record<string, string>;
  logRetentionDays: number;
  /** API Gateway's access log (`-c accessLog=true`): off by default, about 220 bytes a request (`npm run log-report`). */
  accessLog: boolean;
  systemLogLevel: SystemLogLevel;
  alarms: AlarmThresholds & { email?: string };
  /** The scheduled capacity function (infra/constructs/capacity.ts); off: no function, schedule or widgets. */
  capacityMetrics: { enabled: boolean; everyMinutes: number };
  /** How long the allocation history keeps an event (docs/operators/history.md). */
  historyRetentionDays: number;
}

/** When the alarms fire (docs/operators/observability.md, "Runbook"): each a context setting. */
export interface AlarmThresholds {
  serverErrorPercent: number;
  p99LatencyMs: number;
  /** The history function's iterator age: how far behind the change stream it reads (records leave it after 24 hours). */
  historyBehindMinutes: number;
  /** How long the oldest unfinished multi-step change, owed count change or entry cleanup has waited for the sweeper. */
  sweeperBacklogMinutes: number;
  /** DynamoDB's throttled requests, and its system errors, in 5 minutes. */
  tableThrottledRequests: number;
  tableSystemErrors: number;
  /** A provisioned table's (or index's) consumed capacity as a share of what it has. */
  tableCapacityPercent: number;
}

/**
 * Measured defaults (`npm run bundle-report` and `npm run cost-report`, see
 * docs/operators/deploy.md and cost.md): a process that has served its first request holds 50-60 MB,
 * so memory is chosen for CPU, which Lambda allots in proportion to memory
 * (1769 MB is one vCPU). A CRUD call computes for a small part of its time
 * and waits on DynamoDB for the rest, and the waiting is billed at the
 * memory size: halving memory roughly halves what nova's polling costs in
 * duration (cost-report's memory table) and adds a few milliseconds of
 * computing. 256 MB, not 128 MB: at 128 MB (7% of a vCPU) a cold start's
 * 40-60 ms of module loading on a full core takes most of a second. The
 * reshaper writes up to 100 items at once: 512 MB. The candidate search
 * computes for most of its 60 ms (p50 at 100 nodes) and grows with the
 * cloud: 1536 MB. The authorizer waits on Keystone: 256 MB. The function-URL
 * router serves every family, the search included, from one pool: 512 MB,
 * where nova's polling (89% consumers' allocations, waiting on DynamoDB) costs
 * half of 1024 MB's duration and a search a scheduler sends a few times a
 * minute takes about twice as long (docs/operators/cost.md, "Memory sizes").
 */
const DEFAULT_MEMORY_MB: Partial<Record<FunctionName, number>> = { 'allocation-candidates': 1536, reshaper: 512, router: 512 };
const BASE_MEMORY_MB = 256;
/**
 * API Gateway gives up after 30 s. CRUD calls take milliseconds; the search, and every family that writes, seconds: any
 * write may be a change of any size (a reshape, hundreds of consumers, a subtree moved, thousands of aggregates or
 * custom traits or classes on a provider: docs/design/multi-step-changes.md), and any write may meet a change whose
 * writer died and finish it.
 */
const DEFAULT_TIMEOUT_SECONDS: Partial<Record<FunctionName, number>> = {
  'allocation-candidates': 29,
  allocations: 29,
  reshaper: 29,
  'resource-providers': 29,
  inventories: 29,
  aggregates: 29,
  traits: 29,
  'resource-classes': 29,
  // A project's usage over a month reads every allocation event of the project in it.
  history: 29,
  authorizer: 10,
  router: 29,
};
const BASE_TIMEOUT_SECONDS = 10;

const FUNCTION_NAMES: readonly FunctionName[] = [...HANDLER_FAMILIES, 'authorizer', 'router'];

class ContextReader {
  constructor(private readonly node: Node) {}

  /** CLI context arrives as strings, cdk.json context as JSON values: accept both. */
  raw(key: string): unknown {
    const value: unknown = this.node.tryGetContext(key);
    if (typeof value !== 'string') return value;
    const trimmed = value.trim();
    if (/^[[{]/.test(trimmed)) {
      try {
        return JSON.parse(trimmed);
      } catch {
        throw new Error(`context ${key}: not valid JSON: ${value}`);
      }
    }
    return trimmed === '' ? undefined : trimmed;
  }

  string(key: string): string | undefined {
    const value = this.raw(key);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw new Error(`context ${key}: expected a string, got ${JSON.stringify(value)}`);
    return value;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined || value === null) return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw new Error(`context ${key}: expected true or false, got ${JSON.stringify(value)}`);
  }

  number(key: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
    return this.toNumber(key, this.raw(key) ?? fallback, min, max);
  }

  toNumber(key: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const number = typeof value === 'number' ? value : Number(value);
    if (!Number.isFinite(number) || number < min || number > max) {
      throw new Error(`context ${key}: expected a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    return number;
  }

  /**
   * A number for every function, or an object of per-function numbers (key
   * `default` for the rest). Where `none` is allowed it means no value at all.
   */
  perFunction(key: string, fallback: (name: FunctionName) => number | undefined, min: number, allowNone = false): Record<FunctionName, number | undefined> {
    const value = this.raw(key);
    const overrides: Record<string, unknown> =
      value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : value === undefined ? {} : { default: value };
    const unknown = Object.keys(overrides).filter((name) => name !== 'default' && !FUNCTION_NAMES.includes(name as FunctionName));
    if (unknown.length > 0) throw new Error(`context ${key}: unknown function ${unknown.join(', ')} (known: ${FUNCTION_NAMES.join(', ')})`);
    return Object.fromEntries(
      FUNCTION_NAMES.map((name) => {
        const chosen = Object.hasOwn(overrides, name) ? overrides[name] : overrides.default;
        if (chosen === undefined) return [name, fallback(name)];
        if (allowNone && chosen === 'none') return [name, undefined];
        return [name, this.toNumber(`${key}.${name}`, chosen, min)];
      }),
    ) as Record<FunctionName, number | undefined>;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const value = this.string(key) ?? fallback;
    if (!allowed.includes(value as T)) throw new Error(`context ${key}: one of ${allowed.join(', ')}, not ${value}`);
    return value as T;
  }
}

export function readSettings(node: Node): PlacementSettings {
  const context = new ContextReader(node);

  const stage = context.string('stage') ?? 'dev';
  // Stack, function and dashboard names embed it; keep it short and plain.
  if (!/^[a-z][a-z0-9-]{0,19}$/i.test(stage)) throw new Error(`context stage: letters, digits and dashes, at most 20, starting with a letter; got ${stage}`);

  const regions = (context.string('regions') ?? process.env.CDK_DEFAULT_REGION ?? 'us-east-1')
    .split(',')
    .map((region) => region.trim())
    .filter(Boolean);
  for (const region of regions) {
    if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) throw new Error(`context regions: ${region} is not an AWS region name`);
  }
  if (new Set(regions).size !== regions.length) throw new Error('context regions: a region is listed twice');

  const strategy = context.string('auth') ?? 'keystone';
  if (strategy !== 'keystone' && strategy !== 'noauth2') throw new Error(`context auth: "keystone" or "noauth2", not ${strategy}`);
  // noauth2's identity depends on headers besides the token (x-roles, x-project-id...): a cache keyed on the token would mix them up.
  // 240 s: with the authorizer's own 60 s token cache, a revoked token keeps working for at most 300 s, keystonemiddleware's
  // default token_cache_time in front of upstream Placement (docs/operators/deploy.md, "Revocation bound").
  const cacheTtlSeconds = context.number('authorizerCacheTtlSeconds', strategy === 'noauth2' ? 0 : 240, 0, 3600);

  const region = { computeNodes: context.number('computeNodes', 1000, 1), instancesPerNode: context.number('instancesPerNode', 30, 0) };
  const brakes = brakesFor(region, HANDLER_FAMILIES, cacheTtlSeconds);
  const rateLimit = context.number('throttleRateLimit', brakes.rateLimit, 1);
  const throttle = { rateLimit, burstLimit: context.number('throttleBurstLimit', brakes.burstLimit, 0) };

  const capacityMode = context.oneOf('capacity', CAPACITY_MODES, 'on-demand');
  const targetPercent = context.number('capacityTargetPercent', DEFAULT_TARGET_PERCENT, TARGET_PERCENT_RANGE.min, TARGET_PERCENT_RANGE.max);
  // A target without provisioned capacity would change nothing: most likely capacity=provisioned was forgotten.
  if (capacityMode === 'on-demand' && context.raw('capacityTargetPercent') !== undefined)
    throw new Error('context capacityTargetPercent: only with capacity=provisioned (an on-demand table has no target)');
  const tableCapacity: TableCapacity =
    capacityMode === 'provisioned' ? { mode: 'provisioned', ...provisionedCapacityFor(region, targetPercent) } : { mode: 'on-demand' };

  const memory = context.perFunction('memoryMb', (name) => DEFAULT_MEMORY_MB[name] ?? BASE_MEMORY_MB, 128);
  const timeout = context.perFunction('timeoutSeconds', (name) => DEFAULT_TIMEOUT_SECONDS[name] ?? BASE_TIMEOUT_SECONDS, 1);
  // No reservation unless asked: Lambda refuses one that leaves an account fewer than 100 unreserved executions, which
  // fails a new account's first deploy (its quota starts low). `sized` reserves what the region's size asks (infra/brakes.ts).
  const sizedFor = (name: FunctionName) =>
    name === 'authorizer' ? brakes.authorizerConcurrency : name === 'router' ? brakes.routerConcurrency : brakes.concurrency[name];
  const reserved =
    context.raw('reservedConcurrency') === 'sized'
      ? (Object.fromEntries(FUNCTION_NAMES.map((name) => [name, sizedFor(name)])) as Record<FunctionName, number>)
      : context.perFunction('reservedConcurrency', () => undefined, 0, true);
  const functions = Object.fromEntries(
    FUNCTION_NAMES.map((name) => [name, { memoryMb: memory[name]!, timeoutSeconds: timeout[name]!, reservedConcurrency: reserved[name] }]),
  ) as Record<FunctionName, FunctionSettings>;

  const environment = context.raw('environment') ?? {};
  if (typeof environment !== 'object' || environment === null || Array.isArray(environment)) {
    throw new Error('context environment: expected a JSON object of PLACEMENT_* variables');
  }
  for (const [name, value] of Object.entries(environment)) {
    if (!name.startsWith('PLACEMENT_') || typeof value !== 'string')
      throw new Error(`context environment: ${name} must be a PLACEMENT_* variable with a string value`);
    if (STACK_VARIABLES.includes(name))
      throw new Error(`context environment: the stack sets ${name} itself (see the auth, keystoneUrl, keystoneSecret and policyFile contexts)`);
  }
  const policyFile = context.string('policyFile');
  const policyRules = policyFile === undefined ? undefined : readPolicyRules(policyFile, environment as Record<string, string>);

  const frontDoor = context.oneOf('frontDoor', FRONT_DOORS, 'httpApi');
  const keystoneUrl = context.string('keystoneUrl');

  const capacityMinutes = context.number('capacityMetricsMinutes', 5, 1, 1440);
  if (!Number.isInteger(capacityMinutes)) throw new Error(`context capacityMetricsMinutes: whole minutes, got ${capacityMinutes}`);

  return {
    stage,
    regions,
    account: context.string('account') ?? process.env.CDK_DEFAULT_ACCOUNT,
    frontDoor,
    functions,
    region,
    throttle,
    tableCapacity,
    auth: {
      strategy,
      keystoneUrl,
      keystoneSecret: context.string('keystoneSecret'),
      cacheTtlSeconds,
    },
    environment: environment as Record<string, string>,
    policyRules,
    logRetentionDays: context.number('logRetentionDays', 30, 1),
    accessLog: context.boolean('accessLog', false),
    systemLogLevel: context.oneOf('systemLogLevel', SYSTEM_LOG_LEVELS, 'WARN'),
    alarms: {
      serverErrorPercent: context.number('serverErrorAlarmPercent', 1),
      p99LatencyMs: context.number('p99LatencyAlarmMs', 1000, 1),
      // Well inside the 24 hours a stream keeps a record: a day's lag loses history for good.
      historyBehindMinutes: context.number('historyBehindAlarmMinutes', 5, 1, 720),
      // The sweeper runs every minute and finishes what waits for it at once: a quarter of an hour is several failed sweeps.
      sweeperBacklogMinutes: context.number('sweeperBacklogAlarmMinutes', 15, 2),
      tableThrottledRequests: context.number('tableThrottleAlarmCount', 10, 0),
      tableSystemErrors: context.number('tableSystemErrorAlarmCount', 0, 0),
      tableCapacityPercent: context.number('tableCapacityAlarmPercent', 90, 1, 100),
      email: context.string('alarmEmail'),
    },
    capacityMetrics: {
      enabled: context.boolean('capacityMetrics', true),
      everyMinutes: capacityMinutes,
    },
    historyRetentionDays: context.number('historyRetentionDays', 90, 1),
  };
}

/**
 * The `policyFile` context: the operator's YAML or JSON policy file, read
 * with the local server's parser and checked against upstream's rules at
 * synth time, so that a file Lambda could not use fails here, not at a cold start.
 */
function readPolicyRules(path: string, environment: Record<string, string>): Record<string, string> {
  try {
    const rules = parsePolicyFile(readFileSync(path, 'utf8'));
    const enabled = (name: string) => /^(1|true|yes|on)$/i.test(environment[name] ?? '');
    buildPolicy(DEFAULT_POLICY_RULES, {
      enforceScope: enabled('PLACEMENT_ENFORCE_SCOPE'),
      enforceNewDefaults: enabled('PLACEMENT_ENFORCE_NEW_DEFAULTS'),
      overrides: rules,
    });
    return rules;
  } catch (error) {
    throw new Error(`context policyFile ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * What would make a deployment of these settings fail once deployed: a region
 * without a service the front door needs, a Keystone deployment that does not
 * know where Keystone is (every function would refuse to start). Synth
 * refuses them (infra/placement-app.ts); the preflight lists them.
 */
export function deploymentProblems(settings: PlacementSettings): string[] {
  const problems = settings.regions.flatMap((region) =>
    knownMissing(region, settings.frontDoor).map(
      (missing) => `context regions: ${region} has no ${missing}, which frontDoor=${settings.frontDoor} needs (docs/operators/deploy.md, "Regions")`,
    ),
  );
  if (settings.auth.strategy === 'keystone' && settings.auth.keystoneUrl === undefined) {
    problems.push(
      'context keystoneUrl: required with auth=keystone (-c keystoneUrl=https://keystone.example.com/v3); without it every function would refuse to start',
    );
  }
  return problems;
}
