/**
 * One fault-injection run: providers set up with no faults, the claim
 * workload with faults injected by the proxy, then every consumer and
 * provider read back with no faults. Shared by `npm run faults` and its
 * integration test.
 */
import type { FaultProxy, FaultRates } from './dynamodb-fault-proxy.js';
import { FAULT_KINDS } from './dynamodb-fault-proxy.js';
import { checkClaims, createProviders, runClaimWorkload, type CheckResult, type WorkloadResult } from './claim-workload.js';
import { PlacementClient } from '../../admin/placement-client.js';

export interface FaultRunOptions {
  rates: FaultRates;
  providers: number;
  workers: number;
  operations: number;
  seed?: number;
}

export interface FaultRunReport {
  injected: Record<string, number>;
  /** DynamoDB requests the proxy saw during the workload, by operation. */
  requests: Record<string, number>;
  workload: WorkloadResult;
  check: CheckResult;
  seconds: number;
}

const subtract = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));

export async function runFaults(serviceUrl: string, proxy: FaultProxy, options: FaultRunOptions): Promise<FaultRunReport> {
  const api = new PlacementClient(serviceUrl, { token: 'admin', version: '1.28' });
  proxy.setRates({});
  const providers = await createProviders(api, options.providers);
  const injectedBefore = proxy.injected();
  const requestsBefore = proxy.requests();
  const started = performance.now();
  proxy.setRates(options.rates);
  let workload: WorkloadResult;
  try {
    workload = await runClaimWorkload(api, providers, { workers: options.workers, operations: options.operations, seed: options.seed });
  } finally {
    proxy.setRates({});
  }
  const seconds = (performance.now() - started) / 1000;
  const injected = subtract(proxy.injected(), injectedBefore);
  const requests = subtract(proxy.requests(), requestsBefore);
  return { injected, requests, workload, check: await checkClaims(api, workload), seconds };
}

export function formatReport(report: FaultRunReport, rates: FaultRates): string {
  const { workload, check } = report;
  const totalRequests = Object.values(report.requests).reduce((sum, n) => sum + n, 0);
  const totalFaults = Object.values(report.injected).reduce((sum, n) => sum + n, 0);
  const lines = [
    `fault injection: ${totalFaults} faults in ${totalRequests} DynamoDB requests (${((100 * totalFaults) / Math.max(totalRequests, 1)).toFixed(1)}%), ${report.seconds.toFixed(1)} s`,
    '',
    '| fault | rate per applicable request | injected |',
    '|---|---|---|',
    ...FAULT_KINDS.map((kind) => `| ${kind} | ${rates[kind] ?? 0} | ${report.injected[kind] ?? 0} |`),
    '',
    `DynamoDB requests: ${Object.entries(report.requests)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([operation, n]) => `${operation} ${n}`)
      .join(', ')}`,
    `claims attempted ${workload.attempted}, succeeded ${workload.succeeded}`,
    `answers by status: ${[...workload.statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status} x${n}`)
      .join(', ')}`,
    `409 codes: ${[...workload.conflictCodes].map(([code, n]) => `${code} x${n}`).join(', ') || 'none'}; consumer generation conflicts (a landed write misread): ${workload.generationConflicts}`,
    `5xx answers: ${workload.serverErrors} (503 with Retry-After: ${workload.unavailableWithRetryAfter}); no answer at all: ${workload.transportErrors}`,
    `consumers checked ${workload.consumers.size}: holding what no answer allows: ${check.consumerMismatches.length}`,
    `usage check: ${check.usageDifferences.length} differences between usage and the provider's allocations, ` +
      `${check.consumerSumDifferences.length} between usage and what the consumers hold, ${check.entryDisagreements.length} entries disagreeing with their providers`,
    ...check.consumerMismatches.slice(0, 5).map((line) => `  consumer ${line}`),
    ...check.usageDifferences.slice(0, 5).map((line) => `  usage ${line}`),
    ...check.consumerSumDifferences.slice(0, 5).map((line) => `  held ${line}`),
    ...check.entryDisagreements.slice(0, 5).map((line) => `  entry ${line}`),
  ];
  return lines.join('\n');
}
