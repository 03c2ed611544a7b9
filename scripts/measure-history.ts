/**
 * `npm run history-report`: what the allocation history costs and how far
 * it lags (docs/operators/history.md).
 *
 * 1. Delay: `npm start`'s service (in this process) with its stream reader
 *    at its default second; HISTORY_CONSUMERS consumers (default 100) are
 *    each claimed, resized and deleted one request at a time, and after
 *    each answer GET /history/allocations/{consumer} is asked every 20 ms
 *    until the change is there: commit to history, p50 and p99.
 * 2. Cost: the same life again once the service's reader is idle; then
 *    the stream is read here from where it stopped, and the history function invoked once per
 *    change, as Lambda does at a region's rate (a change every few seconds
 *    leaves one record in a batch): per change, its DynamoDB units,
 *    requests (and those on the critical path), CPU, and the bytes it
 *    stores; priced at scripts/cost-report/prices.ts's list prices with the
 *    cost report's duration model (bill.ts).
 * 3. Pages: HISTORY_PAGED_EVENTS events (default 10,000) on one provider,
 *    from POST /allocations of 200 consumers at a time, then its history
 *    read page after page (a thousand events each, following the next
 *    links): each page's time, events and bytes.
 * 4. A month's usage: HISTORY_USAGE_EVENTS changes (default 100,000) of a
 *    project's consumers spread over the last 30 days, given to the
 *    history function in the stream's order, 100 records a batch; then
 *    GET /history/usages over those 30 days from the hour totals, and
 *    again from the events alone (as before the totals were kept: the
 *    totals' start removed): time, items read, and the totals beside a
 *    count of the consumers' holdings by hand.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { PlacementClient } from '../admin/placement-client.js';
import { handler as recordHistory } from '../functions/allocation-history.js';
import { readHistoryStream } from '../local/change-stream.js';
import { startLocalService } from '../local/service.js';
import { takeConsumedCapacity, takeRequests, trackConsumedCapacity } from '../shared/storage/consumed-capacity.js';
import { getItem, queryAll } from '../shared/storage/reads.js';
import { deleteItem, putItem, tableName } from '../shared/storage/dynamodb.js';
import { putAll } from '../shared/storage/commit/journal.js';
import { encodeConsumer } from '../shared/storage/items/consumer.js';
import { hourTotalsStartKey } from '../shared/storage/items/hour-totals-start.js';
import { readUsageInputs } from '../shared/storage/history/hour-totals.js';
import { resourceHours } from '../shared/domain/history.js';
import type { Consumer } from '../shared/domain/model.js';
import { marshall } from '@aws-sdk/util-dynamodb';
import { seededRandom } from './lib/seeded-random.js';
import { consumerHistoryPk, projectHistoryPk, providerHistoryPk } from '../shared/storage/items/allocation-event.js';
import { hourTotalsPk } from '../shared/storage/items/hour-totals.js';
import { itemBytes as dynamoItemBytes } from './cost-report/claim-units.js';
import { durationCost } from './cost-report/bill.js';
import { PRICES } from './cost-report/prices.js';

const CONSUMERS = Number(process.env.HISTORY_CONSUMERS ?? 100);
const PAGED_EVENTS = Number(process.env.HISTORY_PAGED_EVENTS ?? 10_000);
const USAGE_EVENTS = Number(process.env.HISTORY_USAGE_EVENTS ?? 100_000);
const USAGE_DAYS = 30;
/** Consumers a POST /allocations claims at once for the paged listing. */
const CLAIMS_PER_POST = 200;
const PROJECT = 'history-report';
/** The history function's memory size (infra/constructs/allocation-history.ts). */
const MEMORY_MB = 256;
const RETENTION_MONTHS = 90 / 30;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

