/**
 * The endpoints of the services called by hand (shared/aws/endpoints.ts),
 * held to the SDK's clients' own endpoint rules for a region of each
 * partition, with and without FIPS and dual-stack, and with a custom
 * endpoint: the same URL, or the same refusal.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { dynamoDbEndpoint, secretsManagerEndpoint, type EndpointSettings } from '../../../shared/aws/endpoints.js';

const REGIONS = [
  'us-east-1',
  'eu-west-1',
  'ap-southeast-7',
  'us-gov-west-1',
  'us-gov-east-1',
  'cn-north-1',
  'cn-northwest-1',
  'us-iso-east-1',
  'us-isob-east-1',
  'eu-isoe-west-1',
  'us-isof-south-1',
  'eusc-de-east-1',
];
const SETTINGS: EndpointSettings[] = [false, true].flatMap((fips) =>
  [false, true].flatMap((dualStack) => [undefined, 'https://service.example.test'].map((custom) => ({ fips, dualStack, custom }))),
);

const outcome = (resolve: () => URL | { url: URL }): string => {
  try {
    const resolved = resolve();
    return (resolved instanceof URL ? resolved : resolved.url).href;
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
};

describe.each([
  { service: 'DynamoDB', ours: dynamoDbEndpoint, sdk: new DynamoDBClient({ region: 'us-east-1' }).config.endpointProvider },
  { service: 'Secrets Manager', ours: secretsManagerEndpoint, sdk: new SecretsManagerClient({ region: 'us-east-1' }).config.endpointProvider },
])("$service's endpoint", ({ ours, sdk }) => {
  it("is its SDK client's in every partition, FIPS and dual-stack included, and refused beside a custom endpoint as the client refuses it", () => {
    const rows = REGIONS.flatMap((region) =>
      SETTINGS.map((settings) => ({
        region,
        ...settings,
        ours: outcome(() => ours(region, settings)),
        // Account-based endpoints aside (the SDK prefers them for DynamoDB when it knows the account): another name of the same service.
        sdk: outcome(() =>
          sdk({
            Region: region,
            UseFIPS: settings.fips,
            UseDualStack: settings.dualStack,
            Endpoint: settings.custom,
            AccountIdEndpointMode: 'disabled',
          } as never),
        ),
      })),
    );
    expect(rows.filter((row) => row.ours !== row.sdk)).toEqual([]);
    expect(rows).toHaveLength(REGIONS.length * 8);
    expect(rows.filter((row) => row.ours.startsWith('refused')).length).toBeGreaterThan(0);
  });
});

it("names GovCloud's FIPS endpoints as the SDK does (DynamoDB's usual one is FIPS there)", () => {
  expect(dynamoDbEndpoint('us-gov-west-1', { fips: true, dualStack: false }).href).toBe('https://dynamodb.us-gov-west-1.amazonaws.com/');
  expect(secretsManagerEndpoint('us-gov-west-1', { fips: true, dualStack: false }).href).toBe('https://secretsmanager-fips.us-gov-west-1.amazonaws.com/');
});
