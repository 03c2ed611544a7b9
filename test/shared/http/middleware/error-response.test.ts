import { describe, expect, it } from 'vitest';
import { badRequest, HttpError } from '../../../../shared/api/errors.js';
import { Microversion } from '../../../../shared/api/microversion.js';
import { errorResponse } from '../../../../shared/http/middleware/error-response.js';
import { ItemTooLarge } from '../../../../shared/storage/items/fields.js';
import { ConcurrentUpdate, DependencyUnavailable } from '../../../../shared/storage/errors.js';
import { lambdaRequest, type EventShape } from '../../../support/lambda-request.js';

async function responseTo(error: unknown, { version, ...shape }: EventShape & { version?: string } = {}) {
  const request = lambdaRequest({ path: '/traits', ...shape });
  if (version !== undefined) {
    request.context.placement!.version = Microversion.parse(version);
    request.context.placement!.versionKnown = true;
  }
  request.error = error as Error;
  await errorResponse().onError!(request);
  return request.response!;
}

describe('errorResponse', () => {
  it("writes Placement's JSON error document, with the code from 1.23 and the version headers", async () => {
    const response = await responseTo(badRequest('Invalid query string parameters.'), { version: '1.23' });
    expect(response.statusCode).toBe(400);
    expect(response.headers).toEqual({ 'content-type': 'application/json', 'openstack-api-version': 'placement 1.23', vary: 'openstack-api-version' });
    expect(JSON.parse(response.body!)).toEqual({
      errors: [
        {
          status: 400,
          title: 'Bad Request',
          detail: expect.stringContaining('Invalid query string parameters.'),
          code: 'placement.undefined_code',
          request_id: 'req-test',
        },
      ],
    });
    // Written as Python's json.dumps writes it.
    expect(response.body).toMatch(/^\{"errors": \[\{"status": 400, "title": "Bad Request", /);
  });

  it('leaves the code and version headers out before 1.23 and before the version is known', async () => {
    expect(JSON.parse((await responseTo(badRequest('x'), { version: '1.22' })).body!).errors[0]).not.toHaveProperty('code');
    const unknown = await responseTo(badRequest('x'));
    expect(unknown.headers).toEqual({ 'content-type': 'application/json' });
  });

  it("maps storage's errors to their statuses", async () => {
    const conflict = await responseTo(new ConcurrentUpdate(), { version: '1.39' });
    expect(conflict.statusCode).toBe(409);
    expect(JSON.parse(conflict.body!).errors[0].code).toBe('placement.concurrent_update');
    const tooLarge = await responseTo(new ItemTooLarge('Resource provider p1', 400_000), { version: '1.39' });
    expect(tooLarge.statusCode).toBe(400);
    expect(JSON.parse(tooLarge.body!).errors[0].detail).toContain(
      'Resource provider p1 would take 400000 bytes of storage, more than the 358400 one record may hold',
    );
    const unavailable = await responseTo(new DependencyUnavailable('DynamoDB timed out'), { version: '1.39' });
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.headers).toHaveProperty('retry-after');
  });

  it('answers anything else with a 500 that tells nothing of the cause', async () => {
    const response = await responseTo(new TypeError('secret detail'), { version: '1.39' });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toContain('secret detail');
  });

  it('renders HTML or plain text as webob does for a client that does not take JSON', async () => {
    const html = await responseTo(badRequest('Bad thing.'), { version: '1.39', headers: { accept: 'text/html' } });
    expect(html.headers!['content-type']).toBe('text/html; charset=UTF-8');
    expect(html.body).toContain('<title>400 Bad Request</title>');
    const plain = await responseTo(badRequest('Bad thing.'), { version: '1.39', headers: { accept: 'image/png' } });
    expect(plain.headers!['content-type']).toBe('text/plain; charset=UTF-8');
    expect(plain.body).toMatch(/^400 Bad Request\n\n/);
  });

  it("answers an authentication middleware's error bare, unversioned", async () => {
    const response = await responseTo(new HttpError(401, '', { versioned: false, bare: true }), { version: '1.39' });
    expect(response.statusCode).toBe(401);
    expect(response.headers).toEqual({ 'content-type': 'application/json' });
    expect(JSON.parse(response.body!)).toMatchObject({ code: '401 Unauthorized', title: 'Unauthorized' });
  });
});
