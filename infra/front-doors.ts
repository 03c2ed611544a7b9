/**
 * The two front doors and what each needs of a region: synth refuses a
 * region that lacks one of them (infra/settings.ts), and the preflight
 * (scripts/preflight.ts) asks the region itself before a deploy.
 */

/** What clients reach: API Gateway's HTTP API (the default), or one Lambda function URL on a router function. */
export type FrontDoor = 'httpApi' | 'functionUrl';
export const FRONT_DOORS: readonly FrontDoor[] = ['httpApi', 'functionUrl'];

/**
 * The services a stack uses, as AWS's public SSM parameters name them
 * (/aws/service/global-infrastructure/regions/<region>/services/<name>):
 * CloudFormation and S3 for the deploy itself (CDK's bootstrap bucket),
 * SSM for the bootstrap version, then what the stack creates.
 */
export const SERVICES: Record<FrontDoor, readonly string[]> = {
  httpApi: ['cloudformation', 's3', 'ssm', 'lambda', 'apigateway', 'dynamodb', 'secretsmanager', 'logs', 'cloudwatch', 'sns', 'events'],
  functionUrl: ['cloudformation', 's3', 'ssm', 'lambda', 'dynamodb', 'secretsmanager', 'logs', 'cloudwatch', 'sns', 'events'],
};

/**
 * Regions whose Lambda has no function URLs, though it has functions: the
 * Lambda developer guide's list ("Creating and managing Lambda function
 * URLs", read November 2026). The global-infrastructure parameters do not
 * tell function URLs apart from Lambda, so this list is the one source.
 */
export const REGIONS_WITHOUT_FUNCTION_URLS: readonly string[] = [
  'ap-south-2',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ap-east-2',
  'ca-west-1',
  'eu-south-2',
  'eu-central-2',
  'il-central-1',
  'me-central-1',
];

/** What the front door needs that the region is known to lack, without asking AWS (synth works offline). */
export function knownMissing(region: string, frontDoor: FrontDoor): string[] {
  return frontDoor === 'functionUrl' && REGIONS_WITHOUT_FUNCTION_URLS.includes(region) ? ['Lambda function URLs'] : [];
}
