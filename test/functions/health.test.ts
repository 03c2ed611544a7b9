/**
 * GET /health and placement-admin health (issue 45): how the background
 * work is doing, read through the API. The history's lag comes from the
 * sweeper's heartbeat through the change stream: up to date while the
 * history reads, behind by as long as it has stopped reading. What waits for
 * the sweeper: a multi-step change whose writer gave up is there, with how
 * long it has waited, until a sweep finishes it. Admins only.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import type { Health } from '../../admin/commands/health.js';
import { marshall } from '@aws-sdk/util-dynamodb';
import { handler as changeSweeper } from '../../functions/change-sweeper.js';
import { HEARTBEAT_STOPPED_AFTER_SECONDS } from '../../functions/health.js';
import { encodeHistoryHeartbeat, HEARTBEAT_LANES } from '../../shared/storage/items/history-heartbeat.js';
import { reshapeVgpuToChild } from '../../scripts/lib/big-changes.js';
import { runAdmin } from '../support/admin.js';
import { useServiceBehindFaultProxy } from '../support/fault-proxy-service.js';
import { isFence, nth } from '../support/journal-requests.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { useDynamoDbLocalOfItsOwn } from '../support/tables.js';

const RELEASE = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

const healthOf = async (url: string): Promise<Health> => {
  const response = await new PlacementClient(url, { version: '1.39' }).get('/health');
  expect(response.status, response.text).toBe(200);
  return response.body as Health;
};

/** Waits (a minute at most) until the service's health passes `check`; returns it. */
async function healthOnce(url: string, check: (health: Health) => boolean): Promise<Health> {
  const deadline = Date.now() + 60_000;
  let health = await healthOf(url);
  while (!check(health) && Date.now() < deadline) {
    await sleep(250);
    health = await healthOf(url);
  }
  return health;
}

