import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { Keystone, identityFromToken } from '../../../shared/auth/keystone.js';
import { checkAuthConfiguration, fromAuthorizerContext, noAuthIdentity, toAuthorizerContext } from '../../../shared/auth/authenticate.js';
import { handler as authorizer } from '../../../functions/authorizer.js';

/** A stand-in Keystone: one service user, user tokens it knows, counters. */
class FakeKeystone {
  server: Server = createServer((request, response) => this.answer(request.method!, request.headers, response));
  url = '';
  logins = 0;
  validations = 0;
  serviceTokens = new Set<string>();
  serviceExpiresAt = new Date(Date.now() + 3_600_000).toISOString();
  userTokens = new Map<string, object>();
  failWith: number | undefined;
  /** Keystone's answer to every call takes this long. */
  delayMs = 0;

  private answer(method: string, headers: Record<string, string | string[] | undefined>, response: ServerResponse): void {
    if (this.delayMs > 0) {
      setTimeout(() => this.reply(method, headers, response), this.delayMs);
      return;
    }
    this.reply(method, headers, response);
  }

  private reply(method: string, headers: Record<string, string | string[] | undefined>, response: ServerResponse): void {
    if (this.failWith) {
      response.writeHead(this.failWith).end();
      return;
    }
    if (method === 'POST') {
      this.logins++;
      const token = `service-${this.logins}`;
      this.serviceTokens.add(token);
      response.writeHead(201, { 'x-subject-token': token, 'content-type': 'application/json' });
      response.end(JSON.stringify({ token: { expires_at: this.serviceExpiresAt } }));
      return;
    }
    this.validations++;
    const token = this.userTokens.get(String(headers['x-subject-token']));
    if (!this.serviceTokens.has(String(headers['x-auth-token']))) response.writeHead(401).end();
    else if (token === undefined) response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
  }
}

const future = () => new Date(Date.now() + 3_600_000).toISOString();
const credentials = async () => ({ username: 'placement', password: 'x', userDomainName: 'Default', projectName: 'service', projectDomainName: 'Default' });

