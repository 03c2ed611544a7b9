/**
 * Alarms and a dashboard. Error rate and latency come from the front door's
 * own metrics (./front-door-metrics.ts), which also count what never reached
 * our code (a crashed or timed out function); claims, conflicts, DynamoDB
 * units per request and the handlers' latency by route come from the
 * handlers' metric aggregates (shared/http/middleware/metrics.ts: dimensions
 * Stage and Route), summed over the routes with SEARCH. What works in the
 * background is watched too: each function outside the front door's errors,
 * the history's lag behind the change stream, the sweeper's backlog (its own
 * metric, functions/change-sweeper.ts), DynamoDB's throttles, system errors
 * and, provisioned, its consumed capacity. Every alarm's description names
 * its runbook entry (docs/operators/observability.md, "Runbook").
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TreatMissingData,
  type AlarmProps,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SWEEPER_BACKLOG_METRIC, SWEEPER_METRIC_DIMENSIONS } from '../../functions/change-sweeper.js';
import { METRICS_NAMESPACE, REQUEST_METRIC_DIMENSIONS, type RequestMetric } from '../../shared/http/middleware/metrics.js';
import { SECONDARY_INDEXES } from '../../shared/storage/table-definition.js';
import type { AlarmThresholds } from '../settings.js';
import type { TableCapacity } from '../table-capacity.js';
import type { FrontDoorMetrics } from './front-door-metrics.js';

export interface ObservabilityProps {
  name: string;
  stage: string;
  frontDoor: FrontDoorMetrics;
  table: ITable;
  tableCapacity: TableCapacity;
  /** Every function the front door calls, by a short label: the handlers and the authorizer (or the router). */
  functions: Record<string, IFunction>;
  thresholds: AlarmThresholds;
  alarmEmail?: string;
}

const PERIOD = Duration.minutes(5);
/** Below this many requests in a period one failure is not a rate worth waking anyone for. */
const MIN_REQUESTS_FOR_ERROR_RATE = 20;
/** Where an alarm's runbook entry is: the page, and each entry's anchor. */
export const RUNBOOK = 'docs/operators/observability.md';
/** The operations the service sends to DynamoDB, whose throttles and system errors the table's metrics count per operation. */
const TABLE_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

