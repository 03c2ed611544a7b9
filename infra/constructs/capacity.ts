/**
 * Capacity at a glance: the scheduled function that publishes each resource
 * class's capacity, usage and free amounts (functions/capacity-metrics.ts),
 * its schedule, and its widgets on the stack's dashboard: utilisation and
 * providers with free capacity per class over time (SEARCH expressions, so
 * a class appears as soon as it is published, custom ones included) and the
 * fullest providers of the latest run (a Logs Insights query on the
 * function's own records).
 */
import { Duration } from 'aws-cdk-lib';
import { GraphWidget, LogQueryVisualizationType, LogQueryWidget, MathExpression, type Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { Rule } from 'aws-cdk-lib/aws-events';
import { Construct } from 'constructs';
import { CAPACITY_DIMENSIONS, FULLEST_RECORD } from '../../functions/capacity-metrics.js';
import { METRICS_NAMESPACE } from '../../shared/http/middleware/metrics.js';
import { CAPACITY_METRICS_ENTRY } from '../bundling.js';
import type { SystemLogLevel } from '../settings.js';
import type { PlacementFunction } from './functions.js';
import { scheduledFunction } from './scheduled-function.js';

export interface CapacityMetricsProps {
  table: ITable;
  stage: string;
  everyMinutes: number;
  dashboard: Dashboard;
  logRetentionDays: number;
  systemLogLevel: SystemLogLevel;
}

/**
 * Reading 10,000 providers takes about 1,000 eventually consistent read
 * units and a few seconds on DynamoDB Local (docs/operators/observability.md, "Capacity at a glance");
 * 512 MB and a minute leave room for regions several times that size.
 */
const FUNCTION_SETTINGS = { memoryMb: 512, timeoutSeconds: 60 };

export class CapacityMetrics extends Construct {
  readonly function: PlacementFunction;
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: CapacityMetricsProps) {
    super(scope, id);
    ({ function: this.function, schedule: this.schedule } = scheduledFunction(this, {
      ...props,
      entry: CAPACITY_METRICS_ENTRY,
      description: 'Placement capacity metrics: per resource class capacity, used, reserved, free, providers with free capacity',
      settings: FUNCTION_SETTINGS,
      access: 'read',
      scheduleDescription: `Placement capacity metrics every ${props.everyMinutes} minutes`,
    }));

    const period = Duration.minutes(Math.max(5, props.everyMinutes));
    const perClass = (metricName: string, label: string) =>
      new MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},${CAPACITY_DIMENSIONS.join(',')}} Stage="${props.stage}" MetricName="${metricName}"', 'Average', ${period.toSeconds()})`,
        label,
        period,
      });
    props.dashboard.addWidgets(
      new GraphWidget({
        title: 'Utilisation per resource class (%)',
        left: [perClass('Utilisation', '')],
        leftYAxis: { min: 0, max: 100 },
        width: 12,
      }),
      new GraphWidget({ title: 'Providers with free capacity per resource class', left: [perClass('ProvidersWithFree', '')], width: 12 }),
    );
    props.dashboard.addWidgets(
      new LogQueryWidget({
        title: 'Fullest providers (latest run)',
        logGroupNames: [this.function.logGroup.logGroupName],
        view: LogQueryVisualizationType.TABLE,
        queryLines: [
          `filter record = "${FULLEST_RECORD}"`,
          'sort run desc',
          'limit 10',
          'sort rank asc',
          'display rank, name, resourceClass, utilisationPercent, used, capacity, uuid',
        ],
        width: 24,
      }),
    );
  }
}
