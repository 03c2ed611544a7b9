/**
 * Token validation against Keystone, the part of keystonemiddleware's
 * auth_token Placement needs: the service logs in with its own credentials
 * (password auth, project scoped), then asks Keystone about each caller's
 * token (GET /v3/auth/tokens with X-Subject-Token). Valid tokens are cached
 * for a short, configurable time so a busy Lambda does not ask for every
 * request, in the instance and, when given a shared cache, for every
 * instance at once; invalid ones are not, so a token revoked and re-issued
 * is not refused from cache. However many instances hold a validation, none
 * believes it past the time it was first given for (the revocation bound).
 */
import { createHash } from 'node:crypto';
import type { Identity } from '../domain/policy.js';

/** What the service logs in to Keystone with. */
export interface ServiceCredentials {
  username: string;
  password: string;
  userDomainName: string;
  projectName: string;
  projectDomainName: string;
}

/** Where the credentials come from (environment locally; a secret store in AWS). Called again when the service token expires. */
export type CredentialsSource = () => Promise<ServiceCredentials>;

/** The result of authenticating one request. */
export type AuthOutcome = { kind: 'valid'; identity: Identity } | { kind: 'invalid' } | { kind: 'unavailable'; reason: string };

/** Validations every instance of the service reads and writes (a table item per token digest); keyed by the token's SHA-256. */
export interface SharedValidations {
  get(digest: string): Promise<{ identity: Identity; validUntil: number } | undefined>;
  put(digest: string, validation: { identity: Identity; validUntil: number }): Promise<void>;
}

export interface KeystoneOptions {
  /** Keystone's endpoint, e.g. http://keystone:5000 (with or without /v3). */
  url: string;
  credentials: CredentialsSource;
  cacheSeconds: number;
  /** Validations shared with the other instances; a failure to read or write them only costs a question to Keystone. */
  shared?: SharedValidations;
  /**
   * Bounds each authentication, all its calls to Keystone together (a login,
   * a validation, one retry): the authorizer must answer within API
   * Gateway's 10 s, after at most 3 s reading the credentials secret.
   */
  timeoutMs?: number;
  now?: () => number;
}

interface KeystoneToken {
  expires_at?: string;
  user?: { id?: string; domain?: { id?: string } };
  project?: { id?: string; domain?: { id?: string } };
  domain?: { id?: string };
  system?: { all?: boolean };
  roles?: { name?: string }[];
}

/** Keystone's answer was not one a working Keystone gives: treat it like Keystone being down. */
class KeystoneError extends Error {}

/** Keystone's token document as the identity the policy check uses. */
export function identityFromToken(token: KeystoneToken): Identity {
  return {
    userId: token.user?.id ?? '',
    projectId: token.project?.id,
    roles: (token.roles ?? []).map((role) => role.name ?? '').filter(Boolean),
    systemScope: token.system?.all ? 'all' : undefined,
    domainId: token.domain?.id,
  };
}

const MAX_CACHED_TOKENS = 10_000;
/** Log in again this long before the service token expires, so no validation races its expiry. */
const SERVICE_TOKEN_MARGIN_MS = 60_000;

export class Keystone {
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private serviceToken: { value: string; expiresAt: number } | undefined;
  private readonly cache = new Map<string, { identity: Identity; until: number }>();

  constructor(private readonly options: KeystoneOptions) {
    this.base = options.url.replace(/\/+$/, '').replace(/\/v3$/, '');
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  /** The URL 401 responses point clients at (WWW-Authenticate), like auth_token's www_authenticate_uri. */
  get authenticateUri(): string {
    return this.options.url;
  }

  async authenticate(token: string | undefined): Promise<AuthOutcome> {
    if (!token) return { kind: 'invalid' };
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.cache.get(key);
    if (cached && cached.until > this.now()) return { kind: 'valid', identity: cached.identity };
    this.cache.delete(key);
    const shared = await this.options.shared?.get(key).catch(() => undefined);
    if (shared && shared.validUntil > this.now()) {
      this.remember(key, shared.identity, shared.validUntil);
      return { kind: 'valid', identity: shared.identity };
    }
    try {
      const body = await this.validate(token, AbortSignal.timeout(this.timeoutMs));
      if (body === undefined) return { kind: 'invalid' };
      const expiresAt = body.expires_at ? Date.parse(body.expires_at) : Number.POSITIVE_INFINITY;
      if (!(expiresAt > this.now())) return { kind: 'invalid' };
      const identity = identityFromToken(body);
      const until = Math.min(expiresAt, this.now() + this.options.cacheSeconds * 1000);
      this.remember(key, identity, until);
      if (until > this.now()) await this.options.shared?.put(key, { identity, validUntil: until }).catch(() => undefined);
      return { kind: 'valid', identity };
    } catch (error) {
      return { kind: 'unavailable', reason: (error as Error).message };
    }
  }

  private remember(key: string, identity: Identity, until: number): void {
    if (until <= this.now()) return;
    if (this.cache.size >= MAX_CACHED_TOKENS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { identity, until });
  }

  /** The token document, or undefined when Keystone says the token is not (or no longer) valid. */
  private async validate(token: string, signal: AbortSignal, retried = false): Promise<KeystoneToken | undefined> {
    const response = await this.call('/v3/auth/tokens?nocatalog', signal, {
      method: 'GET',
      headers: { 'x-auth-token': await this.ownToken(signal), 'x-subject-token': token, accept: 'application/json' },
    });
    if (response.status === 200) return ((await response.json()) as { token: KeystoneToken }).token;
    if (response.status === 404) return undefined;
    if (response.status === 401 && !retried) {
      // Our own token was revoked or expired early: log in again once.
      this.serviceToken = undefined;
      return this.validate(token, signal, true);
    }
    throw new KeystoneError(`token validation answered ${response.status}`);
  }

  private async ownToken(signal: AbortSignal): Promise<string> {
    if (this.serviceToken && this.serviceToken.expiresAt - SERVICE_TOKEN_MARGIN_MS > this.now()) return this.serviceToken.value;
    const credentials = await this.options.credentials();
    const response = await this.call('/v3/auth/tokens?nocatalog', signal, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: credentials.username, domain: { name: credentials.userDomainName }, password: credentials.password } },
          },
          scope: { project: { name: credentials.projectName, domain: { name: credentials.projectDomainName } } },
        },
      }),
    });
    const value = response.headers.get('x-subject-token');
    if (response.status !== 201 || !value) throw new KeystoneError(`service login answered ${response.status}`);
    const { token } = (await response.json()) as { token: KeystoneToken };
    this.serviceToken = { value, expiresAt: token.expires_at ? Date.parse(token.expires_at) : Number.POSITIVE_INFINITY };
    return value;
  }

  private async call(path: string, signal: AbortSignal, init: RequestInit): Promise<Response> {
    try {
      return await fetch(`${this.base}${path}`, { ...init, signal });
    } catch (error) {
      throw new KeystoneError(`cannot reach Keystone at ${this.base}: ${(error as Error).message}`);
    }
  }
}
