/**
 * The service's Keystone credentials from a Secrets Manager secret, as the
 * CDK stack deploys them (PLACEMENT_KEYSTONE_SECRET_ARN). The secret is read
 * at every login rather than once, so a rotated password is picked up the
 * next time the service logs in to Keystone.
 *
 * The read is one signed GetSecretValue request (../aws/json-requests.ts),
 * not a Secrets Manager SDK client's, whose own copy of the SDK's command
 * machinery the functions that read the secret would carry. It goes where and
 * as whom that client would: AWS_ENDPOINT_URL_SECRETS_MANAGER or
 * AWS_ENDPOINT_URL, else the region's endpoint (FIPS, dual-stack:
 * ../aws/endpoints.ts); the region, credentials and
 * attempts the SDK finds in the environment (in the bundles, the credentials
 * are Lambda's variables: infra/lambda-credentials.ts).
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS } from '@smithy/core/config';
import { NODE_MAX_ATTEMPT_CONFIG_OPTIONS } from '@smithy/core/retry';
import { endpointVariants, secretsManagerEndpoint } from '../aws/endpoints.js';
import { JsonService, locationOf, type SdkClientConfig } from '../aws/json-requests.js';
import type { CredentialsSource, ServiceCredentials } from './keystone.js';

/** The secret cannot be read or does not hold usable credentials. Its message never contains the secret's value. */
export class KeystoneSecretError extends Error {
  override name = 'KeystoneSecretError';
}

/** Bounds one read, retries included, so a login still fails well within the authorizer's time limit. */
const READ_TIMEOUT_MS = 3_000;

/** Secrets Manager's endpoint for a client not given one, as the SDK picks it (FIPS and dual-stack included). */
async function endpointOf(region: string): Promise<URL> {
  const custom = process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER || process.env.AWS_ENDPOINT_URL;
  return secretsManagerEndpoint(region, { ...(await endpointVariants()), custom });
}

type ClientConfig = SdkClientConfig & { maxAttempts: () => Promise<number> };

/** Secrets Manager as an SDK client of this configuration would reach it. */
const secretsManager = (config: ClientConfig): JsonService =>
  new JsonService({
    signingName: 'secretsmanager',
    targetPrefix: 'secretsmanager',
    jsonVersion: '1.1',
    locate: () => locationOf(config, endpointOf),
    maxAttempts: config.maxAttempts,
    attemptTimeoutMs: () => READ_TIMEOUT_MS,
  });

let fromEnvironment: JsonService | undefined;

/** What `new SecretsManagerClient({})` would resolve from the environment, once per process. */
function sharedSecretsManager(): JsonService {
  fromEnvironment ??= secretsManager({
    region: loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS),
    credentials: defaultProvider(),
    sha256: Sha256,
    maxAttempts: loadConfig(NODE_MAX_ATTEMPT_CONFIG_OPTIONS),
  });
  return fromEnvironment;
}

/**
 * Reads the secret `arn` each time it is called. `client`, an SDK client
 * the read is not sent through, says where and as whom to read instead of
 * the environment (its endpoint, region, credentials and attempts: the tests
 * point one at a stand-in).
 */
export function secretCredentials(arn: string, client?: SecretsManagerClient): CredentialsSource {
  const service = client && secretsManager(client.config);
  return async () => {
    let answer: string;
    try {
      answer = await (service ?? sharedSecretsManager()).send('GetSecretValue', JSON.stringify({ SecretId: arn }), AbortSignal.timeout(READ_TIMEOUT_MS));
    } catch (error) {
      throw new KeystoneSecretError(`cannot read the Keystone credentials secret ${arn}: ${(error as Error).message}`, { cause: error });
    }
    return parseServiceCredentials(secretStringOf(answer, arn), arn);
  };
}

/** GetSecretValue's answer's SecretString. */
function secretStringOf(answer: string, arn: string): string {
  let document: unknown;
  try {
    document = JSON.parse(answer);
  } catch {
    // Not quoted: JSON.parse's message would quote the text around the error, which may be the secret's.
    throw new KeystoneSecretError(`cannot read the Keystone credentials secret ${arn}: the answer is not JSON`);
  }
  const secretString = (document as { SecretString?: unknown } | null)?.SecretString;
  if (typeof secretString !== 'string') throw new KeystoneSecretError(`the Keystone credentials secret ${arn} has no SecretString`);
  return secretString;
}

/**
 * The secret's JSON: {username, password, userDomainName?, projectName?,
 * projectDomainName?}, the optional fields defaulting as their
 * PLACEMENT_KEYSTONE_* variables do (shared/config.ts).
 */
function parseServiceCredentials(secretString: string, arn: string): ServiceCredentials {
  const malformed = (what: string) =>
    new KeystoneSecretError(
      `the Keystone credentials secret ${arn} ${what}; expected JSON {"username","password","userDomainName"?,"projectName"?,"projectDomainName"?}`,
    );
  let document: unknown;
  try {
    document = JSON.parse(secretString);
  } catch {
    // JSON.parse's own message quotes the text around the error, which may be the password.
    throw malformed('is not JSON');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw malformed('is not a JSON object');
  const fields = document as Record<string, unknown>;
  const field = (name: string, fallback?: string): string => {
    const value = fields[name];
    if (typeof value === 'string' && value !== '') return value;
    if (fallback !== undefined && (value === undefined || value === '')) return fallback;
    throw malformed(fallback === undefined ? `lacks a non-empty string "${name}"` : `has a "${name}" that is not a string`);
  };
  return {
    username: field('username'),
    password: field('password'),
    userDomainName: field('userDomainName', 'Default'),
    projectName: field('projectName', 'service'),
    projectDomainName: field('projectDomainName', 'Default'),
  };
}
