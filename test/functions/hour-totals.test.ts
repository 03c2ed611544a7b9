/**
 * Resource-hours kept as they happen: the history function (given stream
 * records as Lambda gives them, commit times in past hours) adds each event
 * to its project-hour, and GET /history/usages answers from those sums what a
 * count of the holdings by hand says, across an hour's boundary, with
 * allocations changing within an hour, a batch given twice, and hours a
 * release keeping no totals may have recorded.
 */
import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Consumer } from '../../shared/domain/model.js';
import { encodeConsumer } from '../../shared/storage/items/consumer.js';
import { encodeHistoryPosition } from '../../shared/storage/items/history-position.js';
import { decodeHourTotals, hourTotalsPk } from '../../shared/storage/items/hour-totals.js';
import { hourTotalsStartKey } from '../../shared/storage/items/hour-totals-start.js';
import { useLocalService } from '../support/local-service.js';
import { useDynamoDbLocalOfItsOwn } from '../support/tables.js';

useDynamoDbLocalOfItsOwn();
// No stream reader: the test gives the history function its records itself.
const service = useLocalService(() => ({ PLACEMENT_LOCAL_HISTORY_SECONDS: '0' }));
const api = service.client({ token: 'admin', version: '1.39' });

const PROJECT = `hours-${randomUUID()}`;
const HOST = randomUUID();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Three hours ago, on the hour: the life below fills that hour and the next two. */
const H0 = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
const iso = (at: number) => new Date(at).toISOString();

let recordHistory: typeof import('../../functions/allocation-history.js').handler;
let storage: typeof import('../../shared/storage/dynamodb.js');
let reads: typeof import('../../shared/storage/reads.js');
beforeAll(async () => {
  // After the service started: the same table and DynamoDB Local as its handlers.
  ({ handler: recordHistory } = await import('../../functions/allocation-history.js'));
  storage = await import('../../shared/storage/dynamodb.js');
  reads = await import('../../shared/storage/reads.js');
});

function version(uuid: string, minute: number, vcpu: number, userId = 'u1'): Consumer {
  return {
    uuid,
    projectId: PROJECT,
    userId,
    generation: minute,
    consumerType: 'INSTANCE',
    allocations: { [HOST]: { VCPU: vcpu } },
    createdAt: iso(H0),
    updatedAt: iso(H0 + minute * MINUTE),
  };
}

let sequence = 1000;
/** The stream's record of a consumer going from `before` to `after` (undefined: created, or gone) at `minute` past H0. */
function record(before: Consumer | undefined, after: Consumer | undefined, minute: number) {
  const image = (consumer: Consumer | undefined) =>
    consumer === undefined ? undefined : (marshall(encodeConsumer(consumer), { removeUndefinedValues: true }) as never);
  return {
    dynamodb: {
      OldImage: image(before),
      NewImage: image(after),
      SequenceNumber: String(sequence++),
      ApproximateCreationDateTime: (H0 + minute * MINUTE) / 1000,
    },
  };
}

const [c1, c2, c3] = [randomUUID(), randomUUID(), randomUUID()];
// c1: 2 VCPU from 00:10, 4 from 00:40, 1 from 01:20. c2: 8 from 00:50, gone at 01:05. c3 (user u2): 3 from 01:30.
const firstBatch = [record(undefined, version(c1, 10, 2), 10), record(version(c1, 10, 2), version(c1, 40, 4), 40), record(undefined, version(c2, 50, 8), 50)];
const secondBatch = [
  record(version(c2, 50, 8), undefined, 65),
  record(version(c1, 40, 4), version(c1, 80, 1), 80),
  record(undefined, version(c3, 90, 3, 'u2'), 90),
];

