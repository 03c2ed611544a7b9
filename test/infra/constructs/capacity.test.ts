import { describe, expect, it } from 'vitest';
import { CAPACITY_METRICS_ENTRY } from '../../../infra/bundling.js';
import { resources, synth } from '../../support/synth.js';

const capacityFunctions = (template: ReturnType<typeof synth>['templates'][number]) =>
  resources(template, 'AWS::Lambda::Function').filter(([, fn]) => /^Placement capacity metrics/.test(fn.Properties.Description ?? ''));
/** The schedules that invoke the capacity function. */
const capacityRules = (template: ReturnType<typeof synth>['templates'][number]) => {
  const ids = new Set(capacityFunctions(template).map(([logicalId]) => logicalId));
  return resources(template, 'AWS::Events::Rule')
    .map(([, rule]) => rule.Properties)
    .filter((rule) => rule.Targets.some((target: any) => ids.has(target.Arn['Fn::GetAtt'][0])));
};
/** The dashboard's widgets, its Fn::Join body joined with every reference as "<ref>". */
function dashboardWidgets(template: ReturnType<typeof synth>['templates'][number]): any[] {
  const [, parts] = resources(template, 'AWS::CloudWatch::Dashboard')[0]![1].Properties.DashboardBody['Fn::Join'];
  return JSON.parse((parts as unknown[]).map((part) => (typeof part === 'string' ? part : '<ref>')).join('')).widgets;
}
const widget = (template: ReturnType<typeof synth>['templates'][number], title: string) => dashboardWidgets(template).find((w) => w.properties.title === title);

describe('capacity at a glance in the stack', () => {
  const {
    templates: [template],
  } = synth({ regions: 'us-east-1' });

  it('runs the capacity function every 5 minutes by default, once, without retries', () => {
    const [[logicalId, fn]] = capacityFunctions(template!) as [[string, any]];
    expect(fn.Properties.Environment.Variables).toMatchObject({ PLACEMENT_STAGE: 'test', PLACEMENT_TABLE_NAME: expect.anything() });
    const rules = capacityRules(template!);
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
    expect(rules[0].Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [logicalId, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } })]);
    const permissions = resources(template!, 'AWS::Lambda::Permission').map(([, permission]) => permission.Properties);
    expect(permissions).toContainEqual(expect.objectContaining({ FunctionName: { 'Fn::GetAtt': [logicalId, 'Arn'] }, Principal: 'events.amazonaws.com' }));
    expect(CAPACITY_METRICS_ENTRY).toBe('functions/capacity-metrics.ts');
  });

  it('lets the function read the table and nothing more', () => {
    const [[, fn]] = capacityFunctions(template!) as [[string, any]];
    const role = fn.Properties.Role['Fn::GetAtt'][0];
    const policies = resources(template!, 'AWS::IAM::Policy').filter(([, policy]) => policy.Properties.Roles.some((r: any) => r.Ref === role));
    const actions = policies.flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement.flatMap((statement: any) => [statement.Action].flat()));
    expect(actions).toContain('dynamodb:Query');
    expect(actions.filter((action: string) => /^dynamodb:.*(Put|Update|Delete|Write)/.test(action))).toEqual([]);
    // Its logs go to its own log group, which it may write to and nothing else of CloudWatch Logs.
    expect(actions.filter((action: string) => action.startsWith('logs:')).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
  });

  it('graphs utilisation and providers with free capacity per class and lists the fullest providers', () => {
    const utilisation = widget(template!, 'Utilisation per resource class (%)');
    expect(utilisation.properties.metrics).toEqual([
      [{ expression: `SEARCH('{Placement,Stage,ResourceClass} Stage="test" MetricName="Utilisation"', 'Average', 300)` }],
    ]);
    expect(utilisation.properties.yAxis.left).toEqual({ min: 0, max: 100 });
    const withFree = widget(template!, 'Providers with free capacity per resource class');
    expect(withFree.properties.metrics[0][0].expression).toContain('MetricName="ProvidersWithFree"');
    const fullest = widget(template!, 'Fullest providers (latest run)');
    expect(fullest.type).toBe('log');
    expect(fullest.properties.view).toBe('table');
    expect(fullest.properties.query).toBe(
      'SOURCE \'<ref>\' | filter record = "fullest-provider"\n| sort run desc\n| limit 10\n| sort rank asc\n| display rank, name, resourceClass, utilisationPercent, used, capacity, uuid',
    );
  });

  it('takes its period from context and can be turned off', () => {
    const {
      templates: [every15],
    } = synth({ regions: 'us-east-1', capacityMetricsMinutes: '15' });
    expect(capacityRules(every15!)[0].ScheduleExpression).toBe('rate(15 minutes)');
    expect(widget(every15!, 'Utilisation per resource class (%)').properties.metrics[0][0].expression).toContain("'Average', 900)");

    const {
      templates: [off],
    } = synth({ regions: 'us-east-1', capacityMetrics: 'false' });
    expect(capacityFunctions(off!)).toHaveLength(0);
    expect(capacityRules(off!)).toHaveLength(0);
    expect(widget(off!, 'Utilisation per resource class (%)')).toBeUndefined();
    expect(widget(off!, 'Fullest providers (latest run)')).toBeUndefined();

    expect(() => synth({ capacityMetrics: 'sometimes' })).toThrow(/capacityMetrics: expected true or false/);
    expect(() => synth({ capacityMetricsMinutes: '2.5' })).toThrow(/whole minutes/);
    // Five syntheses of the whole app.
  }, 300_000);
});