/** nova's life of one instance: claimed, resized, deleted; `after` runs after each answer. */
async function lifeOf(api: PlacementClient, node: string, after: (consumer: string, changes: number) => Promise<void>): Promise<void> {
  const consumer = randomUUID();
  const body = (vcpu: number, generation: number | null) => ({
    allocations: { [node]: { resources: { VCPU: vcpu, MEMORY_MB: vcpu * 2048, DISK_GB: 20 } } },
    project_id: PROJECT,
    user_id: 'user',
    consumer_generation: generation,
    consumer_type: 'INSTANCE',
  });
  const sent = [
    () => api.put(`/allocations/${consumer}`, body(2, null)),
    () => api.put(`/allocations/${consumer}`, body(4, 1)),
    () => api.delete(`/allocations/${consumer}`),
  ];
  for (const [n, send] of sent.entries()) {
    const answer = await send();
    if (answer.status >= 300) throw new Error(`${answer.status} ${answer.text}`);
    await after(consumer, n + 1);
  }
}

async function compute(api: PlacementClient): Promise<string> {
  const node = randomUUID();
  await api.post('/resource_providers', { uuid: node, name: `node-${node}` });
  const inventories = { VCPU: { total: 100_000 }, MEMORY_MB: { total: 100_000_000 }, DISK_GB: { total: 100_000_000 } };
  const answer = await api.put(`/resource_providers/${node}/inventories`, { resource_provider_generation: 0, inventories });
  if (answer.status !== 200) throw new Error(`${answer.status} ${answer.text}`);
  return node;
}

// The reader at npm start's interval, whatever the environment says (the tests' turns it off).
process.env.PLACEMENT_LOCAL_HISTORY_SECONDS = '1';
const service = await startLocalService({ port: 0 });
const api = new PlacementClient(service.url, { version: '1.39' });
const node = await compute(api);

// 1. Delay.
const delays: number[] = [];
for (let n = 0; n < CONSUMERS; n++) {
  await lifeOf(api, node, async (consumer, changes) => {
    const committed = performance.now();
    for (;;) {
      const { body } = await api.get(`/history/allocations/${consumer}`);
      if (body.events.length >= changes) break;
      await sleep(20);
    }
    delays.push(performance.now() - committed);
  });
}

// 2. Cost, one change per invocation: the service's reader sleeps (it reads the setting as it schedules its next pass, and
// that pass finds nothing new), and the changes made after it are read here from its checkpoint on.
process.env.PLACEMENT_LOCAL_HISTORY_SECONDS = '86400';
await sleep(2500);
const consumers: string[] = [];
for (let n = 0; n < CONSUMERS; n++) await lifeOf(api, node, async (consumer, changes) => void (changes === 1 && consumers.push(consumer)));
const invocations: { read: number; write: number; requests: number; critical: number; cpuMs: number }[] = [];
const measured = async (event: DynamoDBStreamEvent) => {
  for (const record of event.Records) {
    await trackConsumedCapacity(async () => {
      const cpu = process.cpuUsage();
      await recordHistory({ Records: [record] });
      const used = process.cpuUsage(cpu);
      const { read, write } = takeConsumedCapacity();
      invocations.push({ read, write, ...takeRequests(), cpuMs: (used.user + used.system) / 1000 });
    });
  }
};
const reader = readHistoryStream(service.dynamoDbEndpoint, { record: measured });
await reader.catchUp();
await reader.stop();

// 3. Pages: the events of a provider with PAGED_EVENTS consumers, read through the history route as placement-admin does.
const crowded = await compute(api);
for (let made = 0; made < PAGED_EVENTS; made += CLAIMS_PER_POST) {
  const claims = Array.from({ length: Math.min(CLAIMS_PER_POST, PAGED_EVENTS - made) }, () => [
    randomUUID(),
    {
      allocations: { [crowded]: { resources: { VCPU: 1 } } },
      project_id: `${PROJECT}-pages`,
      user_id: 'user',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    },
  ]);
  const answer = await api.post('/allocations', Object.fromEntries(claims));
  if (answer.status !== 204) throw new Error(`${answer.status} ${answer.text}`);
}
// Their events written now, by a reader of its own (the service's sleeps; what both write is written under the same keys).
const pageReader = readHistoryStream(service.dynamoDbEndpoint);
await pageReader.catchUp();
await pageReader.stop();
const pages: { ms: number; events: number; bytes: number }[] = [];
for (let path: string | undefined = `/history/resource_providers/${crowded}/allocations`; path !== undefined;) {
  const answer = await api.get(path);
  pages.push({ ms: answer.ms, events: answer.body.events.length, bytes: Buffer.byteLength(answer.text) });
  path = answer.body.links.find((link: { rel: string }) => link.rel === 'next')?.href;
}
const listed = pages.reduce((sum, page) => sum + page.events, 0);
if (listed !== PAGED_EVENTS) throw new Error(`the pages list ${listed} events of ${PAGED_EVENTS}`);

