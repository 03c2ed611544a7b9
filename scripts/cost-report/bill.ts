/**
 * The monthly bill of a region, from what each request kind was measured to
 * cost (DynamoDB units, CPU time and DynamoDB requests, log bytes, response bytes) and
 * how many of each nova sends (scripts/bench-region/nova.ts), at the list
 * prices of ./prices.ts; and the bill of running upstream Placement ourselves
 * for the same region. Pure arithmetic: test/scripts/cost-report/bill.test.ts.
 */
import { ASSOCIATION_REFRESH_MS, KINDS, UPDATE_INTERVAL_MS, type Kind } from '../bench-region/nova.js';
import type { RegionShape } from '../synthetic-region/region.js';
import { HOURS_PER_MONTH, PRICES } from './prices.js';

/** Lambda allots one full vCPU at this memory size, and CPU in proportion below it (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). */
const FULL_VCPU_MB = 1769;

/**
 * Assumed, not measured (DynamoDB Local on this machine is no guide to
 * DynamoDB's latency): what one DynamoDB request keeps a function waiting.
 * AWS promises single-digit milliseconds (https://aws.amazon.com/dynamodb/).
 */
export const DYNAMODB_CALL_MS = 5;

/** What a request makes a function do, measured one request at a time: compute on one full core, and send DynamoDB requests. */
export interface RequestWork {
  cpuMs: number;
  dynamoCalls: number;
}

/** Billed ms at a memory size: the computing slows down with the CPU share below a full vCPU, the waiting does not; Lambda bills whole ms. */
export function billedMs({ cpuMs, dynamoCalls }: RequestWork, memoryMb: number): number {
  return Math.ceil(cpuMs * Math.max(1, FULL_VCPU_MB / memoryMb) + dynamoCalls * DYNAMODB_CALL_MS);
}

/** USD of Lambda duration for one request at a memory size. */
export function durationCost(work: RequestWork, memoryMb: number): number {
  return (memoryMb / 1024) * (billedMs(work, memoryMb) / 1000) * PRICES.lambdaArmGbSecond;
}

/** What one request of a kind was measured to cost. */
export interface MeasuredKind {
  kind: Kind;
  read: number;
  write: number;
  work: RequestWork;
  /** Bytes the function writes to CloudWatch Logs for one request. */
  logBytes: number;
  responseBytes: number;
  /** Memory of the family function that serves the kind behind the HTTP API. */
  memoryMb: number;
}

/** Headers and status line of a response, which leave AWS with the body (about what API Gateway sends). */
const RESPONSE_OVERHEAD_BYTES = 300;

/**
 * Assumed, not measured (no Keystone of a region's size here): what one
 * token validation with Keystone takes, billed.
 */
const KEYSTONE_VALIDATION_MS = 100;

export interface FrontDoor {
  name: string;
  /** The table's capacity mode: on demand (per request unit) or provisioned with target-tracking auto scaling. */
  capacity: 'onDemand' | 'provisioned';
  /** USD for this many requests in a month (tiered prices depend on the month's total). */
  monthly(requests: number): number;
  /** Log bytes the front door itself writes per request (an access log). */
  accessLogBytes: number;
  /** The memory every request is billed at, when one function serves them all; otherwise each family's. */
  memoryMb?: number;
  /** Keystone token validations a second, for a region of this many nodes sending this many requests a second. */
  validationsPerSecond(nodes: number, requestsPerSecond: number): number;
  /**
   * Lookups a second of validations shared through the table (an instance whose own cache lacks a token reads it
   * there before asking Keystone, and writes what Keystone said): none where the authorizer's cache is shared.
   */
  sharedLookupsPerSecond(nodes: number, requestsPerSecond: number): number;
  /** Whether each validation is a Lambda invocation of its own (the authorizer) or runs inside a request (the router). */
  validationIsInvocation: boolean;
  /** The memory validations run at. */
  validationMemoryMb: number;
}

/** HTTP API requests a month, priced by tier (https://aws.amazon.com/api-gateway/pricing/). */
export function httpApiMonthly(requests: number): number {
  let usd = 0;
  let below = 0;
  for (const [upTo, perMillion] of PRICES.httpApiTiers) {
    usd += (Math.max(0, Math.min(requests, upTo) - below) * perMillion) / 1e6;
    below = upTo;
  }
  return usd;
}

