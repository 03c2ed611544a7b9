/**
 * The release each function of a deployed stack runs, from AWS's own record
 * of it (the operator's credentials): CloudFormation lists the stack's
 * functions, Lambda gives each one's environment. A function without
 * PLACEMENT_RELEASE predates releases (1.0.0). Where a URL would only reach
 * whichever function serves it, this sees every function.
 */
import { CloudFormationClient, paginateListStackResources } from '@aws-sdk/client-cloudformation';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { FIRST_RELEASE, type Runner } from './region.js';

export interface AwsClients {
  cloudFormation: CloudFormationClient;
  lambda: LambdaClient;
}

export const awsClients = (region: string): AwsClients => ({ cloudFormation: new CloudFormationClient({ region }), lambda: new LambdaClient({ region }) });

/**
 * Each Lambda function of the stack with the release it runs. A function in
 * the middle of an update (LastUpdateStatus InProgress) may still serve the
 * release it had: it is marked so, and nothing is finalized until it is done.
 */
export async function stackReleases(clients: AwsClients, stackName: string, knownOf: (release: string) => number[]): Promise<Runner[]> {
  const names: string[] = [];
  for await (const page of paginateListStackResources({ client: clients.cloudFormation }, { StackName: stackName })) {
    for (const resource of page.StackResourceSummaries ?? [])
      if (resource.ResourceType === 'AWS::Lambda::Function' && resource.PhysicalResourceId) names.push(resource.PhysicalResourceId);
  }
  return Promise.all(
    names.map(async (name) => {
      const configuration = await clients.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: name }));
      const release = configuration.Environment?.Variables?.PLACEMENT_RELEASE;
      if (release === undefined) return { name, ...FIRST_RELEASE };
      return { name, release, known: knownOf(release), updating: configuration.LastUpdateStatus === 'InProgress' };
    }),
  );
}
