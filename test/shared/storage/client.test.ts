/**
 * The service on DynamoDB Local behind the fault proxy: a smaller run of
 * `npm run faults`, and DynamoDB failing for good.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy, type FaultRates } from '../../../scripts/lib/dynamodb-fault-proxy.js';
import { formatReport, runFaults } from '../../../scripts/lib/fault-run.js';
import { PlacementClient } from '../../../scripts/lib/placement-client.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../../local/dynamodb-local.js';
import { useLocalService } from '../../support/local-service.js';

/** Shorter than the local default, so that slow answers outlast it; long enough for DynamoDB Local on a busy machine. */
const DYNAMODB_TIMEOUT_MS = 2000;

let database: DynamoDbLocal | undefined;
let proxy: FaultProxy | undefined;
const service = useLocalService(async () => {
  database = await startDynamoDbLocal();
  proxy = await startFaultProxy({ target: database.endpoint, slowMs: DYNAMODB_TIMEOUT_MS, seed: 12 });
  return { PLACEMENT_DYNAMODB_ENDPOINT: proxy.url, PLACEMENT_DYNAMODB_TIMEOUT_MS: String(DYNAMODB_TIMEOUT_MS) };
});
afterAll(async () => {
  await proxy?.stop();
  await database?.stop();
});
const faults = () => proxy!;

describe('claims while DynamoDB fails now and then', () => {
  it('answers no 500, loses and doubles no claim, and keeps usage equal to the allocations', async () => {
    const rates: FaultRates = { throttle: 0.0125, serverError: 0.0125, reset: 0.0125, slow: 0.0125, lostCommit: 0.05, unprocessed: 0.05 };
    const report = await runFaults(service.url, faults(), { rates, providers: 4, workers: 8, operations: 160, seed: 3 });
    console.log(formatReport(report, rates));
    const { workload, check } = report;

    for (const kind of ['throttle', 'serverError', 'reset', 'slow', 'lostCommit', 'unprocessed'] as const) {
      expect(report.injected[kind], kind).toBeGreaterThan(0);
    }
    expect(workload.statuses.get(500) ?? 0).toBe(0);
    expect(workload.serverErrors).toBe(workload.unavailableWithRetryAfter);
    expect(workload.transportErrors).toBe(0);
    expect(workload.generationConflicts).toBe(0);
    // Most writes land despite the faults (503s come only from runs of faults, or a stalled machine).
    expect(workload.succeeded).toBeGreaterThan(workload.attempted * 0.5);
    expect(check.consumerMismatches).toEqual([]);
    expect(check.usageDifferences).toEqual([]);
    expect(check.consumerSumDifferences).toEqual([]);
  }, 300_000);
});

describe('DynamoDB failing for good', () => {
  const api = () => new PlacementClient(service.url, { token: 'admin', version: '1.28' });

  async function expectUnavailable(send: () => Promise<{ status: number; headers: Headers; body: any }>): Promise<void> {
    const response = await send();
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.body.errors[0]).toMatchObject({ status: 503, title: 'Service Unavailable' });
  }

  it.each<[string, FaultRates]>([
    ['unreachable', { reset: 1 }],
    ['failing', { serverError: 1 }],
    ['throttling', { throttle: 1 }],
  ])(
    'answers 503 with Retry-After when it is %s',
    async (_, rates) => {
      const provider = randomUUID();
      expect((await api().post('/resource_providers', { name: `down-${provider}`, uuid: provider })).status).toBe(200);
      faults().setRates(rates);
      try {
        await expectUnavailable(() => api().get(`/resource_providers/${provider}`));
        await expectUnavailable(() =>
          api().put(`/resource_providers/${provider}/aggregates`, { aggregates: [], resource_provider_generation: 0 }, { version: '1.19' }),
        );
      } finally {
        faults().setRates({});
      }
      // Nothing was written by the refused change.
      expect((await api().get(`/resource_providers/${provider}`)).body.generation).toBe(0);
    },
    120_000,
  );

  it('answers 503 when every transaction is throttled, after the retry policy ran out', async () => {
    const provider = randomUUID();
    expect((await api().post('/resource_providers', { name: `throttled-${provider}`, uuid: provider })).status).toBe(200);
    faults().setRates({ throttle: 1 }, ['TransactWriteItems']);
    try {
      await expectUnavailable(() =>
        api().put(`/resource_providers/${provider}/traits`, { traits: ['HW_CPU_X86_AVX2'], resource_provider_generation: 0 }, { version: '1.6' }),
      );
    } finally {
      faults().setRates({});
    }
    expect((await api().get(`/resource_providers/${provider}/traits`, { version: '1.6' })).body.traits).toEqual([]);
  }, 120_000);
});
