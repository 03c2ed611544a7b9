/**
 * The synthesized alarms evaluated as CloudWatch evaluates them
 * (test/support/cloudwatch-alarms.ts), on metrics with the gaps AWS leaves:
 * DynamoDB publishes a throttle or a system error only for an operation that
 * had one, Lambda an iterator age only while the stream's consumer runs, a
 * function scheduled every 15 minutes its errors in one 5-minute period of
 * three. Each scenario says which alarms must fire; every other alarm must
 * stay OK (or have too little data).
 */
import { describe, expect, it } from 'vitest';
import { SWEEPER_BACKLOG_METRIC } from '../../../functions/change-sweeper.js';
import { alarmState, metricKey, type Metrics, type Series } from '../../support/cloudwatch-alarms.js';
import { resources, synth, type Resource } from '../../support/synth.js';

/** 45 minutes of 5-minute periods: three of the capacity function's 15-minute runs. */
const PERIODS = 9;
const steady = (value: number): Series => Array<number>(PERIODS).fill(value);
/** A value in the last three periods, nothing before. */
const lately = (value: number): Series => [...Array<undefined>(PERIODS - 3).fill(undefined), value, value, value];
/** A value every third period (a run every 15 minutes), nothing between. */
const everyThird = (value: number): Series => Array.from({ length: PERIODS }, (_, index) => ((index + 1) % 3 === 0 ? value : undefined));

const OPERATIONS = ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];

describe('the alarms, evaluated as CloudWatch evaluates them on metrics with gaps', () => {
  const {
    templates: [template],
    // Capacity metrics every 15 minutes, as a large region may set it.
  } = synth({ regions: 'us-east-1', capacityMetricsMinutes: 15 });
  const alarms = resources(template!, 'AWS::CloudWatch::Alarm');
  const [tableId] = resources(template!, 'AWS::DynamoDB::Table')[0]!;
  const table = { Ref: tableId };
  const functionNamed = (pattern: RegExp) => ({
    Ref: resources(template!, 'AWS::Lambda::Function').find(([, fn]) => pattern.test(fn.Properties.Description ?? ''))![0],
  });
  const history = functionNamed(/^Placement allocation history/);
  const capacity = functionNamed(/^Placement capacity metrics/);
  const sweeper = functionNamed(/^Placement change sweeper/);
  const [setAsideQueue] = resources(template!, 'AWS::SQS::Queue').find(([id]) => id.includes('SetAside'))!;

  /** What is published when all is well: the sweeper's heartbeat keeps the history's consumer invoked every minute. */
  const wellMetrics = (): Metrics =>
    new Map([
      [metricKey('IteratorAge', { FunctionName: history }), steady(2_000)],
      [metricKey(SWEEPER_BACKLOG_METRIC, { Stage: 'test' }), steady(0)],
      [metricKey('Errors', { FunctionName: sweeper }), steady(0)],
      [metricKey('Errors', { FunctionName: history }), steady(0)],
    ]);

  const named = (pattern: RegExp) => (alarm: [string, Resource]) => pattern.test(alarm[0]);
  const scenarios: { name: string; metrics: Metrics; fires: (alarm: [string, Resource]) => boolean }[] = [
    { name: 'all well', metrics: wellMetrics(), fires: () => false },
    {
      name: 'one operation throttled (GetItem, 50 a period), the others silent',
      metrics: new Map([...wellMetrics(), [metricKey('ThrottledRequests', { Operation: 'GetItem', TableName: table }), lately(50)]]),
      fires: named(/TableThrottles/),
    },
    {
      name: 'every operation counted, GetItem throttled',
      metrics: new Map([
        ...wellMetrics(),
        ...OPERATIONS.map((operation): [string, Series] => [
          metricKey('ThrottledRequests', { Operation: operation, TableName: table }),
          lately(operation === 'GetItem' ? 50 : 0),
        ]),
      ]),
      fires: named(/TableThrottles/),
    },
    {
      name: 'batch reads throttled in part (read throttle events of the table, no throttled request)',
      metrics: new Map([...wellMetrics(), [metricKey('ReadThrottleEvents', { TableName: table }), lately(50)]]),
      fires: named(/TableReadThrottleEvents/),
    },
    {
      name: 'an index throttled on writes (byShard)',
      metrics: new Map([...wellMetrics(), [metricKey('WriteThrottleEvents', { GlobalSecondaryIndexName: 'byShard', TableName: table }), lately(50)]]),
      fires: named(/TableWriteThrottleEvents/),
    },
    {
      name: 'one operation answered 5xx (TransactWriteItems), the others silent',
      metrics: new Map([...wellMetrics(), [metricKey('SystemErrors', { Operation: 'TransactWriteItems', TableName: table }), lately(3)]]),
      fires: named(/TableSystemErrors/),
    },
    {
      name: "the history's consumer stopped (no iterator age at all)",
      metrics: new Map([...wellMetrics()].filter(([key]) => !key.startsWith('IteratorAge'))),
      fires: named(/HistoryBehind/),
    },
    {
      name: "a record set aside on the history's queue (SQS publishes no metric for an idle empty queue)",
      metrics: new Map([
        ...wellMetrics(),
        [metricKey('ApproximateNumberOfMessagesVisible', { QueueName: { 'Fn::GetAtt': [setAsideQueue, 'QueueName'] } }), lately(1)],
      ]),
      fires: named(/HistorySetAside/),
    },
    {
      name: 'the capacity function (every 15 minutes) failing at every run',
      metrics: new Map([...wellMetrics(), [metricKey('Errors', { FunctionName: capacity }), everyThird(1)]]),
      fires: named(/Errorscapacitymetrics/),
    },
  ];

  it('fire when their condition holds, and only then', () => {
    const rows: string[] = [];
    const wrong: string[] = [];
    for (const scenario of scenarios) {
      const firing = alarms.filter(([, alarm]) => alarmState(alarm.Properties, scenario.metrics, PERIODS) === 'ALARM').map(([id]) => id);
      const expected = alarms.filter(scenario.fires).map(([id]) => id);
      rows.push(`| ${scenario.name} | ${expected.join(', ') || '(none)'} | ${firing.join(', ') || '(none)'} |`);
      if (expected.length === 0 && scenario.name !== 'all well') wrong.push(`${scenario.name}: no such alarm`);
      if (JSON.stringify(firing) !== JSON.stringify(expected))
        wrong.push(`${scenario.name}: fired ${firing.join(', ') || 'none'}, expected ${expected.join(', ') || 'none'}`);
    }
    console.log(['| scenario | must fire | fired |', '|---|---|---|', ...rows].join('\n'));
    expect(wrong).toEqual([]);
  });
});
