import { describe, expect, it } from 'vitest';
import { Microversion } from '../../../../shared/api/microversion.js';
import { cacheHeaders } from '../../../../shared/http/middleware/cache-headers.js';
import { lambdaRequest } from '../../../support/lambda-request.js';

async function headersAfter(version: string, statusCode: number, headers: Record<string, string> = {}) {
  const request = lambdaRequest({ path: '/traits' });
  request.context.placement!.version = Microversion.parse(version);
  request.response = { statusCode, headers, body: '' };
  await cacheHeaders().after!(request);
  return request.response.headers;
}

describe('cacheHeaders', () => {
  it('forbids caching a 200 from 1.15', async () => {
    expect(await headersAfter('1.15', 200)).toEqual({ 'cache-control': 'no-cache' });
    expect(await headersAfter('1.39', 200, { 'content-type': 'application/json' })).toEqual({
      'cache-control': 'no-cache',
      'content-type': 'application/json',
    });
  });

  it('adds nothing before 1.15 or to another status', async () => {
    expect(await headersAfter('1.14', 200)).toEqual({});
    expect(await headersAfter('1.15', 204)).toEqual({});
    expect(await headersAfter('1.15', 404)).toEqual({});
  });
});