// 4. A month's usage of a project whose consumers changed USAGE_EVENTS times (one consumer in 50 changes, on average, each
// change a new size or user, or a deletion), at random times over the last 30 days.
const usageProject = `${PROJECT}-month`;
const monthEnd = Date.now() - 60_000;
const monthStart = monthEnd - USAGE_DAYS * 86_400_000;
const random = seededRandom(20261208);
// A host of their own: the cost above counts what is stored under the first node.
const monthHost = random.uuid();
const lives = new Map<string, { at: number; vcpu: number; userId: string }[]>(
  Array.from({ length: Math.max(1, Math.round(USAGE_EVENTS / 50)) }, () => [random.uuid(), []]),
);
const times = Array.from({ length: USAGE_EVENTS }, () => monthStart + Math.floor(random.next() * (monthEnd - monthStart))).sort((a, b) => a - b);
const versionOf = (uuid: string, state: { at: number; vcpu: number; userId: string }, generation: number): Consumer => ({
  uuid,
  projectId: usageProject,
  userId: state.userId,
  generation,
  consumerType: 'INSTANCE',
  allocations: { [monthHost]: { VCPU: state.vcpu, MEMORY_MB: state.vcpu * 2048 } },
  createdAt: new Date(monthStart).toISOString(),
  updatedAt: new Date(state.at).toISOString(),
});
const image = (consumer: Consumer | undefined) => (consumer === undefined ? undefined : marshall(encodeConsumer(consumer), { removeUndefinedValues: true }));
const records: DynamoDBStreamEvent['Records'] = [];
for (const at of times) {
  const uuid = random.pick([...lives.keys()]);
  const life = lives.get(uuid)!;
  const before = life.at(-1);
  // A live consumer is deleted one change in four; a deleted one is created again.
  const after =
    before !== undefined && before.vcpu > 0 && random.next() < 0.25
      ? { at, vcpu: 0, userId: before.userId }
      : { at, vcpu: random.pick([1, 2, 4, 8]), userId: random.pick(['u1', 'u2', 'u3', 'u4', 'u5']) };
  life.push(after);
  const was = before === undefined || before.vcpu === 0 ? undefined : versionOf(uuid, before, life.length - 1);
  const is = after.vcpu === 0 ? undefined : versionOf(uuid, after, life.length);
  if (was === undefined && is === undefined) continue;
  records.push({
    dynamodb: {
      OldImage: image(was) as never,
      NewImage: image(is) as never,
      SequenceNumber: String(10n ** 20n + BigInt(records.length)),
      ApproximateCreationDateTime: at / 1000,
    },
  });
}
const feedStarted = performance.now();
for (let start = 0; start < records.length; start += 100) await recordHistory({ Records: records.slice(start, start + 100) });
const feedSeconds = (performance.now() - feedStarted) / 1000;
// What the consumers hold now, as those changes left them.
await putAll(
  [...lives].flatMap(([uuid, life]) => {
    const last = life.at(-1);
    return last === undefined || last.vcpu === 0 ? [] : [encodeConsumer(versionOf(uuid, last, life.length))];
  }),
);
/** VCPU-hours of the project over the month, from each consumer's life. */
const byHand = [...lives.values()].reduce((sum, life) => {
  let vcpuMs = 0;
  for (const [n, state] of life.entries()) {
    const end = n + 1 < life.length ? life[n + 1]!.at : Infinity;
    vcpuMs += state.vcpu * Math.max(0, Math.min(end, monthEnd) - Math.max(state.at, monthStart));
  }
  return sum + vcpuMs / 3_600_000;
}, 0);
const usageRange = { since: monthStart, until: monthEnd };
const usagePath = `/history/usages?${new URLSearchParams({ project_id: usageProject, since: new Date(monthStart).toISOString(), until: new Date(monthEnd).toISOString() })}`;
/** The route's answer five times (p50 ms), and the items its reads take (the same reads, counted in this process). */
async function measureUsage() {
  const answers: { ms: number; vcpu: number }[] = [];
  for (let run = 0; run < 5; run++) {
    const answer = await api.get(usagePath);
    if (answer.status !== 200) throw new Error(`${answer.status} ${answer.text}`);
    answers.push({ ms: answer.ms, vcpu: answer.body.resource_hours.VCPU });
  }
  const items = await trackConsumedCapacity(async () => {
    resourceHours(await readUsageInputs({ projectId: usageProject }, usageRange), usageRange);
    return takeConsumedCapacity();
  });
  return {
    ms: percentile(
      answers.map((one) => one.ms),
      50,
    ),
    vcpu: answers[0]!.vcpu,
    items: items.items,
    read: items.read,
  };
}
const fromHours = await measureUsage();
const start = await getItem(hourTotalsStartKey);
await deleteItem({ TableName: tableName(), Key: hourTotalsStartKey });
const fromEvents = await measureUsage();
await putItem({ TableName: tableName(), Item: start! });

