/**
 * The service's Keystone credentials from Secrets Manager, as deployed: the
 * real SDK client against a stand-in GetSecretValue endpoint
 * (AWS_ENDPOINT_URL_SECRETS_MANAGER), then end to end with a real Keystone
 * (Debian's package) behind the local service's authorizer.
 */
import { randomUUID } from 'node:crypto';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LocalService } from '../../../local/service.js';
import { Keystone } from '../../../shared/auth/keystone.js';
import { KeystoneSecretError, secretCredentials } from '../../../shared/auth/secret-credentials.js';
import { client } from '../../../scripts/lib/placement-client.js';
import { ADMIN_PASSWORD, KeystoneAdmin, issueToken, keystoneUnavailableReason, startKeystone, type KeystoneServer } from '../../support/keystone-server.js';
import { FakeSecretsManager } from '../../support/secrets-manager-server.js';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:placement-keystone-AbCdEf';
const PASSWORD = `pw-${randomUUID()}`;

const store = new FakeSecretsManager();
const savedEnvironment = { ...process.env };

beforeAll(async () => {
  await store.start();
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test-access-key',
    AWS_SECRET_ACCESS_KEY: 'test-secret-key',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: store.url,
  });
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
});

afterAll(async () => {
  await store.stop();
  process.env = savedEnvironment;
});

beforeEach(() => {
  store.secrets.clear();
  store.requests.length = 0;
  store.unreachable = false;
});

describe('Keystone service credentials from a Secrets Manager secret', () => {
  it('asks for the secret the ARN names and defaults the optional fields', async () => {
    store.secrets.set(ARN, JSON.stringify({ username: 'placement', password: PASSWORD }));
    expect(await secretCredentials(ARN)()).toEqual({
      username: 'placement',
      password: PASSWORD,
      userDomainName: 'Default',
      projectName: 'service',
      projectDomainName: 'Default',
    });
    expect(store.requests).toEqual([{ target: 'secretsmanager.GetSecretValue', contentType: 'application/x-amz-json-1.1', body: { SecretId: ARN } }]);
  });

  it('takes every field the secret gives', async () => {
    const full = { username: 'svc', password: PASSWORD, userDomainName: 'users', projectName: 'infra', projectDomainName: 'projects' };
    store.secrets.set(ARN, JSON.stringify(full));
    expect(await secretCredentials(ARN)()).toEqual(full);
  });

  it('reads the secret again at every call, so a rotated password is picked up', async () => {
    const credentials = secretCredentials(ARN);
    store.secrets.set(ARN, JSON.stringify({ username: 'placement', password: 'before-rotation' }));
    expect((await credentials()).password).toBe('before-rotation');
    store.secrets.set(ARN, JSON.stringify({ username: 'placement', password: 'after-rotation' }));
    expect((await credentials()).password).toBe('after-rotation');
    expect(store.requests).toHaveLength(2);
  });

  it('refuses a secret that is not JSON or lacks username or password, without quoting the password', async () => {
    // A short password stored bare is the case JSON.parse's own message would quote whole.
    const bare = 'S3cr3t!';
    const cases: [secret: string, password: string, problem: string][] = [
      [bare, bare, 'is not JSON'],
      [`{"username":"placement","password":"${PASSWORD}"`, PASSWORD, 'is not JSON'],
      [`username=placement password=${PASSWORD}`, PASSWORD, 'is not JSON'],
      [JSON.stringify([PASSWORD]), PASSWORD, 'is not a JSON object'],
      [JSON.stringify({ username: 'placement' }), PASSWORD, 'lacks a non-empty string "password"'],
      [JSON.stringify({ password: PASSWORD }), PASSWORD, 'lacks a non-empty string "username"'],
      [JSON.stringify({ username: 'placement', password: '' }), PASSWORD, 'lacks a non-empty string "password"'],
      [JSON.stringify({ username: 'placement', password: PASSWORD, projectName: 7 }), PASSWORD, 'has a "projectName" that is not a string'],
    ];
    for (const [secret, password, problem] of cases) {
      store.secrets.set(ARN, secret);
      const error = await secretCredentials(ARN)().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(KeystoneSecretError);
      expect((error as Error).message).toContain(`the Keystone credentials secret ${ARN} ${problem}`);
      expect((error as Error).message).not.toContain(password);
    }
  });

  it('makes a secret store that cannot be reached or refuses the read "Keystone unavailable", not a crash', async () => {
    const unreachable = new SecretsManagerClient({ endpoint: 'http://127.0.0.1:1', maxAttempts: 1 });
    const keystone = (credentials: ReturnType<typeof secretCredentials>) => new Keystone({ url: 'http://127.0.0.1:1', credentials, cacheSeconds: 0 });

    const refused = await keystone(secretCredentials(ARN, unreachable)).authenticate('a-user-token');
    expect(refused).toMatchObject({ kind: 'unavailable', reason: expect.stringContaining(`cannot read the Keystone credentials secret ${ARN}: `) });

    const missing = await keystone(secretCredentials(ARN)).authenticate('a-user-token');
    expect(missing).toEqual({
      kind: 'unavailable',
      reason: `cannot read the Keystone credentials secret ${ARN}: Secrets Manager can't find the specified secret.`,
    });
    expect(store.requests).toHaveLength(1);
  });

  it('lets handler functions start with the ARN set, and never read the secret themselves', async () => {
    Object.assign(process.env, { PLACEMENT_AUTH_STRATEGY: 'keystone', PLACEMENT_KEYSTONE_URL: 'http://127.0.0.1:1', PLACEMENT_KEYSTONE_SECRET_ARN: ARN });
    delete process.env.PLACEMENT_KEYSTONE_USERNAME;
    delete process.env.PLACEMENT_KEYSTONE_PASSWORD;
    store.secrets.set(ARN, JSON.stringify({ username: 'placement', password: PASSWORD }));
    // A fresh module graph without the authorizer, as in a handler's bundle.
    vi.resetModules();
    const { handler } = await import('../../../functions/resource-classes.js');
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey: 'GET /resource_classes',
      rawPath: '/resource_classes',
      rawQueryString: '',
      headers: { 'x-auth-token': 'a-user-token' },
      isBase64Encoded: false,
      requestContext: {
        accountId: 'test',
        apiId: 'test',
        domainName: 'localhost',
        domainPrefix: 'localhost',
        http: { method: 'GET', path: '/resource_classes', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
        requestId: 'handler-without-authorizer',
        routeKey: 'GET /resource_classes',
        stage: '$default',
        time: new Date().toISOString(),
        timeEpoch: Date.now(),
      },
    };
    const context = { awsRequestId: 'handler-without-authorizer', functionName: 'resource-classes', getRemainingTimeInMillis: () => 10_000 } as Context;
    const response = await handler(event, context);
    expect(response.statusCode).toBe(503);
    expect(store.requests).toEqual([]);
  });
});

