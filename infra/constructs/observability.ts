/**
 * Alarms and a dashboard. Error rate and latency come from the front door's
 * own metrics (./front-door-metrics.ts), which also count what never reached
 * our code (a crashed or timed out function); claims, conflicts, DynamoDB
 * units per request and the handlers' latency by route come from the
 * handlers' metric aggregates (shared/http/middleware/metrics.ts: dimensions
 * Stage and Route), summed over the routes with SEARCH.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, AlarmStatusWidget, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, REQUEST_METRIC_DIMENSIONS, type RequestMetric } from '../../shared/http/middleware/metrics.js';
import type { FrontDoorMetrics } from './front-door-metrics.js';

export interface ObservabilityProps {
  name: string;
  stage: string;
  frontDoor: FrontDoorMetrics;
  table: ITable;
  /** Every function by a short label: the handlers and the authorizer. */
  functions: Record<string, IFunction>;
  serverErrorPercent: number;
  p99LatencyMs: number;
  alarmEmail?: string;
}

const PERIOD = Duration.minutes(5);
/** Below this many requests in a period one failure is not a rate worth waking anyone for. */
const MIN_REQUESTS_FOR_ERROR_RATE = 20;

export class Observability extends Construct {
  readonly alarmTopic: Topic;
  readonly alarms: Alarm[] = [];
  /** The stack's dashboard; other constructs add their widgets to it. */
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    // Publishers (CloudWatch alarms) must use TLS.
    this.alarmTopic = new Topic(this, 'Alarms', { displayName: `${props.name} alarms`, enforceSSL: true });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.alarmTopic);

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

    this.alarms.push(
      new Alarm(this, 'ServerErrorRate', {
        alarmDescription: `More than ${props.serverErrorPercent}% of requests answered 5xx (the ${props.frontDoor.name}'s count, including function crashes and timeouts).`,
        metric: serverErrorRate,
        threshold: props.serverErrorPercent,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'P99Latency', {
        alarmDescription: `p99 latency above ${props.p99LatencyMs} ms, authorizer and cold starts included.`,
        metric: p99Latency,
        threshold: props.p99LatencyMs,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    // One alarm per function: an alarm's metric math may combine at most 10 metrics, and the alarm then names the function.
    for (const [label, fn] of Object.entries(props.functions)) {
      this.alarms.push(
        new Alarm(this, `Throttles-${label}`, {
          alarmDescription: `Lambda throttled ${label}: reserved or account concurrency exhausted.`,
          metric: fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
          threshold: 0,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    for (const alarm of this.alarms) alarm.addAlarmAction(action);

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
            leftAnnotations: [{ value: props.p99LatencyMs, label: 'p99 alarm' }],
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
}
