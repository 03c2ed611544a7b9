/**
 * What works in the background has an alarm (issue 45): every function
 * outside the front door its errors, the history its lag behind the change
 * stream, the sweeper its backlog, the table its throttles, system errors
 * and, provisioned, its consumed capacity; each alarm on the region's topic,
 * its thresholds from the context, and a runbook entry in
 * docs/operators/observability.md that its description names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../infra/bundling.js';
import { RUNBOOK } from '../../../infra/constructs/observability.js';
import { SWEEPER_BACKLOG_METRIC } from '../../../functions/change-sweeper.js';
import { SECONDARY_INDEXES } from '../../../shared/storage/table-definition.js';
import { resources, synth, type Resource } from '../../support/synth.js';

type Template = ReturnType<typeof synth>['templates'][number];

const alarmsOf = (template: Template) => resources(template, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
/** Our functions, not the custom-resource framework CDK adds. */
const ourFunctions = (template: Template) =>
  resources(template, 'AWS::Lambda::Function').filter(([, fn]) => /^Placement /.test(fn.Properties.Description ?? ''));
/** The functions a request reaches: the API's integrations and authorizer, or the function URL's router. */
function frontDoorFunctions(template: Template): Set<string> {
  const referenced = (value: any): string => value['Fn::GetAtt']?.[0] ?? JSON.stringify(value).match(/"Fn::GetAtt":\["([^"]+)","Arn"\]/)![1];
  return new Set([
    ...resources(template, 'AWS::ApiGatewayV2::Integration').map(([, integration]) => referenced(integration.Properties.IntegrationUri)),
    ...resources(template, 'AWS::ApiGatewayV2::Authorizer').map(([, authorizer]) => referenced(authorizer.Properties.AuthorizerUri)),
    ...resources(template, 'AWS::Lambda::Url').map(([, url]) => referenced(url.Properties.TargetFunctionArn)),
  ]);
}
const onFunction = (alarm: Resource['Properties'], metricName: string, logicalId: string) =>
  alarm.MetricName === metricName && alarm.Dimensions?.some((dimension: any) => dimension.Name === 'FunctionName' && dimension.Value.Ref === logicalId);
/** The metric names a math alarm combines. */
const mathMetrics = (alarm: Resource['Properties']): string[] => (alarm.Metrics ?? []).flatMap((metric: any) => metric.MetricStat?.Metric.MetricName ?? []);

/** The runbook's entries by their anchors (remark's slugs of the headings), each with its text. */
function runbookEntries(): Map<string, string> {
  const page = readFileSync(join(PROJECT_ROOT, RUNBOOK), 'utf8');
  const runbook = page.slice(page.indexOf('\n## Runbook'));
  const entries = new Map<string, string>();
  for (const section of runbook.split('\n### ').slice(1)) {
    const [heading = '', ...text] = section.split('\n');
    const anchor = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s-]/gu, '')
      .replace(/\s/g, '-');
    entries.set(anchor, text.join('\n'));
  }
  return entries;
}

