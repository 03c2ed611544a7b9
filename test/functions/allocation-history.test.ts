/**
 * The allocation history (functions/allocation-history.ts fed by DynamoDB
 * Local's change stream, functions/history.ts answering): a scripted life
 * of consumers, each change one event with its request and commit time, a
 * 409 none, and a project's resource-hours computed by hand from those
 * events' times.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { HistoryEvent as Event } from '../../admin/commands/history.js';
import { runAdmin } from '../support/admin.js';
import { useLocalService } from '../support/local-service.js';
import { useDynamoDbLocalOfItsOwn } from '../support/tables.js';

useDynamoDbLocalOfItsOwn();
const service = useLocalService(() => ({ PLACEMENT_LOCAL_HISTORY_SECONDS: '1' }));
const api = service.client({ token: 'admin', version: '1.39' });
const PROJECT = `history-${randomUUID()}`;

/** The request's answer, expected below 300, with its request id. */
async function ok(method: string, path: string, body?: unknown) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  return { body: response.body, requestId: response.headers.get('x-openstack-request-id')! };
}

/** The events of a history route once there are `count` of them (the stream is read every second). */
async function eventsOnce(path: string, count: number): Promise<Event[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { body } = await ok('GET', path);
    if (body.events.length >= count || Date.now() > deadline) return body.events;
    await sleep(250);
  }
}

const claim = (allocations: Record<string, Record<string, number>>, generation: number | null, type = 'INSTANCE') => ({
  allocations: Object.fromEntries(Object.entries(allocations).map(([uuid, resources]) => [uuid, { resources }])),
  project_id: PROJECT,
  user_id: 'history-user',
  consumer_generation: generation,
  consumer_type: type,
});

