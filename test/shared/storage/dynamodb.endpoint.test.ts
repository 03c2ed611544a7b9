/**
 * DynamoDB's endpoint as shared/storage/dynamodb.ts resolves it by hand,
 * held to the SDK's DynamoDB client's own endpoint rules for a region of
 * each partition, with and without FIPS and dual-stack, and with a custom
 * endpoint: the same URL, or the same refusal.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { regionalEndpoint } from '../../../shared/storage/dynamodb.js';

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
];
const sdk = new DynamoDBClient({ region: 'us-east-1' });

/** What the SDK's client sends to, or the refusal it gives. */
function sdkEndpoint(region: string, fips: boolean, dualStack: boolean, custom: string | undefined): string {
  try {
    // Account-based endpoints aside (the SDK prefers them when it knows the account): the same service, another name.
    const parameters = { Region: region, UseFIPS: fips, UseDualStack: dualStack, Endpoint: custom, AccountIdEndpointMode: 'disabled' };
    return sdk.config.endpointProvider(parameters).url.href;
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

function ours(region: string, fips: boolean, dualStack: boolean, custom: string | undefined): string {
  try {
    return regionalEndpoint(region, { fips, dualStack, custom }).href;
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

describe("DynamoDB's endpoint", () => {
  it("is the SDK client's in every partition, FIPS and dual-stack included, a custom endpoint with them refused as it refuses it", () => {
    const cases = REGIONS.flatMap((region) =>
      [false, true].flatMap((fips) =>
        [false, true].flatMap((dualStack) => [undefined, 'https://dynamodb.example.test'].map((custom) => ({ region, fips, dualStack, custom }))),
      ),
    );
    const differences = cases
      .map(({ region, fips, dualStack, custom }) => ({
        region,
        fips,
        dualStack,
        custom,
        ours: ours(region, fips, dualStack, custom),
        sdk: sdkEndpoint(region, fips, dualStack, custom),
      }))
      .filter((row) => row.ours !== row.sdk);
    expect(differences).toEqual([]);
    expect(cases).toHaveLength(REGIONS.length * 8);
    expect(ours('us-gov-west-1', true, false, undefined)).toBe('https://dynamodb.us-gov-west-1.amazonaws.com/');
    expect(ours('eu-west-1', true, true, undefined)).toBe('https://dynamodb-fips.eu-west-1.api.aws/');
  });
});
