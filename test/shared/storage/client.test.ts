/**
 * The service on DynamoDB Local behind the fault proxy: a smaller run of
 * `npm run faults`, and DynamoDB failing for good.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as providersHandler } from '../../../functions/resource-providers.js';
import type { FaultRates } from '../../../scripts/lib/dynamodb-fault-proxy.js';
import { formatReport, runFaults } from '../../../scripts/lib/fault-run.js';
import { PlacementClient } from '../../../admin/placement-client.js';
import { useServiceBehindFaultProxy } from '../../support/fault-proxy-service.js';

/** Shorter than the local default, so that slow answers outlast it; long enough for DynamoDB Local on a busy machine. */
const DYNAMODB_TIMEOUT_MS = 2000;

const { service, proxy: faults } = useServiceBehindFaultProxy(
  { slowMs: DYNAMODB_TIMEOUT_MS, seed: 12 },
  // No sweeps but the first: what the proxy counts is the tests' own requests.
  { PLACEMENT_DYNAMODB_TIMEOUT_MS: String(DYNAMODB_TIMEOUT_MS), PLACEMENT_LOCAL_SWEEP_SECONDS: '0' },
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

  /** Sends `change` with every transaction answered by `fault`: how many it sent, and how long it took. */
  async function everyTransaction(fault: FaultRates, change: () => Promise<unknown>): Promise<{ transactions: number; ms: number }> {
    faults().setRates(fault, ['TransactWriteItems']);
    const before = faults().requests().TransactWriteItems ?? 0;
    const started = performance.now();
    try {
      await change();
    } finally {
      faults().setRates({});
    }
    return { transactions: (faults().requests().TransactWriteItems ?? 0) - before, ms: performance.now() - started };
  }

  it('answers 503 when every transaction is throttled, having waited as the SDK waits out throttling, as often as it tries a request', async () => {
    const provider = randomUUID();
    expect((await api().post('/resource_providers', { name: `throttled-${provider}`, uuid: provider })).status).toBe(200);
    const sent = await everyTransaction({ throttle: 1 }, () =>
      expectUnavailable(() =>
        api().put(`/resource_providers/${provider}/traits`, { traits: ['HW_CPU_X86_AVX2'], resource_provider_generation: 0 }, { version: '1.6' }),
      ),
    );
    console.log(`every transaction throttled: ${sent.transactions} sent in ${sent.ms.toFixed(0)} ms`);
    // config.dynamoDbMaxAttempts (4): the conflict policy's waits (10 to 200 ms) sent 11.
    expect(sent.transactions).toBe(4);
    expect((await api().get(`/resource_providers/${provider}/traits`, { version: '1.6' })).body.traits).toEqual([]);
  }, 120_000);

  it('answers 503 at once to a transaction cancelled without reasons (it was resent ten times, then a 409)', async () => {
    const provider = randomUUID();
    expect((await api().post('/resource_providers', { name: `unexplained-${provider}`, uuid: provider })).status).toBe(200);
    const sent = await everyTransaction({ reasonlessCancellation: 1 }, () =>
      expectUnavailable(() =>
        api().put(`/resource_providers/${provider}/traits`, { traits: ['HW_CPU_X86_AVX2'], resource_provider_generation: 0 }, { version: '1.6' }),
      ),
    );
    expect(sent.transactions).toBe(1);
    expect((await api().get(`/resource_providers/${provider}/traits`, { version: '1.6' })).body.traits).toEqual([]);
  });

  it("answers 503 before the invocation's deadline, and sends DynamoDB nothing after it: the request and its retries end with it", async () => {
    const provider = randomUUID();
    expect((await api().post('/resource_providers', { name: `late-${provider}`, uuid: provider })).status).toBe(200);
    const event = {
      version: '2.0',
      routeKey: '$default',
      rawPath: `/resource_providers/${provider}`,
      rawQueryString: '',
      headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' },
      isBase64Encoded: false,
      requestContext: { http: { method: 'GET', path: `/resource_providers/${provider}`, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' } },
    } as unknown as APIGatewayProxyEventV2;
    const context = { awsRequestId: 'late', getRemainingTimeInMillis: () => 1_500 } as unknown as Context;
    // The reads this request sends: the storage format record, the provider.
    const reads = () => faults().requests().GetItem ?? 0;
    // Every answer 1 to 3 s late, past each attempt's 2 s: without the deadline, attempts went on after the 503.
    faults().setRates({ slow: 1 });
    try {
      const started = performance.now();
      const response = await providersHandler(event, context);
      const answeredMs = performance.now() - started;
      const readByTheAnswer = reads();
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      console.log(
        `deadline 1500 ms: answered ${(response as { statusCode: number }).statusCode} in ${answeredMs.toFixed(0)} ms; reads after it: ${reads() - readByTheAnswer}`,
      );
      expect(response).toMatchObject({ statusCode: 503 });
      expect(answeredMs).toBeLessThan(1_500);
      expect(reads()).toBe(readByTheAnswer);
    } finally {
      faults().setRates({});
    }
  }, 60_000);
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
