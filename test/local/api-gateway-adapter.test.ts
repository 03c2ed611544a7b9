import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useLocalService } from '../support/local-service.js';
import { client } from '../../scripts/lib/placement-client.js';

const service = useLocalService();
const api = service.client({ token: 'admin', version: '1.39' });

describe('the local service through the API Gateway adapter', () => {
  it('serves the version document without a token', async () => {
    const response = await client(service.url)('GET', '/');
    expect(response.status).toBe(200);
    expect(response.body.versions[0]).toMatchObject({ max_version: '1.39', min_version: '1.0', status: 'CURRENT' });
    expect(response.headers.get('x-openstack-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
  });

  it('answers 401 without a token and 403 for a non-admin under legacy rules', async () => {
    expect((await client(service.url)('GET', '/resource_providers')).status).toBe(401);
    const denied = await client(service.url, { token: 'user', version: '1.23' })('GET', '/resource_providers');
    expect(denied.status).toBe(403);
    expect(denied.body.errors[0]).toMatchObject({ status: 403, title: 'Forbidden', code: 'placement.undefined_code' });
  });

  it('answers 404 for unknown paths and 405 with allow for known paths', async () => {
    expect((await api('GET', '/nope')).status).toBe(404);
    const wrongMethod = await api('PATCH', '/resource_providers');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, POST');
  });

  it('hides routes below the microversion that introduced them', async () => {
    const old = client(service.url, { token: 'admin', version: '1.1' });
    expect((await old('GET', '/resource_classes')).status).toBe(404);
  });

  it('creates, shows, renames and deletes a provider, with generation and links', async () => {
    const uuid = randomUUID();
    const created = await api('POST', '/resource_providers', { name: `rp-${uuid}`, uuid });
    expect(created.status).toBe(200);
    expect(created.headers.get('location')).toBe(`${service.url}/resource_providers/${uuid}`);
    expect(created.body).toMatchObject({ uuid, generation: 0, root_provider_uuid: uuid, parent_provider_uuid: null });

    const renamed = await api('PUT', `/resource_providers/${uuid}`, { name: `renamed-${uuid}` });
    expect(renamed.status).toBe(200);
    expect((await api('GET', `/resource_providers?name=renamed-${uuid}`)).body.resource_providers).toHaveLength(1);
    // The old name is free again.
    const reuse = await api('POST', '/resource_providers', { name: `rp-${uuid}` });
    expect(reuse.status).toBe(200);

    expect((await api('DELETE', `/resource_providers/${uuid}`)).status).toBe(204);
    expect((await api('GET', `/resource_providers/${uuid}`)).status).toBe(404);
  });

  it('refuses a duplicate without writing anything', async () => {
    const uuid = randomUUID();
    expect((await api('POST', '/resource_providers', { name: `dup-${uuid}`, uuid })).status).toBe(200);
    const clash = await api('POST', '/resource_providers', { name: `other-${uuid}`, uuid });
    expect(clash.status).toBe(409);
    expect(clash.body.errors[0].code).toBe('placement.duplicate_name');
    // The name of the refused create was not left claimed.
    expect((await api('POST', '/resource_providers', { name: `other-${uuid}` })).status).toBe(200);
  });

  it('validates bodies against the schema of the microversion', async () => {
    const parentAt113 = await client(service.url, { token: 'admin', version: '1.13' })('POST', '/resource_providers', {
      name: 'x',
      parent_provider_uuid: randomUUID(),
    });
    expect(parentAt113.status).toBe(400);
    expect(parentAt113.body.errors[0].detail).toContain('Additional properties are not allowed');
    const malformed = await fetch(`${service.url}/resource_providers`, {
      method: 'POST',
      headers: { 'x-auth-token': 'admin', 'content-type': 'application/json' },
      body: '{"name"',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('Malformed JSON');
  });

  it('refuses to delete a parent, then deletes leaves first', async () => {
    const parent = (await api('POST', '/resource_providers', { name: `parent-${randomUUID()}` })).body.uuid;
    const child = (await api('POST', '/resource_providers', { name: `child-${randomUUID()}`, parent_provider_uuid: parent })).body;
    expect(child.root_provider_uuid).toBe(parent);
    const refused = await api('DELETE', `/resource_providers/${parent}`);
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0].code).toBe('placement.resource_provider.cannot_delete_parent');
    expect((await api('DELETE', `/resource_providers/${child.uuid}`)).status).toBe(204);
    expect((await api('DELETE', `/resource_providers/${parent}`)).status).toBe(204);
  });
});