/**
 * The default front door: API Gateway caches the authorizer's answer per
 * token (one per nova-compute) for authorizerCacheTtlSeconds (240 by
 * default), so each node's token costs one authorizer invocation per TTL.
 */
export function httpApi(accessLogBytes: number, authorizerMemoryMb: number, cacheTtlSeconds: number): FrontDoor {
  return {
    name: 'HTTP API',
    capacity: 'onDemand',
    monthly: httpApiMonthly,
    accessLogBytes,
    validationsPerSecond: (nodes) => nodes / cacheTtlSeconds,
    sharedLookupsPerSecond: () => 0,
    validationIsInvocation: true,
    validationMemoryMb: authorizerMemoryMb,
  };
}

/**
 * The opt-in front door (`-c frontDoor=functionUrl`): no charge of its own
 * (https://aws.amazon.com/lambda/pricing/), no access log, one router
 * function serving every request at its memory size. The router instances
 * share Keystone's answers through the table (shared/storage/token-validations.ts):
 * Keystone validates each node's token once per `tokenCacheSeconds`, and each
 * instance looks each token up in the table once per that time; the region
 * keeps about as many instances as requests are in flight (requests a second
 * x mean billed seconds, at least one).
 */
export function functionUrl(routerMemoryMb: number, meanBilledMs: number, tokenCacheSeconds: number): FrontDoor {
  const instances = (requestsPerSecond: number) => Math.max(1, Math.ceil((requestsPerSecond * meanBilledMs) / 1000));
  return {
    name: 'function URL',
    capacity: 'onDemand',
    monthly: () => 0,
    accessLogBytes: 0,
    memoryMb: routerMemoryMb,
    validationsPerSecond: (nodes) => nodes / tokenCacheSeconds,
    sharedLookupsPerSecond: (nodes, requestsPerSecond) => (instances(requestsPerSecond) * nodes) / tokenCacheSeconds,
    validationIsInvocation: false,
    validationMemoryMb: routerMemoryMb,
  };
}

/**
 * Requests of each kind one node causes per hour: its periodic task (every
 * 60 s: its node's allocations, each tree provider's allocations, each
 * consumer's), the association refresh (every sixth cycle: in_tree, each
 * provider's inventories, aggregates and traits, and for an aggregated node
 * the sharing providers' query and their three reads), and its share of
 * boots and deletes (candidates, the scheduler's GET and PUT, the compute
 * node's instance_claim or update_usage reads, the DELETE). Shares of nested
 * and aggregated nodes count as fractions of a node.
 */
export function requestsPerNodeHour(shape: RegionShape, bootsPerNodeHour: number): Map<Kind, number> {
  const providers = 1 + shape.nestedShare * shape.pfsPerNode;
  const aggregated = shape.aggregatedShare;
  const instances = shape.instancesPerNode;
  const cycles = 3_600_000 / UPDATE_INTERVAL_MS;
  // nova refreshes at the first cycle after 300 s have passed: every 6th 60 s cycle.
  const refreshes = 3_600_000 / ((Math.floor(ASSOCIATION_REFRESH_MS / UPDATE_INTERVAL_MS) + 1) * UPDATE_INTERVAL_MS);
  const refreshed = providers + aggregated;
  return new Map<Kind, number>([
    [KINDS.providerAllocations, cycles * (1 + providers) + bootsPerNodeHour * 2 * providers],
    [KINDS.consumerAllocations, cycles * instances + bootsPerNodeHour * (1 + instances + 1 + instances)],
    [KINDS.inTree, refreshes],
    [KINDS.inventories, refreshes * refreshed],
    [KINDS.aggregates, refreshes * refreshed],
    [KINDS.traits, refreshes * refreshed],
    [KINDS.sharing, refreshes * aggregated],
    [KINDS.candidates, bootsPerNodeHour],
    [KINDS.claim, bootsPerNodeHour],
    [KINDS.delete, bootsPerNodeHour],
  ]);
}

/** Auto scaling's default target: provisioned capacity is kept at consumed / target. */
export const PROVISIONED_TARGET_UTILISATION = 0.7;

