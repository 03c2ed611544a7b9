/**
 * The regional endpoints of the services called by hand (json-requests.ts),
 * as the SDK's clients of those services resolve them from their endpoint
 * rules (test/shared/aws/endpoints.test.ts holds each to its client's):
 * FIPS (`AWS_USE_FIPS_ENDPOINT`, `use_fips_endpoint`) and dual-stack
 * (`AWS_USE_DUALSTACK_ENDPOINT`, `use_dualstack_endpoint`) endpoints
 * included, and either refused beside a custom endpoint
 * (`AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL`), as the SDK refuses it.
 */
import { partition } from '@aws-sdk/core/client';
import { loadConfig, NODE_USE_DUALSTACK_ENDPOINT_CONFIG_OPTIONS, NODE_USE_FIPS_ENDPOINT_CONFIG_OPTIONS } from '@smithy/core/config';

export interface EndpointSettings {
  fips: boolean;
  dualStack: boolean;
  /** A custom endpoint, which the settings above may not go with. */
  custom?: string;
}

/** FIPS and dual-stack as the SDK reads them: its variables, else the AWS config file. */
export async function endpointVariants(): Promise<Pick<EndpointSettings, 'fips' | 'dualStack'>> {
  const [fips, dualStack] = await Promise.all([loadConfig(NODE_USE_FIPS_ENDPOINT_CONFIG_OPTIONS)(), loadConfig(NODE_USE_DUALSTACK_ENDPOINT_CONFIG_OPTIONS)()]);
  return { fips, dualStack };
}

/** `custom`, unless FIPS or dual-stack is asked beside it: the SDK's refusals, in its words. */
function customEndpoint({ fips, dualStack, custom }: EndpointSettings): URL | undefined {
  if (!custom) return undefined;
  if (fips) throw new Error('Invalid Configuration: FIPS and custom endpoint are not supported');
  if (dualStack) throw new Error('Invalid Configuration: Dualstack and custom endpoint are not supported');
  return new URL(custom);
}

/** The region's partition, refused as the SDK refuses a variant the partition does not have. */
function partitionFor(region: string, { fips, dualStack }: EndpointSettings): ReturnType<typeof partition> {
  const found = partition(region);
  if ((fips && !found.supportsFIPS) || (dualStack && !found.supportsDualStack))
    throw new Error(`Invalid Configuration: ${[fips && 'FIPS', dualStack && 'DualStack'].filter(Boolean).join(' and ')} not supported in ${found.name}`);
  return found;
}

/** DynamoDB's endpoint. */
export function dynamoDbEndpoint(region: string, settings: EndpointSettings): URL {
  const custom = customEndpoint(settings);
  if (custom) return custom;
  const { name, dnsSuffix, dualStackDnsSuffix } = partitionFor(region, settings);
  const { fips, dualStack } = settings;
  // GovCloud's regional endpoints are FIPS endpoints already.
  const host = fips && (dualStack || name !== 'aws-us-gov') ? 'dynamodb-fips' : 'dynamodb';
  return new URL(`https://${host}.${region}.${dualStack ? dualStackDnsSuffix : dnsSuffix}`);
}

/** Secrets Manager's endpoint. */
export function secretsManagerEndpoint(region: string, settings: EndpointSettings): URL {
  const custom = customEndpoint(settings);
  if (custom) return custom;
  const { name, dnsSuffix, dualStackDnsSuffix } = partitionFor(region, settings);
  const { fips, dualStack } = settings;
  // Its rules name the usual endpoint for dual-stack in the commercial and GovCloud partitions (it is dual-stack
  // there), and in China unless FIPS is asked too.
  const dualStackIsUsual = name === 'aws' || name === 'aws-us-gov' || (name === 'aws-cn' && !fips);
  const suffix = dualStack && !dualStackIsUsual ? dualStackDnsSuffix : dnsSuffix;
  return new URL(`https://${fips ? 'secretsmanager-fips' : 'secretsmanager'}.${region}.${suffix}`);
}