export class Observability extends Construct {
  readonly alarmTopic: Topic;
  readonly alarms: Alarm[] = [];
  /** The stack's dashboard; other constructs add their widgets to it. */
  readonly dashboard: Dashboard;
  private readonly action: SnsAction;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ObservabilityProps,
  ) {
    super(scope, id);
    // Publishers (CloudWatch alarms) must use TLS.
    this.alarmTopic = new Topic(this, 'Alarms', { displayName: `${props.name} alarms`, enforceSSL: true });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.action = new SnsAction(this.alarmTopic);
    const { thresholds } = props;

    const serverErrorRate = new MathExpression({
      label: '5xx %',
      expression: `IF(requests >= ${MIN_REQUESTS_FOR_ERROR_RATE}, 100 * errors / requests, 0)`,
      usingMetrics: {
        errors: props.frontDoor.serverErrors(PERIOD),
        requests: props.frontDoor.requests(PERIOD),
      },
      period: PERIOD,
    });
    const p99Latency = props.frontDoor.latency(PERIOD, 'p99');

    this.alarm('ServerErrorRate', 'the-5xx-rate', {
      alarmDescription: `More than ${thresholds.serverErrorPercent}% of requests answered 5xx (the ${props.frontDoor.name}'s count, including function crashes and timeouts).`,
      metric: serverErrorRate,
      threshold: thresholds.serverErrorPercent,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
    this.alarm('P99Latency', 'the-p99-latency', {
      alarmDescription: `p99 latency above ${thresholds.p99LatencyMs} ms, authorizer and cold starts included.`,
      metric: p99Latency,
      threshold: thresholds.p99LatencyMs,
      evaluationPeriods: 3,
      datapointsToAlarm: 3,
    });
    // One alarm per function: an alarm's metric math may combine at most 10 metrics, and the alarm then names the function.
    for (const [label, fn] of Object.entries(props.functions)) {
      this.alarm(`Throttles-${label}`, 'a-function-throttled', {
        alarmDescription: `Lambda throttled ${label}: reserved or account concurrency exhausted.`,
        metric: fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        threshold: 0,
        evaluationPeriods: 1,
      });
    }
    this.watchTable();
    this.alarm('SweeperBacklog', 'the-sweepers-backlog', {
      alarmDescription:
        `The oldest unfinished multi-step change, owed count change or entry cleanup has waited more than ${thresholds.sweeperBacklogMinutes} minutes ` +
        'for the change sweeper (or the sweeper has not said for 15 minutes).',
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: SWEEPER_BACKLOG_METRIC,
        dimensionsMap: { [SWEEPER_METRIC_DIMENSIONS[0]]: props.stage },
        period: PERIOD,
        statistic: 'Maximum',
      }),
      threshold: thresholds.sweeperBacklogMinutes * 60,
      evaluationPeriods: 3,
      // The sweeper publishes at every run, every minute: silence means it does not run.
      treatMissingData: TreatMissingData.BREACHING,
    });

    // The aggregates' metrics of every route of this stage.
    const search = (metricName: RequestMetric, statistic: string) =>
      `SEARCH('{${METRICS_NAMESPACE},${REQUEST_METRIC_DIMENSIONS.join(',')}} Stage="${props.stage}" MetricName="${metricName}"', '${statistic}', ${PERIOD.toSeconds()})`;
    const acrossRoutes = (label: string, expression: string) => new MathExpression({ label, expression, usingMetrics: {}, period: PERIOD });
    const sum = (metricName: RequestMetric) => `SUM(${search(metricName, 'Sum')})`;
    // Every request adds one latency value: its sample count is the request count.
    const requests = `SUM(${search('Latency', 'SampleCount')})`;
    const perFunction = (metric: (fn: IFunction) => Metric) => Object.entries(props.functions).map(([label, fn]) => metric(fn).with({ label, period: PERIOD }));

    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: props.name,
      widgets: [
        [
          new GraphWidget({
            title: `Requests (${props.frontDoor.name})`,
            left: [
              props.frontDoor.requests(PERIOD).with({ label: 'requests' }),
              props.frontDoor.clientErrors(PERIOD).with({ label: '4xx' }),
              props.frontDoor.serverErrors(PERIOD).with({ label: '5xx' }),
            ],
            width: 8,
          }),
          new GraphWidget({
            title: `Latency (${props.frontDoor.name}, ms)`,
            left: [props.frontDoor.latency(PERIOD, 'p50').with({ label: 'p50' }), p99Latency.with({ label: 'p99' })],
            leftAnnotations: [{ value: thresholds.p99LatencyMs, label: 'p99 alarm' }],
            width: 8,
          }),
          new GraphWidget({ title: '5xx rate (%)', left: [serverErrorRate], width: 8 }),
        ],
        [
          new GraphWidget({
            title: 'Claims, conflicts and server errors',
            left: [acrossRoutes('claims', sum('Claims')), acrossRoutes('409 conflicts', sum('Conflicts')), acrossRoutes('5xx (handlers)', sum('ServerErrors'))],
            width: 8,
          }),
          new GraphWidget({
            title: 'DynamoDB units per request (average)',
            left: [
              acrossRoutes('read units', `${sum('ReadCapacityUnits')} / ${requests}`),
              acrossRoutes('write units', `${sum('WriteCapacityUnits')} / ${requests}`),
            ],
            width: 8,
          }),
          new GraphWidget({
            title: 'DynamoDB units (sum)',
            left: [
              props.table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'read units' }),
              props.table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum', label: 'write units' }),
            ],
            width: 8,
          }),
        ],
        [
          new GraphWidget({ title: 'Handler latency p99 by route (ms)', left: [acrossRoutes('', search('Latency', 'p99'))], width: 6 }),
          new GraphWidget({ title: 'Function duration p99 (ms)', left: perFunction((fn) => fn.metricDuration({ statistic: 'p99' })), width: 6 }),
          new GraphWidget({ title: 'Function errors', left: perFunction((fn) => fn.metricErrors({ statistic: 'Sum' })), width: 6 }),
          new GraphWidget({ title: 'Function throttles', left: perFunction((fn) => fn.metricThrottles({ statistic: 'Sum' })), width: 6 }),
        ],
        [new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 })],
      ],
    });
  }

  /**
   * A function outside the front door (scheduled, fed by the stream, run at deploy): its errors, in two of three
   * periods, each the function's own interval when it runs less often than every 5 minutes (a function run every 15
   * minutes has errors in one 5-minute period of three).
   */
  watchBackgroundFunction(label: string, fn: IFunction, every: Duration = PERIOD): void {
    const period = Duration.seconds(Math.max(PERIOD.toSeconds(), every.toSeconds()));
    this.alarm(`Errors-${label}`, 'a-background-function-failing', {
      alarmDescription: `The ${label} function failed in two of the last three ${period.toMinutes()}-minute periods.`,
      metric: fn.metricErrors({ period, statistic: 'Sum' }),
      threshold: 0,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
  }

  /** The history function: how far behind the change stream it reads (its iterator age), besides its errors, and what it set aside. */
  watchHistory(fn: IFunction, setAside: IQueue): void {
    this.watchBackgroundFunction('history', fn);
    const minutes = this.props.thresholds.historyBehindMinutes;
    this.alarm('HistoryBehind', 'the-history-falling-behind', {
      alarmDescription: `The allocation history reads the change stream more than ${minutes} minutes behind; records leave the stream after 24 hours.`,
      metric: fn.metric('IteratorAge', { period: PERIOD, statistic: 'Maximum' }),
      threshold: minutes * 60_000,
      evaluationPeriods: 1,
      // The sweeper's heartbeat is a stream record every minute: no iterator age means the mapping does not run.
      treatMissingData: TreatMissingData.BREACHING,
    });
    this.alarm('HistorySetAside', 'history-records-set-aside', {
      alarmDescription: 'The allocation history set aside change stream records it could not take; they leave the stream 24 hours after their change.',
      // SQS stops publishing a queue's metrics after six hours without messages or requests: missing is empty.
      metric: setAside.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      threshold: 0,
      evaluationPeriods: 1,
    });
  }

  /**
   * The sum of DynamoDB metrics of the table, each missing datapoint taken as 0: DynamoDB publishes a throttle or a
   * system error only for what had one in the period, and in metric math a sum with a missing term has no value.
   */
  private tableSum(label: string, metricName: string, dimensions: Record<string, string>[]): MathExpression {
    const usingMetrics = Object.fromEntries(
      dimensions.map((dimensionsMap, index) => [
        `m${index}`,
        new Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap: { TableName: this.props.table.tableName, ...dimensionsMap },
          period: PERIOD,
          statistic: 'Sum',
        }),
      ]),
    );
    const expression = Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + ');
    return new MathExpression({ label, expression, usingMetrics, period: PERIOD });
  }

  /** DynamoDB's throttles and system errors, and a provisioned table's (and index's) consumed capacity near what it has. */
  private watchTable(): void {
    const { table, thresholds, tableCapacity } = this.props;
    const operations = TABLE_OPERATIONS.map((operation) => ({ Operation: operation }));
    this.alarm('TableThrottles', 'dynamodb-throttling', {
      alarmDescription: `DynamoDB throttled more than ${thresholds.tableThrottledRequests} requests in 5 minutes, in two of the last three periods.`,
      metric: this.tableSum('throttled requests', 'ThrottledRequests', operations),
      threshold: thresholds.tableThrottledRequests,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
    // A batch is a throttled request only when every item of it was throttled; throttle events count each one, the
    // table's and each index's (an index throttled on writes throttles the table's writes).
    const indexes = [{}, ...SECONDARY_INDEXES.map((index) => ({ GlobalSecondaryIndexName: index.name }))];
    for (const kind of ['Read', 'Write'] as const) {
      this.alarm(`Table${kind}ThrottleEvents`, 'dynamodb-throttling', {
        alarmDescription: `DynamoDB throttled more than ${thresholds.tableThrottledRequests} ${kind.toLowerCase()}s (batch items included) of the table or an index in 5 minutes, in two of the last three periods.`,
        metric: this.tableSum(`${kind.toLowerCase()} throttle events`, `${kind}ThrottleEvents`, indexes),
        threshold: thresholds.tableThrottledRequests,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      });
    }
    this.alarm('TableSystemErrors', 'dynamodb-system-errors', {
      alarmDescription: `DynamoDB answered more than ${thresholds.tableSystemErrors} requests with a system error (5xx) in 5 minutes, in two of the last three periods.`,
      metric: this.tableSum('system errors', 'SystemErrors', operations),
      threshold: thresholds.tableSystemErrors,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
    if (tableCapacity.mode !== 'provisioned') return;
    for (const index of [undefined, ...SECONDARY_INDEXES.map((secondary) => secondary.name)]) {
      for (const kind of ['Read', 'Write'] as const) {
        const dimensionsMap = { TableName: table.tableName, ...(index === undefined ? {} : { GlobalSecondaryIndexName: index }) };
        const metric = (name: string, statistic: string) =>
          new Metric({ namespace: 'AWS/DynamoDB', metricName: name, dimensionsMap, period: PERIOD, statistic });
        this.alarm(`${kind}Capacity-${index ?? 'table'}`, 'a-provisioned-table-near-its-capacity', {
          alarmDescription: `The ${index === undefined ? 'table' : `index ${index}`} consumed more than ${thresholds.tableCapacityPercent}% of its provisioned ${kind.toLowerCase()} capacity for 15 minutes.`,
          metric: new MathExpression({
            label: `${kind.toLowerCase()} capacity used, %`,
            expression: `100 * consumed / (provisioned * ${PERIOD.toSeconds()})`,
            usingMetrics: { consumed: metric(`Consumed${kind}CapacityUnits`, 'Sum'), provisioned: metric(`Provisioned${kind}CapacityUnits`, 'Average') },
            period: PERIOD,
          }),
          threshold: thresholds.tableCapacityPercent,
          evaluationPeriods: 3,
        });
      }
    }
  }

  /** An alarm on the topic whose description ends with its runbook entry; above the threshold unless said, missing data not breaching. */
  private alarm(id: string, runbookAnchor: string, props: Omit<AlarmProps, 'metric'> & { metric: IMetric }): void {
    const alarm = new Alarm(this, id, {
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      ...props,
      alarmDescription: `${props.alarmDescription} Runbook: ${RUNBOOK}#${runbookAnchor}`,
    });
    alarm.addAlarmAction(this.action);
    this.alarms.push(alarm);
  }
}
