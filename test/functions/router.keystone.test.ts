/**
 * The function-URL router with Keystone: its instances share what Keystone
 * said about a token through the table, so a token is validated once per
 * cache period whatever the number of instances (the sharing itself is
 * tested in test/shared/auth/keystone.test.ts).
 */
import { createHash } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTokenValidation } from '../../shared/storage/token-validations.js';
import { FakeKeystone } from '../support/fake-keystone.js';
import { functionUrlContext as context, functionUrlEvent } from '../support/function-url.js';
import { useLocalService } from '../support/local-service.js';

const keystone = new FakeKeystone();
beforeAll(async () => {
  await new Promise<void>((resolve) => keystone.server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => new Promise((resolve) => keystone.server.close(resolve)));

useLocalService(async () => {
  await new Promise<void>((resolve) => (keystone.server.listening ? resolve() : keystone.server.once('listening', resolve)));
  return {
    PLACEMENT_AUTH_STRATEGY: 'keystone',
    PLACEMENT_KEYSTONE_URL: `http://127.0.0.1:${(keystone.server.address() as { port: number }).port}/v3`,
    PLACEMENT_KEYSTONE_USERNAME: 'placement',
    PLACEMENT_KEYSTONE_PASSWORD: 'x',
  };
});

type Router = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

describe('the function-URL router with Keystone', () => {
  it('records each token Keystone called valid in the table for the other instances, keyed by its digest', async () => {
    keystone.userTokens.set('reader-token', {
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      user: { id: 'u1' },
      system: { all: true },
      roles: [{ name: 'admin' }],
    });
    const router: Router = (await import('../../functions/router.js')).handler;
    const list = () => router(functionUrlEvent('GET', '/resource_providers', { headers: { 'x-auth-token': 'reader-token' } }), context);
    expect((await list()).statusCode).toBe(200);
    expect((await list()).statusCode).toBe(200);
    expect(keystone.validations).toBe(1);
    const shared = await getTokenValidation(createHash('sha256').update('reader-token').digest('hex'));
    expect(shared).toMatchObject({ identity: { userId: 'u1', roles: ['admin'], systemScope: 'all' } });
    expect(shared!.validUntil).toBeGreaterThan(Date.now());
  });
});
