import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../../shared/api/errors.js';
import { acceptsGzip, COMPRESS_FROM_BYTES, fitResponse, MAX_RESPONSE_BYTES, responseBytes } from '../../../../shared/http/middleware/response-size.js';

/** A listing body of `count` entries, as repetitive as Placement's. */
const listing = (count: number) =>
  JSON.stringify({
    items: Array.from({ length: count }, (_, n) => ({
      uuid: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`,
      name: `item-${n}`,
      links: [{ rel: 'self', href: `/items/${n}` }],
    })),
  });

const result = (body: string) => ({ statusCode: 200, headers: { 'content-type': 'application/json', vary: 'openstack-api-version' }, body });

describe('acceptsGzip', () => {
  it('reads Accept-Encoding as HTTP does', () => {
    expect(acceptsGzip('gzip, deflate')).toBe(true);
    expect(acceptsGzip('deflate, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });
});

describe('fitResponse', () => {
  it('leaves a body under 1 KB as it is, whatever the client accepts', () => {
    const small = result(listing(5));
    expect(Buffer.byteLength(small.body)).toBeLessThan(COMPRESS_FROM_BYTES);
    expect(fitResponse(small, 'gzip, deflate')).toBe(small);
    expect(fitResponse(small, undefined)).toBe(small);
  });

  it('compresses a body of 1 KB or more for a client that accepts gzip, and says the answer varies with Accept-Encoding', () => {
    const body = 'x'.repeat(COMPRESS_FROM_BYTES);
    const fitted = fitResponse(result(body), 'gzip, deflate');
    expect(fitted).toMatchObject({
      statusCode: 200,
      isBase64Encoded: true,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', vary: 'openstack-api-version, Accept-Encoding' },
    });
    expect(gunzipSync(Buffer.from(fitted.body!, 'base64')).toString('utf8')).toBe(body);
    // One byte less: as it is.
    expect(fitResponse(result(body.slice(1)), 'gzip')).toEqual(result(body.slice(1)));
  });

  it('sends a body of 1 KB or more as it is to a client that does not accept gzip, with the Vary that tells caches why', () => {
    const body = listing(100);
    for (const acceptEncoding of [undefined, 'identity', 'gzip;q=0', 'deflate']) {
      const fitted = fitResponse(result(body), acceptEncoding);
      expect(fitted.isBase64Encoded).toBeUndefined();
      expect(fitted.body).toBe(body);
      expect(fitted.headers).toEqual({ 'content-type': 'application/json', vary: 'openstack-api-version, Accept-Encoding' });
    }
    const unvaried = fitResponse({ statusCode: 200, headers: {}, body }, undefined);
    expect(unvaried.headers).toEqual({ vary: 'Accept-Encoding' });
  });

  it('counts bytes, not characters: a short body of many-byte characters is compressed too', () => {
    const body = JSON.stringify({ name: 'é'.repeat(600) });
    expect(body.length).toBeLessThan(COMPRESS_FROM_BYTES);
    expect(fitResponse(result(body), 'gzip').headers).toMatchObject({ 'content-encoding': 'gzip' });
  });

  it('counts the body as the escaped JSON string Lambda sends', () => {
    // 3.5 M quotes: 3.5 MB of body, 7 MB once escaped.
    const quotes = result('"'.repeat(3_500_000));
    expect(Buffer.byteLength(quotes.body)).toBeLessThan(MAX_RESPONSE_BYTES);
    expect(() => fitResponse(quotes, undefined)).toThrow(HttpError);
  });

  it('compresses a listing past the limit for a client that accepts gzip, whole', () => {
    const body = listing(80_000);
    expect(Buffer.byteLength(body)).toBeGreaterThan(MAX_RESPONSE_BYTES);
    const fitted = fitResponse(result(body), 'gzip, deflate');
    expect(fitted.isBase64Encoded).toBe(true);
    expect(fitted.headers).toMatchObject({ 'content-encoding': 'gzip', vary: 'openstack-api-version, Accept-Encoding' });
    expect(responseBytes(fitted)).toBeLessThanOrEqual(MAX_RESPONSE_BYTES);
    expect(gunzipSync(Buffer.from(fitted.body!, 'base64')).toString('utf8')).toBe(body);
  });

  it('refuses with 400 what cannot fit: uncompressed for a client without gzip, or even compressed', () => {
    const refusal = (body: string, acceptEncoding: string | undefined) => {
      try {
        fitResponse(result(body), acceptEncoding);
      } catch (error) {
        return error as HttpError;
      }
      throw new Error('expected a refusal');
    };
    const plain = refusal(listing(80_000), undefined);
    expect(plain.status).toBe(400);
    expect(plain.message).toContain('Send "Accept-Encoding: gzip"');
    // Random bytes do not compress.
    const noise = JSON.stringify(randomBytes(5_000_000).toString('base64'));
    const compressed = refusal(noise, 'gzip');
    expect(compressed.status).toBe(400);
    expect(compressed.message).toContain('even compressed');
  });
});
