/**
 * The service's Keystone credentials from a Secrets Manager secret, as the
 * CDK stack deploys them (PLACEMENT_KEYSTONE_SECRET_ARN). The secret is read
 * at every login rather than once, so a rotated password is picked up the
 * next time the service logs in to Keystone.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CredentialsSource, ServiceCredentials } from './keystone.js';

/** The secret cannot be read or does not hold usable credentials. Its message never contains the secret's value. */
export class KeystoneSecretError extends Error {
  override name = 'KeystoneSecretError';
}

/** Bounds one read, retries included, so a login still fails well within the authorizer's time limit. */
const READ_TIMEOUT_MS = 3_000;

let sharedClient: SecretsManagerClient | undefined;

function secretsManager(): SecretsManagerClient {
  if (sharedClient === undefined) {
    sharedClient = new SecretsManagerClient({});
    // As for DynamoDB (shared/storage/client.ts): nothing is logged, so the step only costs time.
    sharedClient.middlewareStack.remove('loggerMiddleware');
  }
  return sharedClient;
}

/** Reads the secret `arn` each time it is called; `client` defaults to one shared client configured from the environment. */
export function secretCredentials(arn: string, client?: SecretsManagerClient): CredentialsSource {
  return async () => {
    let secretString: string | undefined;
    try {
      const command = new GetSecretValueCommand({ SecretId: arn });
      ({ SecretString: secretString } = await (client ?? secretsManager()).send(command, { abortSignal: AbortSignal.timeout(READ_TIMEOUT_MS) }));
    } catch (error) {
      throw new KeystoneSecretError(`cannot read the Keystone credentials secret ${arn}: ${(error as Error).message}`, { cause: error });
    }
    if (secretString === undefined) throw new KeystoneSecretError(`the Keystone credentials secret ${arn} has no SecretString`);
    return parseServiceCredentials(secretString, arn);
  };
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