/**
 * The capacity units to provision for a steady consumption of `unitsPerSecond`, so that auto scaling's target
 * utilisation is met: the one sizing of provisioned capacity (the bill's, and the infra's when it provisions).
 */
export const provisionedUnitsFor = (unitsPerSecond: number, targetUtilisation = PROVISIONED_TARGET_UTILISATION): number => unitsPerSecond / targetUtilisation;

/** The same front door in front of a table in provisioned capacity mode. */
export const provisioned = (door: FrontDoor): FrontDoor => ({ ...door, name: `${door.name}, provisioned`, capacity: 'provisioned' });

/** USD of DynamoDB for one request's units: on demand per unit; provisioned, the capacity its units hold for a second. */
function dynamoCost(read: number, write: number, capacity: FrontDoor['capacity']): number {
  if (capacity === 'onDemand') return (read * PRICES.dynamoReadUnitPerMillion + write * PRICES.dynamoWriteUnitPerMillion) / 1e6;
  return (provisionedUnitsFor(read) * PRICES.dynamoReadCapacityUnitHour + provisionedUnitsFor(write) * PRICES.dynamoWriteCapacityUnitHour) / 3600;
}

/** USD per request of a kind, by component, behind a front door whose own price is counted apart. */
export function costPerRequest(measured: MeasuredKind, frontDoor: FrontDoor) {
  return {
    lambdaRequests: PRICES.lambdaRequestPerMillion / 1e6,
    lambdaDuration: durationCost(measured.work, frontDoor.memoryMb ?? measured.memoryMb),
    dynamo: dynamoCost(measured.read, measured.write, frontDoor.capacity),
    logs: ((measured.logBytes + frontDoor.accessLogBytes) / 1e9) * PRICES.logsIngestedPerGb,
    transfer: ((measured.responseBytes + RESPONSE_OVERHEAD_BYTES) / 1e9) * PRICES.transferOutPerGb,
  };
}

export type Components = ReturnType<typeof costPerRequest> & { frontDoor: number; authentication: number };
export const COMPONENTS: (keyof Components)[] = ['frontDoor', 'authentication', 'lambdaRequests', 'lambdaDuration', 'dynamo', 'logs', 'transfer'];

/** A shared validation's item (items/token-validation.ts: a digest, an identity, times) is under 1 KB: one write unit, half a read unit read eventually consistent. */
const SHARED_VALIDATION_READ_UNITS = 0.5;
const SHARED_VALIDATION_WRITE_UNITS = 1;

/** USD a month of validating nova's tokens with Keystone, and of sharing the validations through the table where it is. */
export function authenticationMonthly(frontDoor: FrontDoor, nodes: number, requestsPerSecond: number): number {
  const month = 3600 * HOURS_PER_MONTH;
  const validations = frontDoor.validationsPerSecond(nodes, requestsPerSecond) * month;
  const lookups = frontDoor.sharedLookupsPerSecond(nodes, requestsPerSecond) * month;
  const lambdaMs = (ms: number) => (frontDoor.validationMemoryMb / 1024) * (ms / 1000) * PRICES.lambdaArmGbSecond;
  const validation =
    lambdaMs(KEYSTONE_VALIDATION_MS) +
    (frontDoor.validationIsInvocation ? PRICES.lambdaRequestPerMillion / 1e6 : 0) +
    (lookups > 0 ? dynamoCost(0, SHARED_VALIDATION_WRITE_UNITS, frontDoor.capacity) : 0);
  const lookup = lambdaMs(DYNAMODB_CALL_MS) + dynamoCost(SHARED_VALIDATION_READ_UNITS, 0, frontDoor.capacity);
  return validations * validation + lookups * lookup;
}

/**
 * The fixed monthly items of the stack (docs/operators/cost.md, "An idle region"): one secret, 14 alarm
 * metrics, the dashboard, the aggregates' custom metrics: a metric per route that sees it (Latency and read units on
 * nova's 8 routes, write units, claims and conflicts on its 2 writing ones, server errors rarely): about 26.
 */
const SERVERLESS_FIXED_MONTHLY = 0.4 + 1.4 + 3.0 + 26 * 0.3;

export type MonthlyBill = Components & { total: number; requests: number };

