/**
 * A listing past what one Lambda response can carry (GET /resource_providers
 * of 6,600 providers with 200-character names: about 6.6 MB) is sent whole,
 * gzip-compressed, to a client that accepts gzip, and refused with a 400
 * saying how to get it otherwise; nothing is dropped silently.
 */
import { gunzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeProvider } from '../../../support/fixtures.js';
import { MAX_RESPONSE_BYTES } from '../../../../shared/http/middleware/response-size.js';
import { providerChangeWrites } from '../../../../shared/storage/providers.js';
import type { Item } from '../../../../shared/storage/reads.js';
import { batchWrite } from '../../../../scripts/lib/batch-write.js';
import { useLocalService } from '../../../support/local-service.js';

const PROVIDERS = 6600;
const service = useLocalService();

/** One GET with the raw bytes of the answer (the test client would decode nothing). */
function get(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      `${service.url}${path}`,
      { headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'placement 1.39', ...headers } },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) }));
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const uuids = Array.from({ length: PROVIDERS }, () => randomUUID());

beforeAll(async () => {
  const now = new Date().toISOString();
  const items: Item[] = uuids.flatMap((uuid, n) => {
    const provider = makeProvider(uuid, { name: `${String(n).padStart(6, '0')}-${'x'.repeat(193)}`, generation: 0, createdAt: now, updatedAt: now });
    return providerChangeWrites(undefined, provider).flatMap((write) => (write.item.Put ? [write.item.Put.Item as Item] : []));
  });
  await batchWrite(items);
}, 600_000);

describe('a listing larger than one Lambda response', () => {
  it('is sent whole, gzip-compressed, to a client that accepts gzip', async () => {
    const response = await get('/resource_providers', { 'accept-encoding': 'gzip, deflate' });
    expect(response.status).toBe(200);
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(response.headers.vary).toContain('Accept-Encoding');
    expect(response.body.length).toBeLessThan(MAX_RESPONSE_BYTES);
    const json = gunzipSync(response.body).toString('utf8');
    expect(Buffer.byteLength(json)).toBeGreaterThan(MAX_RESPONSE_BYTES);
    const listed = (JSON.parse(json) as { resource_providers: { uuid: string }[] }).resource_providers.map((provider) => provider.uuid);
    expect(new Set(listed)).toEqual(new Set(uuids));
  }, 120_000);

  it('is refused with a 400 saying how to get it to a client that does not', async () => {
    const response = await get('/resource_providers', {});
    expect(response.status).toBe(400);
    expect(response.headers['content-encoding']).toBeUndefined();
    const detail = JSON.parse(response.body.toString('utf8')).errors[0].detail as string;
    expect(detail).toMatch(/The response would have \d+ bytes, more than one response may carry/);
    expect(detail).toContain('Accept-Encoding: gzip');
  }, 120_000);

  it('leaves smaller answers as they are, compressed or not', async () => {
    const one = await get(`/resource_providers?uuid=${uuids[0]}`, { 'accept-encoding': 'gzip' });
    expect(one.status).toBe(200);
    expect(one.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(one.body.toString('utf8')).resource_providers).toHaveLength(1);
  });
});
