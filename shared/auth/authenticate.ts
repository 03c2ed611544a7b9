/**
 * Who is calling: the one place that turns a request's headers into the
 * Identity the policy check uses, by the configured strategy (upstream's
 * noauth2 or Keystone). The API Gateway authorizer and the authenticate
 * middleware both call it; the authorizer hands its outcome to the handlers
 * through API Gateway's authorizer context, encoded here as well.
 */
import type { Identity } from '../domain/policy.js';
import { config } from '../config.js';
import { Keystone, type AuthOutcome, type CredentialsSource, type SharedValidations } from './keystone.js';

export type HeaderLookup = (name: string) => string | undefined;

export type AuthStrategy = 'noauth2' | 'keystone';

export function authStrategy(): AuthStrategy {
  const strategy = config.authStrategy;
  if (strategy !== 'noauth2' && strategy !== 'keystone') {
    throw new Error(`PLACEMENT_AUTH_STRATEGY must be "noauth2" or "keystone", not ${JSON.stringify(strategy)}`);
  }
  return strategy;
}

/**
 * noauth2: the token names the user ("admin" is an admin, "user:project" sets
 * the project), `x-roles` overrides the roles, `openstack-system-scope` makes
 * the token system scoped. As upstream reads the context from the request
 * headers after noauth2 filled them in, `x-project-id` and `x-domain-id`
 * sent by the client are taken too.
 */
export function noAuthIdentity(header: HeaderLookup): Identity | undefined {
  const token = header('x-auth-token');
  if (token === undefined) return undefined;
  const [userId = '', ...rest] = token.split(':');
  const rolesHeader = header('x-roles');
  const roles = rolesHeader !== undefined ? rolesHeader.split(',').map((role) => role.trim()) : userId === 'admin' ? ['admin'] : [];
  const systemScope = header('openstack-system-scope') || undefined;
  const projectId = header('x-project-id') ?? (systemScope ? undefined : rest.join(':') || userId);
  return { userId, projectId, roles, systemScope, domainId: header('x-domain-id') || undefined };
}

/** The service credentials from PLACEMENT_KEYSTONE_* variables. */
function environmentCredentials(): CredentialsSource {
  const username = config.keystoneUsername;
  const password = config.keystonePassword;
  if (!username || !password) throw new Error('PLACEMENT_AUTH_STRATEGY=keystone needs PLACEMENT_KEYSTONE_USERNAME and PLACEMENT_KEYSTONE_PASSWORD');
  const credentials = {
    username,
    password,
    userDomainName: config.keystoneUserDomainName,
    projectName: config.keystoneProjectName,
    projectDomainName: config.keystoneProjectDomainName,
  };
  return async () => credentials;
}

/** Turns the ARN of a secret holding the service credentials into their source (shared/auth/secret-credentials.ts). */
export type SecretCredentialsReader = (arn: string) => CredentialsSource;

let secretReader: SecretCredentialsReader | undefined;

/**
 * Only the authorizer (functions/authorizer.ts) may read the secret, so only
 * it provides the reader: imported here, the reader would be in every handler
 * bundle, and handlers take the identity from the authorizer's context anyway.
 */
export function readKeystoneSecretWith(reader: SecretCredentialsReader): void {
  secretReader = reader;
}

function credentialsSource(): CredentialsSource {
  const arn = config.keystoneSecretArn;
  if (arn === undefined) return environmentCredentials();
  // Resolved at each login, not now: every function gets the ARN and builds this client at start, but only the authorizer reads the secret.
  return async () => {
    if (secretReader === undefined) {
      throw new Error('PLACEMENT_KEYSTONE_SECRET_ARN is set but only the authorizer reads that secret: requests must pass through the authorizer');
    }
    return secretReader(arn)();
  };
}

let sharedValidations: SharedValidations | undefined;

/**
 * Behind the function URL every router instance validates tokens itself:
 * the router (functions/router.ts) shares the validations through the table,
 * so that Keystone is asked once per token rather than once per token and
 * instance. Behind API Gateway the authorizer's cache does that, and the
 * authorizer's bundle carries no DynamoDB client.
 */