/** The serverless bill of a region of `nodes` for a month, by component. */
export function serverlessMonthly(measured: MeasuredKind[], mix: Map<Kind, number>, nodes: number, frontDoor: FrontDoor): MonthlyBill {
  const sum: Components = { frontDoor: 0, authentication: 0, lambdaRequests: 0, lambdaDuration: 0, dynamo: 0, logs: 0, transfer: 0 };
  let requests = 0;
  for (const kind of measured) {
    const count = (mix.get(kind.kind) ?? 0) * nodes * HOURS_PER_MONTH;
    requests += count;
    const each = costPerRequest(kind, frontDoor);
    for (const component of Object.keys(each) as (keyof typeof each)[]) sum[component] += each[component] * count;
  }
  sum.frontDoor = frontDoor.monthly(requests);
  sum.authentication = authenticationMonthly(frontDoor, nodes, requests / HOURS_PER_MONTH / 3600);
  const total = COMPONENTS.reduce((all, component) => all + sum[component], 0) + SERVERLESS_FIXED_MONTHLY;
  return { ...sum, total, requests };
}

/** USD per million requests of the mix, by component, in a region of `nodes` (tiers and authentication depend on its size). */
export function perMillion(measured: MeasuredKind[], mix: Map<Kind, number>, frontDoor: FrontDoor, nodes: number): Components & { total: number } {
  const month = serverlessMonthly(measured, mix, nodes, frontDoor);
  const scaled = Object.fromEntries(COMPONENTS.map((component) => [component, (month[component] * 1e6) / month.requests])) as Components;
  return { ...scaled, total: COMPONENTS.reduce((all, component) => all + scaled[component], 0) };
}

/**
 * Upstream Placement run by the operator: at least two m7g.large (20 GB gp3
 * each) behind an Application Load Balancer, more when the region's request
 * rate needs them at `requestsPerSecondPerVm`, and RDS for MySQL
 * db.t4g.large Multi-AZ with 20 GB gp3; the same data transfer out as the
 * serverless service.
 */
export function baselineMonthly(requestsPerSecondPerVm: number, measured: MeasuredKind[], mix: Map<Kind, number>, nodes: number) {
  let requestsPerHour = 0;
  let responseBytesPerHour = 0;
  for (const kind of measured) {
    const perHour = (mix.get(kind.kind) ?? 0) * nodes;
    requestsPerHour += perHour;
    responseBytesPerHour += perHour * (kind.responseBytes + RESPONSE_OVERHEAD_BYTES);
  }
  const vms = Math.max(2, Math.ceil(requestsPerHour / 3600 / requestsPerSecondPerVm));
  const ec2 = vms * (PRICES.ec2M7gLargeHour * HOURS_PER_MONTH + 20 * PRICES.ebsGp3GbMonth);
  // LCUs: the larger of processed GB an hour (requests in, about the response's overhead each, and responses out) and active connections (one per nova service, 3,000 a minute per LCU).
  const processedGbPerHour = (responseBytesPerHour + requestsPerHour * RESPONSE_OVERHEAD_BYTES) / 1e9;
  const lcus = Math.max(processedGbPerHour, nodes / 3000);
  const alb = (PRICES.albHour + lcus * PRICES.albLcuHour) * HOURS_PER_MONTH;
  const rds = 2 * PRICES.rdsMysqlT4gLargeHour * HOURS_PER_MONTH + 2 * 20 * PRICES.rdsGp3GbMonth;
  const transfer = ((responseBytesPerHour * HOURS_PER_MONTH) / 1e9) * PRICES.transferOutPerGb;
  return { vms, ec2, alb, rds, transfer, total: ec2 + alb + rds + transfer };
}

/** The smallest region (in nodes) whose serverless bill is at least the self-hosted one; undefined up to `upTo`. */
export function breakEven(
  measured: MeasuredKind[],
  mix: Map<Kind, number>,
  frontDoor: FrontDoor,
  requestsPerSecondPerVm: number,
  upTo = 100_000,
): number | undefined {
  for (let nodes = 1; nodes <= upTo; nodes++) {
    if (serverlessMonthly(measured, mix, nodes, frontDoor).total >= baselineMonthly(requestsPerSecondPerVm, measured, mix, nodes).total) return nodes;
  }
  return undefined;
}
