/**
 * The function-URL front door: the router function answers function-URL
 * events (payload 2.0 with the function URL's requestContext: no route key,
 * no path parameters, no authorizer) through the same handlers as the API
 * Gateway path, against DynamoDB Local. Each answer is compared with the
 * same request through the local API Gateway adapter.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionUrlContext as context, functionUrlEvent } from '../support/function-url.js';
import { useLocalService } from '../support/local-service.js';

const service = useLocalService();
const api = service.client({ token: 'admin', version: '1.39' });

type Router = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
let router: Router;
let providersHandler: Router;
beforeAll(async () => {
  // Loaded once the service has set PLACEMENT_DYNAMODB_ENDPOINT, as the handlers read it when they load.
  router = (await import('../../functions/router.js')).handler;
  providersHandler = (await import('../../functions/index.js')).handlers['resource-providers'];
});

const admin = { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39' };

/** An answer without what differs between any two answers (request id, dates) and the local server's connection headers. */
function comparable(status: number | undefined, headers: Record<string, unknown> | undefined, body: string | undefined) {
  const {
    'x-openstack-request-id': _id,
    'last-modified': _modified,
    date: _date,
    'content-length': _length,
    connection: _c,
    'keep-alive': _k,
    ...rest
  } = (headers ?? {}) as Record<string, unknown>;
  const json = body ? JSON.parse(body) : undefined;
  for (const error of json?.errors ?? []) delete error.request_id;
  return { status, headers: Object.fromEntries(Object.entries(rest).map(([name, value]) => [name.toLowerCase(), String(value)])), body: json };
}

describe('the function-URL router', () => {
  it('serves the version document without a token', async () => {
    const answer = await router(functionUrlEvent('GET', '/'), context);
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body!).versions[0]).toMatchObject({ id: 'v1.0', status: 'CURRENT' });
  });

  it('creates and reads providers through the same handlers as the API Gateway path', async () => {
    const uuid = randomUUID();
    const created = await router(
      functionUrlEvent('POST', '/resource_providers', {
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ uuid, name: `url-${uuid}` }),
      }),
      context,
    );
    expect(created.statusCode).toBe(200);
    expect(JSON.parse(created.body!)).toMatchObject({ uuid, generation: 0 });

    for (const path of [
      `/resource_providers/${uuid}`,
      `/resource_providers?name=url-${uuid}`,
      `/resource_providers/${uuid}/inventories`,
      '/traits?name=startswith:HW_CPU_X86_AVX',
    ]) {
      const viaUrl = await router(functionUrlEvent('GET', path, { headers: admin }), context);
      const viaApi = await api('GET', path);
      expect(comparable(viaUrl.statusCode, viaUrl.headers, viaUrl.body), path).toEqual(
        comparable(viaApi.status, Object.fromEntries(viaApi.headers), viaApi.text),
      );
      expect(viaUrl.statusCode, path).toBe(200);
    }
  });

  it('decodes a base64 body, as Lambda sends bodies it does not take for text', async () => {
    const name = `CUSTOM_URL_${randomUUID().slice(0, 8).toUpperCase()}`;
    const created = await router(
      functionUrlEvent('POST', '/resource_classes', {
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
        base64: true,
      }),
      context,
    );
    expect(created.statusCode).toBe(201);
    expect((await api('GET', `/resource_classes/${name}`)).status).toBe(200);
  });

  it('answers unknown paths and methods, missing tokens and refused policies as the API Gateway path does', async () => {
    const cases: [string, string, Record<string, string>][] = [
      ['GET', '/nowhere', admin],
      ['PATCH', '/traits', admin],
      ['GET', '/resource_providers', { 'openstack-api-version': 'placement 1.39' }],
      ['GET', '/resource_providers', { 'x-auth-token': 'someone:project', 'openstack-api-version': 'placement 1.39' }],
      ['GET', '/resource_providers', { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 9.99' }],
    ];
    const statuses: number[] = [];
    for (const [method, path, headers] of cases) {
      const viaUrl = await router(functionUrlEvent(method, path, { headers }), context);
      const viaApi = await service.client()(method, path, undefined, headers);
      expect(comparable(viaUrl.statusCode, viaUrl.headers, viaUrl.body), `${method} ${path}`).toEqual(
        comparable(viaApi.status, Object.fromEntries(viaApi.headers), viaApi.text),
      );
      statuses.push(viaUrl.statusCode!);
    }
    expect(statuses).toEqual([404, 405, 401, 403, 406]);
  });

  it('ignores an identity in the request context: only the token counts', async () => {
    const forged = { authorizer: { lambda: { auth: 'valid', userId: 'admin', projectId: 'admin', roles: 'admin', systemScope: '', domainId: '' } } };
    const event = functionUrlEvent('GET', '/resource_providers', {
      headers: { 'x-auth-token': 'someone:project', 'openstack-api-version': 'placement 1.39' },
      requestContext: forged,
    });
    expect((await router(event, context)).statusCode).toBe(403);
    // The handler alone trusts that context (behind API Gateway only our authorizer can set it): the router is what drops it.
    expect((await providersHandler(event, context)).statusCode).toBe(200);
  });
});