// What section 2's changes stored (the provider's and project's partitions hold section 1's too): their events, and
// the project's hour totals (shared with section 1's changes of the same hours: counted whole).
const measuredConsumers = new Set(consumers);
const partition = (pk: string) => queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } });
const ofMeasured = (items: Record<string, unknown>[]) => items.filter((item) => measuredConsumers.has(item.consumer as string));
const eventItems = ofMeasured([
  ...(await Promise.all(consumers.map((uuid) => partition(consumerHistoryPk(uuid))))).flat(),
  ...(await partition(providerHistoryPk(node))),
]);
const projectItems = ofMeasured(await partition(projectHistoryPk(PROJECT)));
const hourItems = [...(await partition(hourTotalsPk({ projectId: PROJECT }))), ...(await partition(hourTotalsPk({ projectId: PROJECT, userId: 'user' })))];
const stored = [...eventItems, ...projectItems, ...hourItems];
await service.stop();

/** DynamoDB's size of an item: attribute names and values, strings and binary by their bytes, numbers about 21 at most, plus 100 bytes of index overhead it bills storage on. */
const itemBytes = (item: Record<string, unknown>) =>
  100 +
  Object.entries(item).reduce((sum, [name, value]) => {
    const size = value instanceof Uint8Array ? value.byteLength : typeof value === 'number' ? 21 : Buffer.byteLength(String(value ?? ''));
    return sum + Buffer.byteLength(name) + size;
  }, 0);

const changes = invocations.length;
const mean = (pick: (one: (typeof invocations)[number]) => number) => invocations.reduce((sum, one) => sum + pick(one), 0) / changes;
// Write units as AWS bills them, from the items (DynamoDB Local misreports transactions: cost-report/claim-units.ts): the
// consumer's and provider's event items 1 a started KB, the position 1 an invocation, and the transaction of each change: its
// project's item 2 a started KB and its additions to the project's and the user's hour totals 2 each.
const startedKb = (item: Record<string, unknown>) => Math.max(1, Math.ceil(dynamoItemBytes(item) / 1024));
const writeUnits =
  (eventItems.reduce((sum, item) => sum + startedKb(item), 0) +
    invocations.length +
    projectItems.reduce((sum, item) => sum + 2 * startedKb(item), 0) +
    changes * 2 * 2) /
  changes;
