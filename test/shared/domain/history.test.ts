import { describe, expect, it } from 'vitest';
import {
  allocationEvent,
  heldChange,
  HOUR_MS,
  hourOf,
  hourTotals,
  resourceHours,
  type AllocationEvent,
  type Holdings,
  type TimeRange,
  type UsageInputs,
  type UsageScope,
} from '../../../shared/domain/history.js';
import { totalUsages } from '../../../shared/domain/usages.js';
import { seededRandom } from '../../../scripts/lib/seeded-random.js';
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
      previousUserId: null,
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
    expect([event.projectId, event.previousProjectId, event.previousUserId]).toEqual(['p2', 'p1', null]);
  });

  it('one when only the user changes, naming the user before', () => {
    const event = allocationEvent(consumer(), consumer({ userId: 'u2' }), stamp)!;
    expect([event.userId, event.previousUserId, event.previousProjectId]).toEqual(['u2', 'u1', null]);
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
    previousUserId: null,
    before: held(before),
    after: held(after),
    ...fields,
  };
}
const hours = (from: number, to: number): TimeRange => ({ since: Date.UTC(2026, 10, 1, from), until: Date.UTC(2026, 10, 1, to) });

/** The inputs with every change an event: what the usage route reads before any hour has totals. */
function fromEvents(events: readonly AllocationEvent[], current: readonly Consumer[], scope: UsageScope): UsageInputs {
  const mine = current.filter((one) => one.projectId === scope.projectId && (scope.userId === undefined || one.userId === scope.userId));
  return { held: totalUsages(mine), hours: [], changes: events.map((event) => ({ at: Date.parse(event.at), change: heldChange(event, scope) })) };
}

/** The inputs as the route reads them once hours have totals: whole hours inside the range or after it from totals, the rest from events. */
function fromHours(events: readonly AllocationEvent[], current: readonly Consumer[], scope: UsageScope, range: TimeRange): UsageInputs {
  const byEvents = fromEvents(events, current, scope);
  const whole = (hour: number) => hour >= range.since && (hour + HOUR_MS <= range.until || hour >= range.until);
  const hoursOfEvents = [...new Set(events.map((event) => hourOf(Date.parse(event.at))))];
  return {
    held: byEvents.held,
    hours: hoursOfEvents.filter(whole).map((hour) => hourTotals(hour, events, scope)),
    changes: byEvents.changes.filter(({ at }) => !whole(hourOf(at))),
  };
}

describe('resourceHours', () => {
  it('counts each holding for the part of the range it lasted (worked by hand)', () => {
    // c1: 2 VCPU from 01:00, 4 from 03:00, gone at 06:00. c2: 8 VCPU from 05:00 on.
    const events = [at(1, 'c1', 0, 2), at(3, 'c1', 2, 4), at(5, 'c2', 0, 8), at(6, 'c1', 4, 0)];
    const current = [consumer({ uuid: 'c2', allocations: { [HOST_A]: { VCPU: 8 } } })];
    // 00:00-10:00: c1 2×2 + 4×3 = 16, c2 8×5 = 40.
    expect(resourceHours(fromEvents(events, current, { projectId: 'p1' }), hours(0, 10))).toEqual({ VCPU: 56 });
    // 02:00-04:00: c1 2×1 + 4×1 = 6.
    expect(resourceHours(fromEvents(events, current, { projectId: 'p1' }), hours(2, 4))).toEqual({ VCPU: 6 });
  });

  it('reads a range that began before the oldest event in it back from that event, and a consumer without events from now', () => {
    // Events from 04:00 on only (the query asks from the range's start): c1 held 4 VCPU before its removal at 06:00.
    const events = [at(6, 'c1', 4, 0)];
    const current = [consumer({ uuid: 'c3', allocations: { [HOST_A]: { VCPU: 1 } } })];
    // 04:00-08:00: c1 4×2 = 8; c3 held 1 throughout: 4.
    expect(resourceHours(fromEvents(events, current, { projectId: 'p1' }), hours(4, 8))).toEqual({ VCPU: 12 });
  });

  it('counts a consumer that moved between projects in each project for its part', () => {
    const events = [at(2, 'c1', 0, 2), at(4, 'c1', 2, 2, { projectId: 'p2', previousProjectId: 'p1' })];
    const current = [consumer({ uuid: 'c1', projectId: 'p2' })];
    expect(resourceHours(fromEvents(events, current, { projectId: 'p1' }), hours(0, 10))).toEqual({ VCPU: 4 });
    expect(resourceHours(fromEvents(events, current, { projectId: 'p2' }), hours(0, 10))).toEqual({ VCPU: 12 });
  });

  it("counts only the user's consumers when a user is given, and a consumer handed to another user for each user's part", () => {
    const events = [at(1, 'c1', 0, 2), at(1, 'c2', 0, 3, { userId: 'u2' }), at(3, 'c2', 3, 3, { userId: 'u3', previousUserId: 'u2' })];
    const current = [consumer({ uuid: 'c1' }), consumer({ uuid: 'c2', userId: 'u3', allocations: { [HOST_A]: { VCPU: 3 } } })];
    expect(resourceHours(fromEvents(events, current, { projectId: 'p1', userId: 'u2' }), hours(0, 4))).toEqual({ VCPU: 6 });
    expect(resourceHours(fromEvents(events, current, { projectId: 'p1', userId: 'u3' }), hours(0, 4))).toEqual({ VCPU: 3 });
  });

  it('refuses an hour of totals that the range ends inside (its events must be read)', () => {
    const events = [at(1, 'c1', 0, 2)];
    const inputs = { held: { VCPU: 2 }, hours: [hourTotals(Date.UTC(2026, 10, 1, 1), events, { projectId: 'p1' })], changes: [] };
    expect(() => resourceHours(inputs, { since: Date.UTC(2026, 10, 1, 0), until: Date.UTC(2026, 10, 1, 1, 30) })).toThrow(/not whole/);
  });
});

