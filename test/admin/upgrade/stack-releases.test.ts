/** The releases of a stack's functions, from recorded CloudFormation and Lambda answers (aws-sdk-client-mock). */
import { CloudFormationClient, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { stackReleases } from '../../../admin/upgrade/stack-releases.js';

describe("a stack's releases", () => {
  it("reads each function's PLACEMENT_RELEASE, 1.0.0 where there is none, and marks one being updated", async () => {
    const cloudFormation = mockClient(CloudFormationClient);
    cloudFormation.on(ListStackResourcesCommand).resolves({
      StackResourceSummaries: [
        {
          ResourceType: 'AWS::Lambda::Function',
          PhysicalResourceId: 'prod-allocations',
          LogicalResourceId: 'a',
          ResourceStatus: 'UPDATE_COMPLETE',
          LastUpdatedTimestamp: new Date(),
        },
        {
          ResourceType: 'AWS::Lambda::Function',
          PhysicalResourceId: 'prod-traits',
          LogicalResourceId: 't',
          ResourceStatus: 'UPDATE_IN_PROGRESS',
          LastUpdatedTimestamp: new Date(),
        },
        {
          ResourceType: 'AWS::Lambda::Function',
          PhysicalResourceId: 'prod-usages',
          LogicalResourceId: 'u',
          ResourceStatus: 'CREATE_COMPLETE',
          LastUpdatedTimestamp: new Date(),
        },
        {
          ResourceType: 'AWS::DynamoDB::Table',
          PhysicalResourceId: 'prod-table',
          LogicalResourceId: 'x',
          ResourceStatus: 'CREATE_COMPLETE',
          LastUpdatedTimestamp: new Date(),
        },
      ],
    });
    const lambda = mockClient(LambdaClient);
    lambda
      .on(GetFunctionConfigurationCommand, { FunctionName: 'prod-allocations' })
      .resolves({ Environment: { Variables: { PLACEMENT_RELEASE: '1.1.0' } }, LastUpdateStatus: 'Successful' });
    lambda
      .on(GetFunctionConfigurationCommand, { FunctionName: 'prod-traits' })
      .resolves({ Environment: { Variables: { PLACEMENT_RELEASE: '1.1.0' } }, LastUpdateStatus: 'InProgress' });
    lambda
      .on(GetFunctionConfigurationCommand, { FunctionName: 'prod-usages' })
      .resolves({ Environment: { Variables: { PLACEMENT_STAGE: 'prod' } }, LastUpdateStatus: 'Successful' });

    const runners = await stackReleases(
      { cloudFormation: new CloudFormationClient({ region: 'eu-west-1' }), lambda: new LambdaClient({ region: 'eu-west-1' }) },
      'placement-prod',
      () => [1, 2],
    );
    expect(runners).toEqual([
      { name: 'prod-allocations', release: '1.1.0', known: [1, 2], updating: false },
      { name: 'prod-traits', release: '1.1.0', known: [1, 2], updating: true },
      { name: 'prod-usages', release: '1.0.0', known: [1] },
    ]);
    expect(cloudFormation.commandCalls(ListStackResourcesCommand)[0]!.args[0].input).toEqual({ StackName: 'placement-prod' });
  });
});
