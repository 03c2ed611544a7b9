import { describe, expect, it } from 'vitest';
import { cors, type CorsOptions } from '../../../../shared/http/middleware/cors.js';
import { lambdaRequest, type EventShape } from '../../../support/lambda-request.js';

const options: CorsOptions = {
  allowedOrigins: ['http://valid.example.com'],
  allowHeaders: ['OpenStack-API-Version'],
  exposeHeaders: ['OpenStack-API-Version'],
  allowMethods: ['GET', 'POST'],
  allowCredentials: true,
  maxAge: 3600,
};

async function answer(shape: EventShape, corsOptions = options, statusCode = 200, step: 'after' | 'onError' = 'after') {
  const request = lambdaRequest(shape);
  request.response = { statusCode, headers: { vary: 'openstack-api-version' }, body: '{}' };
  await cors(corsOptions)[step]!(request);
  return request.response;
}

describe('cors', () => {
  it('echoes an allowed origin on answers and errors, varying on Origin', async () => {
    for (const step of ['after', 'onError'] as const) {
      const response = await answer({ path: '/traits', headers: { origin: 'http://valid.example.com' } }, options, 200, step);
      expect(response.headers).toEqual({
        vary: 'openstack-api-version,Origin',
        'access-control-allow-origin': 'http://valid.example.com',
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'OpenStack-API-Version',
      });
    }
  });

  it('adds nothing for another origin or none', async () => {
    expect((await answer({ path: '/traits', headers: { origin: 'http://evil.example.com' } })).headers).toEqual({ vary: 'openstack-api-version' });
    expect((await answer({ path: '/traits' })).headers).toEqual({ vary: 'openstack-api-version' });
  });

  it('turns a preflight into an empty 200 with the preflight headers when all it asks is allowed', async () => {
    const preflight = (method: string, headers: string) => ({
      method: 'OPTIONS',
      path: '/traits',
      headers: { origin: 'http://valid.example.com', 'access-control-request-method': method, 'access-control-request-headers': headers },
    });
    expect(await answer(preflight('GET', 'openstack-api-version'), options, 405, 'onError')).toEqual({
      statusCode: 200,
      headers: {
        vary: 'Origin',
        'access-control-allow-origin': 'http://valid.example.com',
        'access-control-allow-credentials': 'true',
        'access-control-max-age': '3600',
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'openstack-api-version',
      },
      body: '',
    });
    expect(await answer(preflight('DELETE', ''), options, 405, 'onError')).toEqual({ statusCode: 200, headers: {}, body: '' });
    expect(await answer(preflight('GET', 'x-secret'), options, 405, 'onError')).toEqual({ statusCode: 200, headers: {}, body: '' });
  });

  it('is not there at all without an allowed origin: OPTIONS stays 405', async () => {
    const response = await answer(
      { method: 'OPTIONS', path: '/traits', headers: { origin: 'http://valid.example.com' } },
      { ...options, allowedOrigins: [] },
      405,
      'onError',
    );
    expect(response).toEqual({ statusCode: 405, headers: { vary: 'openstack-api-version' }, body: '{}' });
  });
});