const bytesPerChange = stored.reduce((sum, item) => sum + itemBytes(item), 0) / changes;
const work = { cpuMs: mean((one) => one.cpuMs), dynamoCalls: mean((one) => one.critical) };
// Per million changes, USD: at the function's memory size, one invocation each.
const perMillion = {
  'Lambda requests': PRICES.lambdaRequestPerMillion,
  'Lambda duration': durationCost(work, MEMORY_MB) * 1e6,
  'DynamoDB writes (events, hour totals, position)': writeUnits * PRICES.dynamoWriteUnitPerMillion,
  'DynamoDB reads (removal notes)': mean((one) => one.read) * PRICES.dynamoReadUnitPerMillion,
  // The removal note rides in the deleting transaction: 2 write units a note, one change in three here is a removal.
  'removal notes in the claims': (2 / 3) * PRICES.dynamoWriteUnitPerMillion,
  [`storage for ${RETENTION_MONTHS * 30} days`]: ((bytesPerChange * 1e6) / 1e9) * PRICES.dynamoStorageGbMonth * RETENTION_MONTHS,
};
const total = Object.values(perMillion).reduce((sum, value) => sum + value, 0);

console.log(`Allocation history, ${CONSUMERS} consumers each claimed, resized and deleted (${changes} changes)\n`);
console.log('| commit to history, locally | p50 ms | p99 ms | max ms |\n|---|---|---|---|');
console.log(
  `| ${delays.length} changes, reader every 1 s | ${percentile(delays, 50).toFixed(0)} | ${percentile(delays, 99).toFixed(0)} | ${Math.max(...delays).toFixed(0)} |\n`,
);
console.log(
  '| per change | write units (as billed; DynamoDB Local reported) | read units | DynamoDB requests (critical path) | CPU ms | bytes stored |\n|---|---|---|---|---|---|',
);
console.log(
  `| mean | ${writeUnits.toFixed(2)} (${mean((one) => one.write).toFixed(2)}) | ${mean((one) => one.read).toFixed(2)} | ${mean((one) => one.requests).toFixed(2)} (${work.dynamoCalls.toFixed(2)}) | ${work.cpuMs.toFixed(2)} | ${bytesPerChange.toFixed(0)} |\n`,
);
console.log('| USD per million changes, us-east-1 list prices | |\n|---|---|');
for (const [component, usd] of Object.entries(perMillion)) console.log(`| ${component} | ${usd.toFixed(3)} |`);
console.log(`| **total** | **${total.toFixed(3)}** |`);
console.log(`\nA provider's ${PAGED_EVENTS} events through GET /history/resource_providers/{uuid}/allocations, page after page (its next links)\n`);
console.log('| page | events | bytes | ms |\n|---|---|---|---|');
for (const [n, page] of pages.entries()) console.log(`| ${n + 1} | ${page.events} | ${page.bytes} | ${page.ms.toFixed(0)} |`);
console.log(
  `\nA project's usage over ${USAGE_DAYS} days of ${records.length} changes (${lives.size} consumers; given to the history function in ${feedSeconds.toFixed(0)} s), GET /history/usages\n`,
);
console.log('| read from | p50 ms | items read | read units | VCPU-hours | counted by hand |\n|---|---|---|---|---|---|');
for (const [source, usage] of [
  ['hour totals', fromHours],
  ['events alone (before)', fromEvents],
] as const) {
  console.log(`| ${source} | ${usage.ms.toFixed(0)} | ${usage.items} | ${usage.read.toFixed(1)} | ${usage.vcpu.toFixed(3)} | ${byHand.toFixed(3)} |`);
}
if ([fromHours, fromEvents].some((usage) => Math.abs(usage.vcpu - byHand) > 1e-3)) throw new Error('the usage differs from the count by hand');
console.log(
  `\nStorage at $${PRICES.dynamoStorageGbMonth} per GB-month (DynamoDB Standard, beyond the free 25 GB), each change kept ${RETENTION_MONTHS * 30} days. ` +
    `Lambda duration: ${work.cpuMs.toFixed(2)} ms of CPU at ${MEMORY_MB} MB plus ${work.dynamoCalls.toFixed(2)} DynamoDB requests on the critical path ` +
    `at the cost report's assumed DynamoDB latency. Not included: the stream's reads (free for Lambda's triggers), records Lambda's filter drops (not billed), ` +
    'the history reads of operators, and CloudWatch Logs (the function logs at debug only).',
);
process.exit(0);