export function shareKeystoneValidationsWith(shared: SharedValidations): void {
  sharedValidations = shared;
}

/** Looked up at each use, so that a client built before the router shared its validations uses them too. */
const delegatedValidations: SharedValidations = {
  get: async (digest) => sharedValidations?.get(digest),
  put: async (digest, validation) => sharedValidations?.put(digest, validation),
};

let keystoneClient: Keystone | undefined;

/** The Keystone client the configuration describes; throws when it is incomplete. */
export function keystone(): Keystone {
  if (keystoneClient === undefined) {
    const url = config.keystoneUrl;
    if (!url) throw new Error('PLACEMENT_AUTH_STRATEGY=keystone needs PLACEMENT_KEYSTONE_URL');
    const cacheSeconds = config.keystoneCacheSeconds;
    if (!Number.isFinite(cacheSeconds) || cacheSeconds < 0) throw new Error('PLACEMENT_KEYSTONE_CACHE_SECONDS must be a number of seconds');
    const timeoutSeconds = config.keystoneTimeoutSeconds;
    if (!(timeoutSeconds > 0)) throw new Error('PLACEMENT_KEYSTONE_TIMEOUT_SECONDS must be a positive number of seconds');
    keystoneClient = new Keystone({ url, credentials: credentialsSource(), cacheSeconds, timeoutMs: timeoutSeconds * 1000, shared: delegatedValidations });
  }
  return keystoneClient;
}

/**
 * Throws at start on an authentication configuration that could not serve a
 * single request, or that would make every caller an admin in AWS: noauth2
 * inside Lambda unless the deployment explicitly asked for it.
 */
export function checkAuthConfiguration(): void {
  if (authStrategy() === 'keystone') keystone();
  else if (config.inLambda && !config.allowNoauth2InLambda) {
    throw new Error(
      'PLACEMENT_AUTH_STRATEGY is noauth2 (every caller is an admin) inside Lambda; deploy with auth=keystone, or with the auth=noauth2 context for a throw-away test deployment',
    );
  }
}

export async function authenticateHeaders(header: HeaderLookup): Promise<AuthOutcome> {
  if (authStrategy() === 'keystone') return keystone().authenticate(header('x-auth-token'));
  const identity = noAuthIdentity(header);
  return identity ? { kind: 'valid', identity } : { kind: 'invalid' };
}

/** API Gateway's authorizer context holds flat strings only. */
export type AuthorizerContext = Record<string, string>;

export function toAuthorizerContext(outcome: AuthOutcome): AuthorizerContext {
  if (outcome.kind === 'invalid') return { auth: 'invalid' };
  if (outcome.kind === 'unavailable') return { auth: 'unavailable', reason: outcome.reason };
  const { identity } = outcome;
  return {
    auth: 'valid',
    userId: identity.userId,
    projectId: identity.projectId ?? '',
    roles: identity.roles.join(','),
    systemScope: identity.systemScope ?? '',
    domainId: identity.domainId ?? '',
  };
}

/** The authorizer's outcome, or undefined when the request did not pass through our authorizer. */
export function fromAuthorizerContext(context: Record<string, unknown> | undefined): AuthOutcome | undefined {
  const value = (key: string) => (typeof context?.[key] === 'string' && context[key] !== '' ? (context[key] as string) : undefined);
  switch (value('auth')) {
    case 'invalid':
      return { kind: 'invalid' };
    case 'unavailable':
      return { kind: 'unavailable', reason: value('reason') ?? 'authorizer could not reach Keystone' };
    case 'valid':
      return {
        kind: 'valid',
        identity: {
          userId: value('userId') ?? '',
          projectId: value('projectId'),
          roles: value('roles')?.split(',') ?? [],
          systemScope: value('systemScope'),
          domainId: value('domainId'),
        },
      };
    default:
      return undefined;
  }
}
