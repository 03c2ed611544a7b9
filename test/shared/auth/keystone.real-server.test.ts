/**
 * Placement against a real Keystone (Debian's package, on loopback), secure
 * RBAC on: real tokens for a system admin, a reader, a member of another
 * project; bad, revoked and missing tokens; Keystone going away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionUrlContext, functionUrlEvent } from '../../support/function-url.js';
import { useLocalService } from '../../support/local-service.js';
import { ADMIN_PASSWORD, KeystoneAdmin, issueToken, keystoneUnavailableReason, startKeystone, type KeystoneServer } from '../../support/keystone-server.js';

const unavailable = keystoneUnavailableReason();
if (unavailable) console.warn(`[keystone tests skipped] ${unavailable}`);

const PASSWORD = 'test-user-secret';

describe.skipIf(unavailable !== undefined)('Placement with Keystone authentication and secure RBAC', () => {
  let keystone: KeystoneServer;
  let admin: KeystoneAdmin;
  const projects = { a: '', b: '' };
  const tokens = { systemAdmin: '', projectAdmin: '', systemReader: '', projectReader: '', otherMember: '' };
  // Keystone is set up in a hook of its own, before the service's: each gets the whole hook timeout.
  beforeAll(async () => {
    keystone = await startKeystone();
    admin = await KeystoneAdmin.login(keystone.url, 'admin', ADMIN_PASSWORD, 'system');
    const serviceProject = await admin.createProject('service');
    projects.a = await admin.createProject('project-a');
    projects.b = await admin.createProject('project-b');

    const placement = await admin.createUser('placement', PASSWORD);
    await admin.grant(placement, 'service', { projectId: serviceProject });
    const reader = await admin.createUser('reader', PASSWORD);
    await admin.grant(reader, 'reader', 'system');
    await admin.grant(reader, 'reader', { projectId: projects.a });
    const member = await admin.createUser('member', PASSWORD);
    await admin.grant(member, 'member', { projectId: projects.b });
    const adminId = await admin.createUser('project-admin', PASSWORD);
    await admin.grant(adminId, 'admin', { projectId: projects.a });

    tokens.systemAdmin = await issueToken(keystone.url, 'admin', ADMIN_PASSWORD, 'system');
    tokens.projectAdmin = await issueToken(keystone.url, 'project-admin', PASSWORD, { projectId: projects.a });
    tokens.systemReader = await issueToken(keystone.url, 'reader', PASSWORD, 'system');
    tokens.projectReader = await issueToken(keystone.url, 'reader', PASSWORD, { projectId: projects.a });
    tokens.otherMember = await issueToken(keystone.url, 'member', PASSWORD, { projectId: projects.b });
  });
  const service = useLocalService(() => {
    return {
      PLACEMENT_AUTH_STRATEGY: 'keystone',
      PLACEMENT_KEYSTONE_URL: keystone.url,
      PLACEMENT_KEYSTONE_USERNAME: 'placement',
      PLACEMENT_KEYSTONE_PASSWORD: PASSWORD,
      PLACEMENT_KEYSTONE_PROJECT_NAME: 'service',
      // No cache: a revoked token must be refused at once, and Keystone's absence noticed.
      PLACEMENT_KEYSTONE_CACHE_SECONDS: '0',
      // Keystone's own speed is not under test: on a loaded machine one check can take longer than the default 5 s.
      PLACEMENT_KEYSTONE_TIMEOUT_SECONDS: '120',
      PLACEMENT_ENFORCE_SCOPE: 'true',
      PLACEMENT_ENFORCE_NEW_DEFAULTS: 'true',
    };
  });
  afterAll(() => keystone?.stop());

  const as = (token: string | undefined) => service.client({ token, version: '1.39' });

  it('serves the version document without a token', async () => {
    expect((await as(undefined)('GET', '/')).status).toBe(200);
  });

  it('lets a system admin create and list providers', async () => {
    const created = await as(tokens.systemAdmin)('POST', '/resource_providers', { name: 'keystone-rp' });
    expect(created.status).toBe(200);
    const listed = await as(tokens.systemAdmin)('GET', '/resource_providers');
    expect(listed.status).toBe(200);
    expect(listed.body.resource_providers.map((provider: { name: string }) => provider.name)).toContain('keystone-rp');
  });

  it('refuses a project-scoped admin the system-scoped provider APIs', async () => {
    expect((await as(tokens.projectAdmin)('GET', '/resource_providers')).status).toBe(403);
  });

  it('lets a system reader read but not write', async () => {
    expect((await as(tokens.systemReader)('GET', '/resource_providers')).status).toBe(200);
    expect((await as(tokens.systemReader)('GET', '/traits')).status).toBe(200);
    const write = await as(tokens.systemReader)('POST', '/resource_providers', { name: 'by-reader' });
    expect(write.status).toBe(403);
    expect(write.body.errors[0].detail).toContain('Policy does not allow placement:resource_providers:create to be performed.');
  });

  it("lets a project reader read its own project's usages only", async () => {
    expect((await as(tokens.projectReader)('GET', `/usages?project_id=${projects.a}`)).status).toBe(200);
    expect((await as(tokens.projectReader)('GET', `/usages?project_id=${projects.b}`)).status).toBe(403);
    expect((await as(tokens.projectReader)('GET', '/resource_providers')).status).toBe(403);
  });

  it('refuses a member of another project', async () => {
    expect((await as(tokens.otherMember)('GET', `/usages?project_id=${projects.a}`)).status).toBe(403);
    expect((await as(tokens.otherMember)('GET', '/resource_providers')).status).toBe(403);
    expect((await as(tokens.otherMember)('GET', `/usages?project_id=${projects.b}`)).status).toBe(200);
  });

  it("answers 401 in keystonemiddleware's shape for a bad or missing token", async () => {
    for (const token of ['not-a-token', undefined]) {
      const response = await as(token)('GET', '/resource_providers');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(`Keystone uri="${keystone.url}"`);
      expect(response.body).toEqual({ error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } });
    }
  });

  it('answers 401 for a revoked token', async () => {
    const token = await issueToken(keystone.url, 'reader', PASSWORD, 'system');
    expect((await as(token)('GET', '/resource_providers')).status).toBe(200);
    await admin.revoke(token);
    expect((await as(token)('GET', '/resource_providers')).status).toBe(401);
  });

  it('validates tokens in the handlers behind the function-URL front door, with the same policy', async () => {
    const { handler: router } = await import('../../../functions/router.js');
    const get = (token: string | undefined) =>
      router(
        functionUrlEvent('GET', '/resource_providers', { headers: { ...(token && { 'x-auth-token': token }), 'openstack-api-version': 'placement 1.39' } }),
        functionUrlContext,
      );
    expect((await get(tokens.systemAdmin)).statusCode).toBe(200);
    expect((await get(tokens.systemReader)).statusCode).toBe(200);
    expect((await get(tokens.projectAdmin)).statusCode).toBe(403);
    for (const token of ['not-a-token', undefined]) {
      const refused = await get(token);
      expect(refused.statusCode).toBe(401);
      expect(refused.headers!['www-authenticate']).toBe(`Keystone uri="${keystone.url}"`);
    }
  });

  // Last: stops Keystone.
  it('answers 503, not 500, when Keystone cannot be reached', async () => {
    await keystone.stop();
    const response = await as(tokens.systemAdmin)('GET', '/resource_providers');
    expect(response.status).toBe(503);
    expect(response.body.title).toBe('Service Unavailable');
    expect(response.body.message).toContain('The Keystone service is temporarily unavailable.');
    // The same behind the function URL, where the handler itself asks Keystone.
    const { handler: router } = await import('../../../functions/router.js');
    const viaUrl = await router(
      functionUrlEvent('GET', '/resource_providers', { headers: { 'x-auth-token': tokens.systemAdmin, 'openstack-api-version': 'placement 1.39' } }),
      functionUrlContext,
    );
    expect(viaUrl.statusCode).toBe(503);
  });
});
