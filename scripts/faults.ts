/**
 * `npm run faults`: the service on DynamoDB Local behind the fault proxy
 * (scripts/lib/dynamodb-fault-proxy.ts), a claim workload, and the check that
 * nothing was lost, doubled or answered with a 500.
 *
 * Environment (all optional):
 *   FAULT_RATE   share of DynamoDB requests that get a fault (default 0.05): each of
 *                throttle, serverError, reset and slow takes a quarter of it, and
 *                lostCommit and transactionConflict (transactions), lostWrite
 *                (single and batch writes) and unprocessed (batch reads) a
 *                quarter each on top, so every request faces at least FAULT_RATE
 *   FAULT_RATES  per-kind rates instead, e.g. throttle=0.02,lostCommit=0.05
 *   OPERATIONS   writes of the workload (2000), WORKERS concurrent clients (16),
 *   PROVIDERS    providers they share (8), SEED of the fault draws (1),
 *   SLOW_MS      typical delay of a slow answer (default: the service's DynamoDB
 *                request timeout, PLACEMENT_DYNAMODB_TIMEOUT_MS, here 3000 unless
 *                set, so that about half of the slow answers outlast it)
 * Exits non-zero when a check fails.
 */
import { FAULT_KINDS, startFaultProxy, type FaultKind, type FaultRates } from './lib/dynamodb-fault-proxy.js';
import { formatReport, runFaults } from './lib/fault-run.js';
import { startDynamoDbLocal } from '../local/dynamodb-local.js';

const number = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
};

function rates(): FaultRates {
  const explicit = process.env.FAULT_RATES;
  if (explicit) {
    const parsed: FaultRates = {};
    for (const entry of explicit.split(',')) {
      const [kind, value] = entry.split('=');
      if (!FAULT_KINDS.includes(kind as FaultKind)) throw new Error(`FAULT_RATES: unknown kind ${kind}; kinds: ${FAULT_KINDS.join(', ')}`);
      parsed[kind as FaultKind] = Number(value);
    }
    return parsed;
  }
  const quarter = number('FAULT_RATE', 0.05) / 4;
  return {
    throttle: quarter,
    serverError: quarter,
    reset: quarter,
    slow: quarter,
    lostCommit: quarter,
    transactionConflict: quarter,
    lostWrite: quarter,
    unprocessed: quarter,
  };
}

// The timeout the service has against DynamoDB in AWS, not its generous default for DynamoDB Local.
process.env.PLACEMENT_DYNAMODB_TIMEOUT_MS ??= '3000';
const database = await startDynamoDbLocal();
const { dynamoDbTimeoutMs } = (await import('../shared/config.js')).config;
const faultRates = rates();
const proxy = await startFaultProxy({ target: database.endpoint, seed: number('SEED', 1), slowMs: number('SLOW_MS', dynamoDbTimeoutMs) });
process.env.PLACEMENT_DYNAMODB_ENDPOINT = proxy.url;
const { startLocalService } = await import('../local/service.js');
const service = await startLocalService({ port: 0 });
let failed: boolean;
try {
  const report = await runFaults(service.url, proxy, {
    rates: faultRates,
    providers: number('PROVIDERS', 8),
    workers: number('WORKERS', 16),
    operations: number('OPERATIONS', 2000),
    seed: number('SEED', 1),
  });
  console.log(formatReport(report, faultRates));
  const { workload, check } = report;
  failed =
    workload.serverErrors !== workload.unavailableWithRetryAfter ||
    workload.generationConflicts > 0 ||
    workload.transportErrors > 0 ||
    (workload.statuses.get(500) ?? 0) > 0 ||
    check.consumerMismatches.length + check.usageDifferences.length + check.consumerSumDifferences.length + check.entryDisagreements.length > 0;
} finally {
  await service.stop();
  await proxy.stop();
  await database.stop();
}
process.exit(failed ? 1 : 0);