/** VCPU-hours between two minutes past H0, counted by hand from the life above. */
function byHand(from: number, to: number, userId?: string): number {
  const spans: [number, number, number, string][] = [
    [10, 40, 2, 'u1'],
    [40, 80, 4, 'u1'],
    [80, Infinity, 1, 'u1'],
    [50, 65, 8, 'u1'],
    [90, Infinity, 3, 'u2'],
  ];
  let minutes = 0;
  for (const [start, end, vcpu, user] of spans) {
    if (userId !== undefined && user !== userId) continue;
    minutes += Math.max(0, Math.min(end, to) - Math.max(start, from)) * vcpu;
  }
  return minutes / 60;
}

async function usage(from: number, to: number, userId?: string): Promise<number> {
  const query = new URLSearchParams({
    project_id: PROJECT,
    since: iso(H0 + from * MINUTE),
    until: iso(H0 + to * MINUTE),
    ...(userId ? { user_id: userId } : {}),
  });
  const response = await api('GET', `/history/usages?${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.resource_hours.VCPU ?? 0;
}

const RANGES: [number, number, string?][] = [
  [0, 180],
  [15, 105],
  [60, 120],
  [45, 55],
  [70, 200],
  [0, 180, 'u2'],
  [20, 100, 'u1'],
];

/** Every range's answer beside the count by hand. */
async function answers() {
  return Promise.all(RANGES.map(async ([from, to, user]) => ({ from, to, user, answered: await usage(from, to, user), expected: byHand(from, to, user) })));
}

const hourItems = async (userId?: string) =>
  reads.queryAll({
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': 'pk' },
    ExpressionAttributeValues: { ':pk': hourTotalsPk({ projectId: PROJECT, userId }) },
  });

describe('hour totals kept by the history function', () => {
  it('sums each project-hour and user-hour, and usage answers from them what the holdings say, on and off the hour', async () => {
    // What the consumers hold now, as the claims left them.
    for (const consumer of [version(c1, 80, 1), version(c3, 90, 3, 'u2')]) {
      await storage.putItem({ TableName: storage.tableName(), Item: encodeConsumer(consumer) });
    }
    await recordHistory({ Records: firstBatch });
    await recordHistory({ Records: secondBatch });
    // A table whose history began with this release: every hour has totals.
    expect(await reads.getItem(hourTotalsStartKey)).toMatchObject({ start: iso(0) });
    const changes = async (userId?: string) => (await hourItems(userId)).map(decodeHourTotals).map(({ hour, change }) => [iso(hour), change]);
    expect(await changes()).toEqual([
      [iso(H0), { VCPU: 12 }],
      [iso(H0 + HOUR), { VCPU: -8 + -3 + 3 }],
    ]);
    expect(await changes('u2')).toEqual([[iso(H0 + HOUR), { VCPU: 3 }]]);
    for (const { answered, expected } of await answers()) expect(answered).toBeCloseTo(expected, 6);
    expect(await usage(0, 180)).toBeCloseTo(2 * 0.5 + 4 * (40 / 60) + 1 * (100 / 60) + 8 * 0.25 + 3 * 1.5, 6);
  });

  it('writes the same totals when the stream gives a batch again', async () => {
    const before = await hourItems();
    const answered = await answers();
    await recordHistory({ Records: firstBatch });
    expect(await hourItems()).toEqual(before);
    expect(await answers()).toEqual(answered);
  });

  it('reads from the events the hours a release keeping no totals may have recorded, with the same answers', async () => {
    const answered = await answers();
    // Release 1.1.0 read the last batch: it stamps its position with no release.
    await storage.putItem({ TableName: storage.tableName(), Item: encodeHistoryPosition({ newestChangeRead: iso(H0), readAt: iso(Date.now()) }) });
    await recordHistory({ Records: [record(version(c3, 90, 3, 'u2'), version(c3, 90, 3, 'u2'), 90)] });
    const start = Date.parse((await reads.getItem(hourTotalsStartKey))!.start as string);
    expect(start).toBe(Math.floor(Date.now() / HOUR) * HOUR + HOUR);
    expect(await answers()).toEqual(answered);
  });
});
