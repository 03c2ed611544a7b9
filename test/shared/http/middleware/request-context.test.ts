import { describe, expect, it } from 'vitest';
import { requestContext } from '../../../../shared/http/middleware/request-context.js';
import { freshRequest } from '../../../support/lambda-request.js';

const fresh = () => freshRequest({ method: 'get', path: '/traits', query: 'name=in:A,B' });

describe('requestContext', () => {
  it('builds the PlacementRequest from the event, with a request id of its own', async () => {
    const request = fresh();
    await requestContext().before!(request);
    const placement = request.context.placement!;
    expect(placement.requestId).toMatch(/^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(placement.method).toBe('GET');
    expect(placement.path).toBe('/traits');
    expect(placement.query.get('name')).toBe('in:A,B');
    expect(placement.match?.route.path).toBe('/traits');
  });

  it('gives each request another id', async () => {
    const [first, second] = [fresh(), fresh()];
    await requestContext().before!(first);
    await requestContext().before!(second);
    expect(first.context.placement!.requestId).not.toBe(second.context.placement!.requestId);
  });

  it('stamps the id on answers and on errors, keeping the other headers', async () => {
    const middleware = requestContext();
    for (const step of [middleware.after!, middleware.onError!]) {
      const request = fresh();
      await middleware.before!(request);
      request.response = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
      await step(request);
      expect(request.response.headers).toEqual({ 'content-type': 'application/json', 'x-openstack-request-id': request.context.placement!.requestId });
    }
  });

  it('leaves an error without a response alone (the error middleware makes it)', async () => {
    const request = fresh();
    await requestContext().before!(request);
    await requestContext().onError!(request);
    expect(request.response).toBeNull();
  });
});
