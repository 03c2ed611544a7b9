import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../../shared/api/errors.js';
import { Microversion } from '../../../../shared/api/microversion.js';
import { acceptsJson, requestGuards } from '../../../../shared/http/middleware/request-guards.js';
import { lambdaRequest, thrownBy, type EventShape } from '../../../support/lambda-request.js';

async function statusOf(shape: EventShape, version = '1.39'): Promise<number | undefined> {
  const request = lambdaRequest(shape);
  request.context.placement!.version = Microversion.parse(version);
  const error = await thrownBy(() => requestGuards().before!(request));
  if (error === undefined) return undefined;
  expect(error).toBeInstanceOf(HttpError);
  return (error as HttpError).status;
}

const json = { 'content-type': 'application/json' };

describe('requestGuards', () => {
  it('lets a well-formed request through', async () => {
    expect(await statusOf({ path: '/resource_providers' })).toBeUndefined();
    expect(await statusOf({ method: 'POST', path: '/resource_providers', headers: { ...json, 'content-length': '2' }, body: '{}' })).toBeUndefined();
  });

  it("refuses a content-length Python's int() would not read, and a body without a content type", async () => {
    expect(await statusOf({ path: '/traits', headers: { 'content-length': 'ten' } })).toBe(400);
    expect(await statusOf({ path: '/traits', headers: { 'content-length': ' 1_0 ', ...json } })).toBeUndefined();
    expect(await statusOf({ path: '/traits', headers: { 'content-length': '10' } })).toBe(400);
    expect(await statusOf({ path: '/traits', headers: { 'content-length': '0' } })).toBeUndefined();
  });

  it('answers a route older than the request with 404, or 405 where upstream does', async () => {
    expect(await statusOf({ path: '/usages', query: 'project_id=p' }, '1.8')).toBe(404);
    expect(await statusOf({ path: '/usages', query: 'project_id=p' }, '1.9')).toBeUndefined();
    const since15 = { method: 'DELETE', path: '/resource_providers/5a9b3f3e-8a3e-4a0e-9b7e-2b3f0c9f6d11/inventories' };
    expect(await statusOf(since15, '1.4')).toBe(405);
  });

  it('refuses with 406 a GET whose client takes no JSON', async () => {
    expect(await statusOf({ path: '/traits', headers: { accept: 'text/html' } })).toBe(406);
    expect(await statusOf({ path: '/traits', headers: { accept: 'text/html, application/*;q=0.1' } })).toBeUndefined();
  });

  it('refuses with 415 a JSON route sent anything but application/json, as sent', async () => {
    const post = (contentType: string) => ({ method: 'POST', path: '/resource_providers', headers: { 'content-type': contentType }, body: '{}' });
    expect(await statusOf(post('text/plain'))).toBe(415);
    expect(await statusOf(post('application/JSON'))).toBe(415);
    expect(await statusOf(post('application/json; charset=UTF-8'))).toBeUndefined();
  });

  it('leaves an unknown path to the handler (404 or 405 there)', async () => {
    expect(await statusOf({ path: '/no-such-thing', headers: { accept: 'text/html' } })).toBeUndefined();
  });
});

describe('acceptsJson', () => {
  it('negotiates as upstream does', () => {
    expect(acceptsJson(undefined)).toBe(true);
    expect(acceptsJson('*/*')).toBe(true);
    expect(acceptsJson('application/json;q=0')).toBe(false);
    expect(acceptsJson('APPLICATION/JSON')).toBe(true);
    expect(acceptsJson('text/plain')).toBe(false);
  });
});