const keystoneMissing = keystoneUnavailableReason();
if (keystoneMissing) console.warn(`[keystone secret tests skipped] ${keystoneMissing}`);

describe.skipIf(keystoneMissing !== undefined)('Placement logging in to Keystone with the credentials from Secrets Manager', () => {
  let keystone: KeystoneServer;
  let service: LocalService;
  let adminToken: string;
  const serviceUser = 'placement-from-secret';
  const get = () => client(service.url, { token: adminToken, version: '1.39' })('GET', '/resource_providers');

  beforeAll(async () => {
    keystone = await startKeystone();
    const admin = await KeystoneAdmin.login(keystone.url, 'admin', ADMIN_PASSWORD, 'system');
    const serviceProject = await admin.createProject('service');
    // The service user's password exists only in the secret.
    await admin.grant(await admin.createUser(serviceUser, PASSWORD), 'service', { projectId: serviceProject });
    adminToken = await issueToken(keystone.url, 'admin', ADMIN_PASSWORD, 'system');

    Object.assign(process.env, {
      PLACEMENT_AUTH_STRATEGY: 'keystone',
      PLACEMENT_KEYSTONE_URL: keystone.url,
      PLACEMENT_KEYSTONE_SECRET_ARN: ARN,
      PLACEMENT_KEYSTONE_CACHE_SECONDS: '0',
      // Keystone's own speed is not under test: on a loaded machine one check can take longer than the default 5 s.
      PLACEMENT_KEYSTONE_TIMEOUT_SECONDS: '120',
    });
    delete process.env.PLACEMENT_KEYSTONE_USERNAME;
    delete process.env.PLACEMENT_KEYSTONE_PASSWORD;
    // The configuration is read as the modules load: a fresh graph, whatever an earlier test loaded.
    vi.resetModules();
    const { startLocalService } = await import('../../../local/service.js');
    service = await startLocalService({ port: 0 });
  });

  afterAll(async () => {
    await service?.stop();
    await keystone?.stop();
  });

  // In order: the service logs in once it has the right credentials, then keeps its token.
  it('answers 503 while the secret store cannot be reached', async () => {
    store.secrets.set(ARN, JSON.stringify({ username: serviceUser, password: PASSWORD }));
    store.unreachable = true;
    const response = await get();
    expect(response.status).toBe(503);
    expect(response.body.message).toContain('The Keystone service is temporarily unavailable.');
  });

  it('logs in to Keystone with the username and password the secret holds, read again after a failed login', async () => {
    store.secrets.set(ARN, JSON.stringify({ username: serviceUser, password: 'not-the-password' }));
    expect((await get()).status).toBe(503);
    store.secrets.set(ARN, JSON.stringify({ username: serviceUser, password: PASSWORD }));
    const response = await get();
    expect(response.status).toBe(200);
    expect(response.body.resource_providers).toEqual(expect.any(Array));
    expect(store.requests.map((request) => request.body.SecretId)).toEqual([ARN, ARN]);
  });

  it('does not read the secret again while its own Keystone token is valid', async () => {
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    expect(store.requests).toEqual([]);
  });
});