describe('hour totals against a minute-by-minute count of a random life', () => {
  const START = Date.UTC(2026, 10, 1);
  const MINUTE = 60_000;
  const MINUTES = 30 * 60;

  interface State {
    projectId: string;
    userId: string;
    vcpu: number;
  }

  it('gives what each project and user held, minute by minute, over ranges on and off the hour, from events alone and from hours', () => {
    const { next, pick } = seededRandom(20261208);
    // 12 consumers changing 400 times at whole minutes over 30 hours: resized, deleted, created, moved between projects and users.
    const states = new Map<string, State[]>(
      Array.from({ length: 12 }, (_, n) => [`c${n}`, Array<State>(MINUTES).fill({ projectId: 'p1', userId: 'u1', vcpu: 0 })]),
    );
    const events: AllocationEvent[] = [];
    const minutes = Array.from({ length: 400 }, () => 1 + Math.floor(next() * (MINUTES - 1))).sort((a, b) => a - b);
    for (const minute of minutes) {
      const uuid = pick([...states.keys()]);
      const timeline = states.get(uuid)!;
      const before = timeline[minute]!;
      const after = { projectId: pick(['p1', 'p1', 'p2']), userId: pick(['u1', 'u2']), vcpu: pick([0, 1, 2, 4, 8]) };
      timeline.fill(after, minute);
      const held = (state: State): Holdings => (state.vcpu === 0 ? {} : { [HOST_A]: { VCPU: state.vcpu } });
      events.push({
        ...at(0, uuid, 0, 0),
        at: new Date(START + minute * MINUTE).toISOString(),
        projectId: after.projectId,
        userId: after.userId,
        previousProjectId: before.projectId === after.projectId ? null : before.projectId,
        previousUserId: before.userId === after.userId ? null : before.userId,
        before: held(before),
        after: held(after),
      });
    }
    const current = [...states].map(([uuid, timeline]) => {
      const last = timeline.at(-1)!;
      return consumer({ uuid, projectId: last.projectId, userId: last.userId, allocations: last.vcpu === 0 ? {} : { [HOST_A]: { VCPU: last.vcpu } } });
    });
    const counted = (scope: UsageScope, from: number, to: number) => {
      let vcpuMinutes = 0;
      for (const timeline of states.values()) {
        for (let minute = from; minute < to; minute++) {
          const state = timeline[minute]!;
          if (state.projectId === scope.projectId && (scope.userId === undefined || state.userId === scope.userId)) vcpuMinutes += state.vcpu;
        }
      }
      return vcpuMinutes / 60;
    };
    const ranges = [
      [0, MINUTES],
      [60, 600],
      [37, 1111],
      [125, 185],
      [61, 119],
      [300, 301],
      [1439, MINUTES],
    ] as const;
    const scopes: UsageScope[] = [{ projectId: 'p1' }, { projectId: 'p2' }, { projectId: 'p1', userId: 'u2' }, { projectId: 'p2', userId: 'u1' }];
    let compared = 0;
    for (const scope of scopes) {
      for (const [from, to] of ranges) {
        const range = { since: START + from * MINUTE, until: START + to * MINUTE };
        // The events the route would read: those after the range began (a later hour's totals hold the ones after it).
        const since = events.filter((event) => Date.parse(event.at) >= range.since);
        const expected = counted(scope, from, to);
        expect(resourceHours(fromEvents(since, current, scope), range).VCPU ?? 0).toBeCloseTo(expected, 6);
        expect(resourceHours(fromHours(since, current, scope, range), range).VCPU ?? 0).toBeCloseTo(expected, 6);
        compared++;
      }
    }
    expect(compared).toBe(28);
  });
});