describe('Keystone token validation', () => {
  const fake = new FakeKeystone();
  let clock = Date.now();
  const keystone = (cacheSeconds = 60, url = fake.url) => new Keystone({ url, credentials, cacheSeconds, now: () => clock });

  beforeAll(async () => {
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as { port: number }).port}/v3`;
  });
  afterAll(() => new Promise((resolve) => fake.server.close(resolve)));
  beforeEach(() => {
    clock = Date.now();
    fake.logins = 0;
    fake.validations = 0;
    fake.failWith = undefined;
    fake.delayMs = 0;
    fake.serviceExpiresAt = future();
    fake.userTokens.set('project-token', {
      expires_at: future(),
      user: { id: 'u1', domain: { id: 'default' } },
      project: { id: 'p1', domain: { id: 'default' } },
      roles: [{ name: 'reader' }, { name: 'member' }],
    });
  });

  it("returns the caller's identity and caches it", async () => {
    const client = keystone();
    const outcome = await client.authenticate('project-token');
    expect(outcome).toEqual({
      kind: 'valid',
      identity: { userId: 'u1', projectId: 'p1', roles: ['reader', 'member'], systemScope: undefined, domainId: undefined },
    });
    await client.authenticate('project-token');
    expect(fake.validations).toBe(1);
    expect(fake.logins).toBe(1);
    clock += 61_000;
    await client.authenticate('project-token');
    expect(fake.validations).toBe(2);
  });

  it('never caches past the token expiry, nor when the cache time is 0', async () => {
    fake.userTokens.set('short', { expires_at: new Date(clock + 5_000).toISOString(), user: { id: 'u' }, roles: [] });
    const client = keystone();
    await client.authenticate('short');
    clock += 6_000;
    expect(await client.authenticate('short')).toEqual({ kind: 'invalid' });
    expect(fake.validations).toBe(2);
    const uncached = keystone(0);
    await uncached.authenticate('project-token');
    await uncached.authenticate('project-token');
    expect(fake.validations).toBe(4);
  });

  it('calls unknown, revoked and missing tokens invalid, without caching them', async () => {
    const client = keystone();
    expect(await client.authenticate('unknown')).toEqual({ kind: 'invalid' });
    fake.userTokens.set('unknown', { expires_at: future(), user: { id: 'u' }, roles: [] });
    expect((await client.authenticate('unknown')).kind).toBe('valid');
    expect(await client.authenticate(undefined)).toEqual({ kind: 'invalid' });
    expect(await client.authenticate('')).toEqual({ kind: 'invalid' });
  });

  it('logs in again when its own token expires or is refused', async () => {
    fake.serviceExpiresAt = new Date(clock + 120_000).toISOString();
    const client = keystone(0);
    await client.authenticate('project-token');
    clock += 90_000; // within a minute of expiry
    await client.authenticate('project-token');
    expect(fake.logins).toBe(2);
    fake.serviceTokens.clear(); // revoked behind our back
    expect((await client.authenticate('project-token')).kind).toBe('valid');
    expect(fake.logins).toBe(3);
  });

  it('reports Keystone unavailable when it errs or cannot be reached', async () => {
    fake.failWith = 500;
    expect((await keystone().authenticate('project-token')).kind).toBe('unavailable');
    const closed = await keystone(60, 'http://127.0.0.1:1').authenticate('project-token');
    expect(closed).toMatchObject({ kind: 'unavailable', reason: expect.stringContaining('cannot reach Keystone') });
  });

  it('bounds a whole authentication, login and validation together, by the timeout', async () => {
    fake.delayMs = 150;
    const slow = (timeoutMs: number) => new Keystone({ url: fake.url, credentials, cacheSeconds: 60, now: () => clock, timeoutMs });
    // Each call alone fits in 250 ms; the login and the validation together do not. The second bound leaves
    // room for a loaded machine, where a 150 ms reply can take far longer.
    expect(await slow(250).authenticate('project-token')).toMatchObject({ kind: 'unavailable', reason: expect.stringContaining('cannot reach Keystone') });
    expect((await slow(30_000).authenticate('project-token')).kind).toBe('valid');
  });

  it('makes the authorizer fail rather than answer "unavailable" when API Gateway caches its answers', async () => {
    const saved = { ...process.env };
    const authorizerWith = async (cacheSeconds: string) => {
      Object.assign(process.env, {
        PLACEMENT_AUTH_STRATEGY: 'keystone',
        PLACEMENT_KEYSTONE_URL: fake.url,
        PLACEMENT_KEYSTONE_USERNAME: 'placement',
        PLACEMENT_KEYSTONE_PASSWORD: 'x',
        PLACEMENT_AUTHORIZER_CACHE_SECONDS: cacheSeconds,
      });
      // A fresh module graph: the Keystone client is built once per configuration.
      vi.resetModules();
      return (await import('../../../functions/authorizer.js')).handler;
    };
    const event = {
      headers: { 'X-Auth-Token': 'project-token' },
      routeKey: 'GET /traits',
      rawPath: '/traits',
    } as unknown as APIGatewayRequestAuthorizerEventV2;
    try {
      const cached = await authorizerWith('60');
      expect(await cached(event)).toMatchObject({ isAuthorized: true, context: { auth: 'valid', userId: 'u1', projectId: 'p1' } });
      fake.failWith = 503;
      // Thrown: API Gateway answers 500 and has no answer to cache, so the token works again as soon as Keystone does.
      await expect(cached({ ...event, headers: { 'X-Auth-Token': 'another-token' } })).rejects.toThrow(/Keystone unavailable/);
      fake.failWith = undefined;
      fake.userTokens.set('another-token', { expires_at: future(), user: { id: 'u2' }, project: { id: 'p2' }, roles: [] });
      expect(await cached({ ...event, headers: { 'X-Auth-Token': 'another-token' } })).toMatchObject({ context: { auth: 'valid', userId: 'u2' } });

      const uncached = await authorizerWith('0');
      fake.failWith = 503;
      // Nothing caches it: the handler answers Placement's 503 from the context.
      expect(await uncached({ ...event, headers: { 'X-Auth-Token': 'third-token' } })).toMatchObject({ isAuthorized: true, context: { auth: 'unavailable' } });
    } finally {
      process.env = saved;
      vi.resetModules();
    }
  });

  it('maps system- and domain-scoped tokens', () => {
    expect(identityFromToken({ user: { id: 'a' }, system: { all: true }, roles: [{ name: 'admin' }] })).toMatchObject({
      systemScope: 'all',
      projectId: undefined,
    });
    expect(identityFromToken({ user: { id: 'a' }, domain: { id: 'd' }, roles: [] })).toMatchObject({ domainId: 'd', systemScope: undefined });
  });
});

describe('the API Gateway authorizer', () => {
  const event = (headers: Record<string, string>) =>
    ({ headers, routeKey: 'GET /traits', rawPath: '/traits' }) as unknown as APIGatewayRequestAuthorizerEventV2;

  it('always lets the request through with the outcome in its context (noauth2 here)', async () => {
    const admin = await authorizer(event({ 'X-Auth-Token': 'admin' }));
    expect(admin).toEqual({
      isAuthorized: true,
      context: { auth: 'valid', userId: 'admin', projectId: 'admin', roles: 'admin', systemScope: '', domainId: '' },
    });
    expect(await authorizer(event({}))).toEqual({ isAuthorized: true, context: { auth: 'invalid' } });
  });

  it('round-trips every outcome through the context', () => {
    const identity = { userId: 'u', projectId: undefined, roles: ['reader', 'member'], systemScope: 'all', domainId: undefined };
    for (const outcome of [{ kind: 'valid', identity }, { kind: 'invalid' }, { kind: 'unavailable', reason: 'down' }] as const) {
      expect(fromAuthorizerContext(toAuthorizerContext(outcome))).toEqual(outcome);
    }
    expect(fromAuthorizerContext(undefined)).toBeUndefined();
    expect(fromAuthorizerContext({ something: 'else' })).toBeUndefined();
  });
});

describe('noauth2', () => {
  const lookup = (headers: Record<string, string>) => (name: string) => headers[name];

  it('refuses to start inside Lambda unless the deployment asked for it', () => {
    const saved = { ...process.env };
    try {
      delete process.env.PLACEMENT_AUTH_STRATEGY;
      expect(() => checkAuthConfiguration()).not.toThrow();
      process.env.AWS_LAMBDA_FUNCTION_NAME = 'placement-traits';
      expect(() => checkAuthConfiguration()).toThrow(/noauth2 \(every caller is an admin\) inside Lambda/);
      process.env.PLACEMENT_AUTH_STRATEGY = 'noauth2';
      process.env.PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA = 'yes';
      expect(() => checkAuthConfiguration()).toThrow(/inside Lambda/);
      process.env.PLACEMENT_ALLOW_NOAUTH2_IN_LAMBDA = 'true';
      expect(() => checkAuthConfiguration()).not.toThrow();
    } finally {
      process.env = saved;
    }
  });

  it('reads user, project, roles and scope as upstream does', () => {
    expect(noAuthIdentity(lookup({ 'x-auth-token': 'admin' }))).toMatchObject({ userId: 'admin', projectId: 'admin', roles: ['admin'] });
    expect(noAuthIdentity(lookup({ 'x-auth-token': 'u:p', 'x-roles': 'reader, member' }))).toMatchObject({
      userId: 'u',
      projectId: 'p',
      roles: ['reader', 'member'],
    });
    expect(noAuthIdentity(lookup({ 'x-auth-token': 'u', 'openstack-system-scope': 'all' }))).toMatchObject({ projectId: undefined, systemScope: 'all' });
    expect(noAuthIdentity(lookup({ 'x-auth-token': 'u', 'x-project-id': 'other' }))).toMatchObject({ projectId: 'other' });
    expect(noAuthIdentity(lookup({}))).toBeUndefined();
  });
});
