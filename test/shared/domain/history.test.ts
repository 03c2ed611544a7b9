import { describe, expect, it } from 'vitest';
import { allocationEvent, resourceHours, type AllocationEvent, type Holdings } from '../../../shared/domain/history.js';
import type { Consumer } from '../../../shared/domain/model.js';

const HOST_A = 'aaaaaaaa-0000-4000-8000-000000000000';
const HOST_B = 'bbbbbbbb-0000-4000-8000-000000000000';

function consumer(fields: Partial<Consumer> = {}): Consumer {
  return {
    uuid: 'c0000000-0000-4000-8000-000000000000',
    projectId: 'p1',
    userId: 'u1',
    generation: 1,
    consumerType: 'INSTANCE',
    allocations: { [HOST_A]: { VCPU: 2 } },
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-01T00:00:00.000Z',
    ...fields,
  };
}

const stamp = { at: '2026-11-01T01:00:00.000Z', requestId: 'req-1' };

describe('allocationEvent', () => {
  it('a claim: nothing before, the allocations after, who the consumer is and the stamp', () => {
    expect(allocationEvent(undefined, consumer(), stamp)).toEqual({
      at: stamp.at,
      requestId: 'req-1',
      consumer: 'c0000000-0000-4000-8000-000000000000',
      projectId: 'p1',
      userId: 'u1',
      consumerType: 'INSTANCE',
      previousProjectId: null,
      before: {},
      after: { [HOST_A]: { VCPU: 2 } },
    });
  });

  it('a removal: the allocations before, nothing after, who the consumer was', () => {
    const event = allocationEvent(consumer(), undefined, stamp)!;
    expect([event.before, event.after, event.projectId]).toEqual([{ [HOST_A]: { VCPU: 2 } }, {}, 'p1']);
  });

  it('none when the allocations and the consumer stay (a fence, a PUT of what it holds), whatever the order of their keys', () => {
    const before = consumer({ allocations: { [HOST_A]: { VCPU: 2, MEMORY_MB: 512 }, [HOST_B]: { DISK_GB: 1 } } });
    const after = consumer({ generation: 2, allocations: { [HOST_B]: { DISK_GB: 1 }, [HOST_A]: { MEMORY_MB: 512, VCPU: 2 } } });
    expect(allocationEvent(before, after, stamp)).toBeUndefined();
  });

  it('one when only the project changes, naming the project before', () => {
    const event = allocationEvent(consumer(), consumer({ projectId: 'p2' }), stamp)!;
    expect([event.projectId, event.previousProjectId]).toEqual(['p2', 'p1']);
  });
});

/** An event of consumer `uuid` at hour `hour` of 2026-11-01. */
function at(hour: number, uuid: string, before: number, after: number, fields: Partial<AllocationEvent> = {}): AllocationEvent {
  const held = (vcpu: number): Holdings => (vcpu === 0 ? {} : { [HOST_A]: { VCPU: vcpu } });
  return {
    at: new Date(Date.UTC(2026, 10, 1, hour)).toISOString(),
    requestId: null,
    consumer: uuid,
    projectId: 'p1',
    userId: 'u1',
    consumerType: 'INSTANCE',
    previousProjectId: null,
    before: held(before),
    after: held(after),
    ...fields,
  };
}
const hours = (from: number, to: number) => ({ since: Date.UTC(2026, 10, 1, from), until: Date.UTC(2026, 10, 1, to) });

describe('resourceHours', () => {
  it('counts each holding for the part of the range it lasted (worked by hand)', () => {
    // c1: 2 VCPU from 01:00, 4 from 03:00, gone at 06:00. c2: 8 VCPU from 05:00 on.
    const events = [at(1, 'c1', 0, 2), at(3, 'c1', 2, 4), at(5, 'c2', 0, 8), at(6, 'c1', 4, 0)];
    const current = [consumer({ uuid: 'c2', allocations: { [HOST_A]: { VCPU: 8 } } })];
    // 00:00-10:00: c1 2×2 + 4×3 = 16, c2 8×5 = 40.
    expect(resourceHours('p1', events, current, hours(0, 10))).toEqual({ VCPU: 56 });
    // 02:00-04:00: c1 2×1 + 4×1 = 6.
    expect(resourceHours('p1', events, current, hours(2, 4))).toEqual({ VCPU: 6 });
  });

  it('reads a range that began before the oldest event in it back from that event, and a consumer without events from now', () => {
    // Events from 04:00 on only (the query asks from the range's start): c1 held 4 VCPU before its removal at 06:00.
    const events = [at(6, 'c1', 4, 0)];
    const current = [consumer({ uuid: 'c3', allocations: { [HOST_A]: { VCPU: 1 } } })];
    // 04:00-08:00: c1 4×2 = 8; c3 held 1 throughout: 4.
    expect(resourceHours('p1', events, current, hours(4, 8))).toEqual({ VCPU: 12 });
  });

  it('counts a consumer that moved between projects in each project for its part', () => {
    const events = [at(2, 'c1', 0, 2), at(4, 'c1', 2, 2, { projectId: 'p2', previousProjectId: 'p1' })];
    const current = [consumer({ uuid: 'c1', projectId: 'p2' })];
    expect(resourceHours('p1', events, [], hours(0, 10))).toEqual({ VCPU: 4 });
    expect(resourceHours('p2', events, current, hours(0, 10))).toEqual({ VCPU: 12 });
  });

  it("counts only the user's consumers when a user is given", () => {
    const events = [at(1, 'c1', 0, 2), at(1, 'c2', 0, 3, { userId: 'u2' })];
    expect(resourceHours('p1', events, [], hours(0, 2), 'u2')).toEqual({ VCPU: 3 });
  });
});
