/**
 * The service on DynamoDB Local behind the fault proxy: a smaller run of
 * `npm run faults`, and DynamoDB failing for good.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FaultRates } from '../../../scripts/lib/dynamodb-fault-proxy.js';
import { formatReport, runFaults } from '../../../scripts/lib/fault-run.js';
import { PlacementClient } from '../../../admin/placement-client.js';
import { useServiceBehindFaultProxy } from '../../support/fault-proxy-service.js';

/** Shorter than the local default, so that slow answers outlast it; long enough for DynamoDB Local on a busy machine. */
const DYNAMODB_TIMEOUT_MS = 2000;

const { service, proxy: faults } = useServiceBehindFaultProxy(
  { slowMs: DYNAMODB_TIMEOUT_MS, seed: 12 },
  { PLACEMENT_DYNAMODB_TIMEOUT_MS: String(DYNAMODB_TIMEOUT_MS) },
);

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
    expect(check.entryDisagreements).toEqual([]);
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

describe('a claim whose commit landed but whose answer was lost', () => {
  const api = () => new PlacementClient(service.url, { token: 'admin', version: '1.28' });
  const isTransaction = (operation: string) => operation === 'TransactWriteItems';

  it.each([
    ['a conflict', 'transactionConflict'],
    ['throttling', 'throttle'],
  ] as const)(
    'is answered as landed when the resend meets %s',
    async (_, second) => {
      const provider = randomUUID();
      const consumer = randomUUID();
      expect((await api().post('/resource_providers', { name: `lost-${provider}`, uuid: provider })).status).toBe(200);
      const inventory = { inventories: { VCPU: { total: 16 } }, resource_provider_generation: 0 };
      expect((await api().put(`/resource_providers/${provider}/inventories`, inventory)).status).toBe(200);
      const claim = (vcpus: number, generation: number | null) => ({
        allocations: { [provider]: { resources: { VCPU: vcpus } } },
        project_id: randomUUID(),
        user_id: randomUUID(),
        consumer_generation: generation,
      });
      const before = faults().injected();

      // The commit lands and its connection is cut (it is sent again, same token); that resend is cancelled.
      const faulted = faults().faultsInTurn(isTransaction, ['lostCommit', second]);
      expect((await api().put(`/allocations/${consumer}`, claim(2, null))).status).toBe(204);
      await faulted;
      const moved = faults().faultsInTurn(isTransaction, ['lostCommit', second]);
      expect((await api().put(`/allocations/${consumer}`, claim(3, 1))).status).toBe(204);
      await moved;

      const after = faults().injected();
      expect(after.lostCommit - before.lostCommit).toBe(2);
      expect(after[second] - before[second]).toBe(2);
      const held = await api().get(`/allocations/${consumer}`);
      expect(held.body).toMatchObject({ consumer_generation: 2, allocations: { [provider]: { resources: { VCPU: 3 } } } });
      const usages = await api().get(`/resource_providers/${provider}/usages`);
      expect(usages.body).toMatchObject({ resource_provider_generation: 3, usages: { VCPU: 3 } });
    },
    60_000,
  );
});
