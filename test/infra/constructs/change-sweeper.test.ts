import { describe, expect, it } from 'vitest';
import { CHANGE_SWEEPER_ENTRY } from '../../../infra/bundling.js';
import { resources, synth } from '../../support/synth.js';

const sweepers = (template: ReturnType<typeof synth>['templates'][number]) =>
  resources(template, 'AWS::Lambda::Function').filter(([, fn]) => /^Placement change sweeper/.test(fn.Properties.Description ?? ''));

describe('the change sweeper in the stack', () => {
  for (const frontDoor of ['httpApi', 'functionUrl']) {
    it(`runs every minute without retries, reading and writing the table (${frontDoor})`, () => {
      const {
        templates: [template],
      } = synth({ regions: 'us-east-1', frontDoor });
      const [[logicalId, fn]] = sweepers(template!) as [[string, any]];
      expect(fn.Properties.Environment.Variables).toMatchObject({ PLACEMENT_TABLE_NAME: expect.anything() });
      const rules = resources(template!, 'AWS::Events::Rule')
        .map(([, rule]) => rule.Properties)
        .filter((rule) => rule.Targets.some((target: any) => target.Arn['Fn::GetAtt'][0] === logicalId));
      expect(rules).toEqual([expect.objectContaining({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' })]);
      expect(rules[0].Targets).toEqual([expect.objectContaining({ RetryPolicy: { MaximumRetryAttempts: 0 } })]);
      const role = fn.Properties.Role['Fn::GetAtt'][0];
      const actions = resources(template!, 'AWS::IAM::Policy')
        .filter(([, policy]) => policy.Properties.Roles.some((r: any) => r.Ref === role))
        .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement.flatMap((statement: any) => [statement.Action].flat()));
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']));
    });
  }

  it('is bundled from the sweeper function', () => {
    expect(CHANGE_SWEEPER_ENTRY).toBe('functions/change-sweeper.ts');
  });
});