async function host(inventories: Record<string, number>, parent?: string): Promise<string> {
  const uuid = randomUUID();
  await ok('POST', '/resource_providers', { uuid, name: `host-${uuid}`, ...(parent ? { parent_provider_uuid: parent } : {}) });
  const body = Object.fromEntries(Object.entries(inventories).map(([resourceClass, total]) => [resourceClass, { total }]));
  await ok('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories: body });
  return uuid;
}

describe('a scripted life of consumers, as `placement-admin history` reads it', () => {
  it('records each change once, with its request and commit time, in commit order; a 409 records nothing', async () => {
    const a = await host({ VCPU: 64, MEMORY_MB: 65536, VGPU: 8 });
    const b = await host({ VCPU: 64, MEMORY_MB: 65536 });
    const numa = await host({}, a);
    const instance = randomUUID();
    const migration = randomUUID();
    const started = new Date().toISOString();

    const claimed = await ok('PUT', `/allocations/${instance}`, claim({ [a]: { VCPU: 2, MEMORY_MB: 2048, VGPU: 1 } }, null));
    const resized = await ok('PUT', `/allocations/${instance}`, claim({ [a]: { VCPU: 4, MEMORY_MB: 4096, VGPU: 1 } }, 1));
    // nova's move: the migration holds the source, the instance the destination, in one request.
    const moved = await ok('POST', '/allocations', {
      [instance]: claim({ [b]: { VCPU: 4, MEMORY_MB: 4096 } }, 2),
      [migration]: claim({ [a]: { VCPU: 4, MEMORY_MB: 4096, VGPU: 1 } }, null, 'MIGRATION'),
    });
    const stale = await api('PUT', `/allocations/${instance}`, claim({ [b]: { VCPU: 8 } }, 1));
    expect(stale.status).toBe(409);
    // The VGPU moves from the host to its child, and the migration's with it.
    const { body: aInventories } = await ok('GET', `/resource_providers/${a}/inventories`);
    const reshaped = await ok('POST', '/reshaper', {
      inventories: {
        [a]: { resource_provider_generation: aInventories.resource_provider_generation, inventories: { VCPU: { total: 64 }, MEMORY_MB: { total: 65536 } } },
        [numa]: { resource_provider_generation: 1, inventories: { VGPU: { total: 8 } } },
      },
      allocations: { [migration]: claim({ [a]: { VCPU: 4, MEMORY_MB: 4096 }, [numa]: { VGPU: 1 } }, 1, 'MIGRATION') },
    });
    const freedMigration = await ok('DELETE', `/allocations/${migration}`);
    const deleted = await ok('DELETE', `/allocations/${instance}`);

    const instanceEvents = await eventsOnce(`/history/allocations/${instance}`, 4);
    expect(instanceEvents.map((event) => [event.request_id, event.before, event.after])).toEqual([
      [claimed.requestId, {}, { [a]: { MEMORY_MB: 2048, VCPU: 2, VGPU: 1 } }],
      [resized.requestId, { [a]: { MEMORY_MB: 2048, VCPU: 2, VGPU: 1 } }, { [a]: { MEMORY_MB: 4096, VCPU: 4, VGPU: 1 } }],
      [moved.requestId, { [a]: { MEMORY_MB: 4096, VCPU: 4, VGPU: 1 } }, { [b]: { MEMORY_MB: 4096, VCPU: 4 } }],
      [deleted.requestId, { [b]: { MEMORY_MB: 4096, VCPU: 4 } }, {}],
    ]);
    for (const event of instanceEvents) {
      expect([event.consumer, event.project_id, event.user_id, event.consumer_type]).toEqual([instance, PROJECT, 'history-user', 'INSTANCE']);
    }
    // Commit times: in order, within the script, to the millisecond.
    const times = instanceEvents.map((event) => event.at);
    expect([...times].sort()).toEqual(times);
    expect(times[0]! >= started && times.at(-1)! <= new Date().toISOString()).toBe(true);
    expect(times.every((time) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(time))).toBe(true);

    const migrationEvents = await eventsOnce(`/history/allocations/${migration}`, 3);
    expect(migrationEvents.map((event) => [event.request_id, event.consumer_type, event.after])).toEqual([
      [moved.requestId, 'MIGRATION', { [a]: { MEMORY_MB: 4096, VCPU: 4, VGPU: 1 } }],
      [reshaped.requestId, 'MIGRATION', { [a]: { MEMORY_MB: 4096, VCPU: 4 }, [numa]: { VGPU: 1 } }],
      [freedMigration.requestId, 'MIGRATION', {}],
    ]);

    // A provider's history: every consumer that held resources on it, before or after.
    const onB = await eventsOnce(`/history/resource_providers/${b}/allocations`, 2);
    expect(onB.map((event) => event.request_id)).toEqual([moved.requestId, deleted.requestId]);
    // A range: from the resize on, before the delete.
    const range = await ok('GET', `/history/allocations/${instance}?since=${times[1]}&until=${times[3]}`);
    expect(range.body.events.map((event: Event) => event.request_id)).toEqual([resized.requestId, moved.requestId]);
    expect(range.body.history_stream.newest_change_read).not.toBeNull();

    // Usage, by hand from the events' times: the instance held 2 VCPU from the claim to the resize, then 4 until its delete;
    // the migration 4 from the move until its delete.
    const ms = (time: string) => Date.parse(time);
    const [claimAt, resizeAt, , deleteAt] = times.map(ms);
    const [moveAt, , freedAt] = migrationEvents.map((event) => ms(event.at));
    const vcpuHours = (2 * (resizeAt! - claimAt!) + 4 * (deleteAt! - resizeAt!) + 4 * (freedAt! - moveAt!)) / 3_600_000;
    const until = new Date(Date.now() + 1000).toISOString();
    const usage = await ok('GET', `/history/usages?project_id=${PROJECT}&since=${started}&until=${until}`);
    expect(usage.body.project_id).toBe(PROJECT);
    expect(usage.body.resource_hours.VCPU).toBeCloseTo(vcpuHours, 5);
    expect(usage.body.resource_hours.VGPU).toBeGreaterThan(0);

    // What placement-admin prints: with --json exactly the events, oldest first, and the usage in the form.
    const printed = await runAdmin(['history', '--url', service.url, '--consumer', instance, '--json']);
    expect(printed.status, printed.stderr).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual({ events: instanceEvents });
    expect(Object.keys(instanceEvents[0]!)).toEqual(['at', 'consumer', 'project_id', 'user_id', 'consumer_type', 'request_id', 'before', 'after']);
    expect(printed.stderr).toMatch(/the change stream was read to changes up to \d{4}-/);
    const table = await runAdmin(['history', '--url', service.url, '--provider', b]);
    expect(table.stdout.split('\n').filter((line) => line.includes(`consumer ${instance}`))).toHaveLength(2);
    const summed = await runAdmin(['usage', '--url', service.url, '--project', PROJECT, '--since', started, '--until', until, '--json']);
    expect(summed.status, summed.stderr).toBe(0);
    expect(JSON.parse(summed.stdout)).toEqual({ project_id: PROJECT, since: started, until, resourceHours: usage.body.resource_hours });
    expect((await runAdmin(['history', '--url', service.url])).status).toBe(2);
  });

  it('a POST /allocations of 200 consumers (a multi-step change): 200 events, one request', async () => {
    const node = await host({ VCPU: 1000 });
    const consumers = Array.from({ length: 200 }, () => randomUUID());
    const posted = await ok('POST', '/allocations', Object.fromEntries(consumers.map((uuid) => [uuid, claim({ [node]: { VCPU: 1 } }, null)])));
    const events = await eventsOnce(`/history/resource_providers/${node}/allocations`, 200);
    expect(events).toHaveLength(200);
    expect(new Set(events.map((event) => event.consumer))).toEqual(new Set(consumers));
    expect(new Set(events.map((event) => event.request_id))).toEqual(new Set([posted.requestId]));

    // In pages of 64: each page's next link gives the following page, the last none; together, the whole listing.
    const pages: Event[][] = [];
    for (let path: string | undefined = `/history/resource_providers/${node}/allocations?limit=64`; path !== undefined;) {
      const { body } = await ok('GET', path);
      pages.push(body.events);
      path = body.links.find((link: { rel: string }) => link.rel === 'next')?.href;
    }
    expect(pages.map((page) => page.length)).toEqual([64, 64, 64, 8]);
    // A listing that ends on a full page says so: no next link.
    const whole = await ok('GET', `/history/resource_providers/${node}/allocations?limit=200`);
    expect([whole.body.events.length, whole.body.links]).toEqual([200, []]);
    expect(pages.flat()).toEqual(events);
    // placement-admin follows the pages.
    const printed = await runAdmin(['history', '--url', service.url, '--provider', node, '--page-size', '64', '--json']);
    expect(printed.status, printed.stderr).toBe(0);
    expect(JSON.parse(printed.stdout).events).toEqual(events);
  });

  it('reads on past a consumer left with no allocations (an empty map, which DynamoDB Local streams untyped)', async () => {
    const node = await host({ VCPU: 8 });
    await ok('PUT', `/allocations/${randomUUID()}`, {
      allocations: {},
      project_id: PROJECT,
      user_id: 'history-user',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    });
    const instance = randomUUID();
    await ok('PUT', `/allocations/${instance}`, claim({ [node]: { VCPU: 1 } }, null));
    const events = await eventsOnce(`/history/resource_providers/${node}/allocations`, 1);
    expect(events.map((event) => event.consumer)).toEqual([instance]);
  });

  it('answers 400 for a time that is not one, and a range that is empty; the routes are for admins', async () => {
    const uuid = randomUUID();
    expect((await api('GET', `/history/allocations/${uuid}?since=yesterday`)).status).toBe(400);
    expect((await api('GET', `/history/allocations/${uuid}?since=2026-02-30T00:00:00Z`)).status).toBe(400);
    const empty = await api('GET', `/history/allocations/${uuid}?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z`);
    expect(empty.status).toBe(400);
    expect(empty.body.errors[0].detail).toContain('Invalid range: since (2026-11-02T00:00:00.000Z) is not before until (2026-11-01T00:00:00.000Z)');
    expect((await api('GET', '/history/allocations/not-a-uuid')).status).toBe(400);
    for (const page of ['limit=0', 'limit=1001', 'limit=ten', 'marker=zz', 'marker=2026-11-01T00:00:00.000Z%230001&until=2026-11-01T00:00:00Z']) {
      const response = await api('GET', `/history/allocations/${uuid}?${page}`);
      expect(response.status, page).toBe(400);
    }
    expect((await api('GET', '/history/usages')).status).toBe(400);
    const member = service.client({ token: 'member', version: '1.39' });
    expect((await member('GET', `/history/allocations/${uuid}`)).status).toBe(403);
  });
});