async function claim(url: string): Promise<void> {
  const api = new PlacementClient(url, { version: '1.39' });
  const [node, consumer] = [randomUUID(), randomUUID()];
  expect((await api.post('/resource_providers', { uuid: node, name: `node-${node}` })).status).toBe(200);
  expect((await api.put(`/resource_providers/${node}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } })).status).toBe(200);
  const body = { allocations: { [node]: { resources: { VCPU: 1 } } }, project_id: 'p', user_id: 'u', consumer_generation: null, consumer_type: 'INSTANCE' };
  expect((await api.put(`/allocations/${consumer}`, body)).status).toBe(204);
}

describe('the history read through the stream, and then stopped', () => {
  // The history reads a change stream: a DynamoDB Local of this file's own.
  useDynamoDbLocalOfItsOwn();
  const running: ServiceProcess[] = [];
  /** A service on the file's table, sweeping every second (each sweep a heartbeat), its history read every second or never. */
  const start = async (history: 'reading' | 'stopped') => {
    const service = await startServiceProcess({
      dynamoDbEndpoint: process.env.PLACEMENT_DYNAMODB_ENDPOINT,
      environment: { PLACEMENT_LOCAL_SWEEP_SECONDS: '1', PLACEMENT_LOCAL_HISTORY_SECONDS: history === 'reading' ? '1' : '0' },
    });
    running.push(service);
    return service;
  };
  afterAll(async () => {
    for (const service of running) await service.stop();
  });
  let stoppedAt = 0;

  it('all well: the history up to date, the sweeper ran, nothing waiting; placement-admin health says so', async () => {
    const service = await start('reading');
    await claim(service.url);
    const health = await healthOnce(service.url, (h) => h.history.behind_seconds === 0 && h.sweeper.last_run_at !== null);
    expect(health).toMatchObject({
      release: RELEASE,
      history: { behind_seconds: 0, behind_unknown_because: null, read_by_release: RELEASE, newest_change_read: health.history.newest_change_made },
      sweeper: { release: RELEASE },
      waiting_for_sweeper: { changes: { count: 0, oldest: null }, count_changes: { count: 0, oldest: null }, entry_cleanups: { count: 0, oldest: null } },
    });
    const run = await runAdmin(['health', '--url', service.url]);
    expect(run.status, run.stderr).toBe(0);
    // Up to date, or a heartbeat behind if one came between the two asks.
    expect(run.stdout).toMatch(/^allocation history: read changes up to \S+ \(at \S+, release \S+\): (up to date|[\d.]+ s behind)$/m);
    expect(run.stdout).toMatch(/^change sweeper: last ran at \S+ \(release \S+\)$/m);
    expect(run.stdout).toContain("heartbeat lanes (32, spread over the stream's shards): none behind the others");
    expect(run.stdout).toContain('unfinished multi-step changes: none waiting');
    const json = await runAdmin(['health', '--url', service.url, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ release: RELEASE, history: { read_by_release: RELEASE } });
    await service.stop();
    stoppedAt = Date.now();
  });

  it('the history stopped while changes are made: behind by about the time it has been stopped', async () => {
    const service = await start('stopped');
    const before = await healthOf(service.url);
    await claim(service.url);
    await sleep(4000);
    const health = await healthOnce(service.url, (h) => (h.history.behind_seconds ?? 0) >= 3);
    // Its position is where the stopped reader left it; the heartbeats go on, and the lag with them (to within a sweep).
    expect(health.history.newest_change_read).toBe(before.history.newest_change_read);
    expect(health.history.behind_seconds).toBeGreaterThanOrEqual(3);
    expect(health.history.behind_seconds).toBeLessThanOrEqual((Date.now() - stoppedAt) / 1000 + 2);
    const run = await runAdmin(['health', '--url', service.url]);
    expect(run.stdout).toMatch(/^allocation history: read changes up to .*: [\d.]+ s behind$/m);
  });
});

describe("a stream shard stuck, and the sweeper's heartbeat stopped", () => {
  // No sweeps and no stream reader: the test writes the heartbeats and gives the history function their records itself.
  const { service } = useServiceBehindFaultProxy({}, { PLACEMENT_LOCAL_SWEEP_SECONDS: '0' });
  // Modules of their own: their DynamoDB client goes to this block's service's proxy, the file's others to theirs.
  let writeHistoryHeartbeat: typeof import('../../shared/storage/history/stream.js').writeHistoryHeartbeat;
  let recordHistory: typeof import('../../functions/allocation-history.js').handler;
  beforeAll(async () => {
    vi.resetModules();
    ({ writeHistoryHeartbeat } = await import('../../shared/storage/history/stream.js'));
    ({ handler: recordHistory } = await import('../../functions/allocation-history.js'));
  });

  /** The history function given the heartbeat records of `lanes`, as the batches of their shards would bring them. */
  const readLanes = (at: string, lanes: number[]) =>
    recordHistory({
      Records: lanes.map((lane, index) => ({
        dynamodb: { NewImage: marshall(encodeHistoryHeartbeat({ at, release: RELEASE }, lane)) as never, SequenceNumber: `${Date.parse(at)}${index}` },
      })),
    });
  const ALL = Array.from({ length: HEARTBEAT_LANES }, (_, lane) => lane);

  it('names the lane whose shard is stuck, and takes the lag from it', async () => {
    const base = Date.now();
    const earlier = new Date(base - 120_000).toISOString();
    await writeHistoryHeartbeat({ at: earlier, release: RELEASE });
    await readLanes(earlier, ALL);
    const now = new Date(base).toISOString();
    await writeHistoryHeartbeat({ at: now, release: RELEASE });
    // Lane 7's shard is not read any more; every other shard's batch comes.
    await readLanes(
      now,
      ALL.filter((lane) => lane !== 7),
    );
    const health = await healthOf(service.url);
    // The newest change read is the newest heartbeat: one position alone would say up to date.
    expect(health.history.newest_change_read).toBe(now);
    expect(health.history.behind_seconds).toBe(120);
    expect(health.history.lanes.filter((lane) => lane.behind_seconds !== 0)).toEqual([{ lane: 7, newest_heartbeat_read: earlier, behind_seconds: 120 }]);
    const run = await runAdmin(['health', '--url', service.url]);
    expect(run.stdout).toMatch(/^allocation history: read changes up to .*: 120 s behind$/m);
    expect(run.stdout).toContain(`heartbeat lanes (32, spread over the stream's shards): lane 7 read to ${earlier} (120 s behind)`);
  });

  it("says the lag is not known once the sweeper's heartbeat has stopped, though every lane read the last one", async () => {
    const last = new Date(Date.now() - (HEARTBEAT_STOPPED_AFTER_SECONDS + 60) * 1000).toISOString();
    await writeHistoryHeartbeat({ at: last, release: RELEASE });
    await readLanes(last, ALL);
    const health = await healthOf(service.url);
    expect(health.history.lanes.every((lane) => lane.behind_seconds === 0)).toBe(true);
    expect(health.history.behind_seconds).toBeNull();
    expect(health.history.behind_unknown_because).toMatch(/^the sweeper's heartbeat stopped 3\d\d(\.\d)? s ago$/);
    const run = await runAdmin(['health', '--url', service.url]);
    expect(run.stdout).toMatch(/^allocation history: read changes up to .*: not known \(the sweeper's heartbeat stopped [\d.]+ s ago\)$/m);
  });
});

describe('what waits for the sweeper', () => {
  // A short lease, so that a writer that gave up waits for the sweeper soon; no sweeps but the test's.
  const LEASE_MS = 2000;
  const { service, proxy } = useServiceBehindFaultProxy(
    { seed: 45 },
    { PLACEMENT_CHANGE_LEASE_MS: String(LEASE_MS), PLACEMENT_DYNAMODB_MAX_ATTEMPTS: '1', PLACEMENT_RETRIES: '2', PLACEMENT_LOCAL_SWEEP_SECONDS: '0' },
  );

  it('shows a multi-step change whose writer gave up, how long it has waited, and none once a sweep finished it', async () => {
    const placement = new PlacementClient(service.url, { timeoutMs: 300_000 });
    const plan = reshapeVgpuToChild.plan(120);
    await reshapeVgpuToChild.prepare(placement, plan);
    // Every write fails from the 100th fence on: the writer gives up with its change pending.
    const failing = proxy().faultFrom(nth(100, isFence), { serverError: 1 }, ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
    expect((await reshapeVgpuToChild.change(placement, plan)).status).toBe(503);
    await failing;
    proxy().setRates({});

    await sleep(LEASE_MS + 1500);
    const waiting = await healthOf(service.url);
    expect(waiting.waiting_for_sweeper.changes.count).toBe(1);
    expect(waiting.waiting_for_sweeper.changes.oldest!.seconds).toBeGreaterThanOrEqual(1);
    const run = await runAdmin(['health', '--url', service.url]);
    expect(run.stdout).toMatch(/^unfinished multi-step changes: 1 waiting, the oldest \S+ for [\d.]+ s \(since \S+\)$/m);

    const sweep = await changeSweeper();
    expect(sweep.finished).toBe(1);
    expect(sweep.backlogSeconds).toBe(0);
    expect((await healthOf(service.url)).waiting_for_sweeper.changes).toEqual({ count: 0, oldest: null });
  });

  it('is for admins only', async () => {
    const response = await new PlacementClient(service.url, { token: 'user', version: '1.39' }).get('/health');
    expect(response.status).toBe(403);
  });
});