describe.each(['httpApi', 'functionUrl'])('the alarms of what works in the background (frontDoor=%s)', (frontDoor) => {
  const {
    templates: [template],
  } = synth({ regions: 'us-east-1', frontDoor });
  const alarms = alarmsOf(template!);

  it('alarm on the errors of every function outside the front door: sweeper, history, capacity metrics, catalog seeder', () => {
    const doors = frontDoorFunctions(template!);
    const background = ourFunctions(template!).filter(([logicalId]) => !doors.has(logicalId));
    expect(background.map(([, fn]) => fn.Properties.Description.split(':')[0]).sort()).toEqual([
      'Placement allocation history',
      'Placement capacity metrics',
      'Placement catalog seeder',
      'Placement change sweeper',
    ]);
    for (const [logicalId] of background)
      expect(
        alarms.filter((alarm) => onFunction(alarm, 'Errors', logicalId)),
        logicalId,
      ).toHaveLength(1);
  });

  it("alarm on the history function's iterator age, minutes behind the stream's 24 hours", () => {
    const [history] = ourFunctions(template!).find(([, fn]) => /allocation history/.test(fn.Properties.Description))!;
    expect(alarms.filter((alarm) => onFunction(alarm, 'IteratorAge', history))).toEqual([
      expect.objectContaining({ Statistic: 'Maximum', Threshold: 5 * 60_000, ComparisonOperator: 'GreaterThanThreshold' }),
    ]);
  });

  it("alarm on the sweeper's backlog, and on its silence", () => {
    expect(alarms.filter((alarm) => alarm.MetricName === SWEEPER_BACKLOG_METRIC)).toEqual([
      expect.objectContaining({ Namespace: 'Placement', Statistic: 'Maximum', Threshold: 15 * 60, TreatMissingData: 'breaching' }),
    ]);
  });

  it("alarm on the table's throttled requests and system errors, every operation the service sends", () => {
    const throttles = alarms.filter((alarm) => mathMetrics(alarm).includes('ThrottledRequests'));
    const systemErrors = alarms.filter((alarm) => mathMetrics(alarm).includes('SystemErrors'));
    expect([throttles.length, systemErrors.length]).toEqual([1, 1]);
    for (const alarm of [...throttles, ...systemErrors]) expect(mathMetrics(alarm)).toHaveLength(8);
    expect(throttles[0]).toMatchObject({ Threshold: 10 });
    expect(systemErrors[0]).toMatchObject({ Threshold: 0 });
  });

  it('put every alarm on the topic, each with a runbook entry that says what it means, what is at risk and what to do', () => {
    const entries = runbookEntries();
    const topics = resources(template!, 'AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([{ Ref: topics[0]![0] }]);
      const anchor = new RegExp(`Runbook: ${RUNBOOK}#([a-z0-9-]+)$`).exec(alarm.AlarmDescription)?.[1];
      expect(anchor, alarm.AlarmDescription).toBeDefined();
      const entry = entries.get(anchor!);
      expect(entry, `no runbook entry #${anchor}`).toBeDefined();
      for (const part of ['**What it means.**', '**At risk.**', '**What to do.**']) expect(entry, `#${anchor}`).toContain(part);
    }
  });
});

describe('alarm thresholds from the context, and a provisioned table', () => {
  const {
    templates: [template],
  } = synth({
    regions: 'us-east-1',
    capacity: 'provisioned',
    historyBehindAlarmMinutes: 30,
    sweeperBacklogAlarmMinutes: 60,
    tableThrottleAlarmCount: 100,
    tableSystemErrorAlarmCount: 3,
    tableCapacityAlarmPercent: 75,
  });
  const alarms = alarmsOf(template!);

  it('take each threshold from its context setting', () => {
    expect(alarms.find((alarm) => alarm.MetricName === 'IteratorAge')).toMatchObject({ Threshold: 30 * 60_000 });
    expect(alarms.find((alarm) => alarm.MetricName === SWEEPER_BACKLOG_METRIC)).toMatchObject({ Threshold: 60 * 60 });
    expect(alarms.find((alarm) => mathMetrics(alarm).includes('ThrottledRequests'))).toMatchObject({ Threshold: 100 });
    expect(alarms.find((alarm) => mathMetrics(alarm).includes('SystemErrors'))).toMatchObject({ Threshold: 3 });
  });

  it("alarm when the table's or an index's consumed read or write capacity nears what is provisioned", () => {
    const capacity = alarms.filter((alarm) => mathMetrics(alarm).some((name) => /^Provisioned/.test(name)));
    expect(capacity).toHaveLength(2 * (1 + SECONDARY_INDEXES.length));
    for (const alarm of capacity) {
      expect(alarm.Threshold).toBe(75);
      expect(alarm.Metrics.find((metric: any) => metric.Expression).Expression).toBe('100 * consumed / (provisioned * 300)');
    }
  });

  it('refuse a threshold out of range', () => {
    expect(() => synth({ regions: 'us-east-1', historyBehindAlarmMinutes: 1440 })).toThrow(/historyBehindAlarmMinutes/);
    expect(() => synth({ regions: 'us-east-1', tableCapacityAlarmPercent: 101 })).toThrow(/tableCapacityAlarmPercent/);
  });

  it('have none on capacity for an on-demand table', () => {
    const onDemand = alarmsOf(synth({ regions: 'us-east-1' }).templates[0]!);
    expect(onDemand.filter((alarm) => mathMetrics(alarm).some((name) => /^Provisioned/.test(name)))).toHaveLength(0);
  });
});
