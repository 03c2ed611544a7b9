/**
 * Hostile and malformed input, class by class (the cases are in
 * test/support/hostile-cases.ts): every request is answered below 500,
 * within 3 s, with the status upstream gives (or ours where a case says why
 * it differs), and a refused request leaves the stored state as it was: the
 * GETs that show it (snapshotPaths) answer the same before and after.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient, type ApiResponse } from '../../admin/placement-client.js';
import { useLocalService } from '../support/local-service.js';
import { CASE_CLASSES, createFixture, newFixture, snapshotPaths, type HostileCase } from '../support/hostile-cases.js';

const service = useLocalService();

const ANSWER_WITHIN_MS = 3000;
const fixture = newFixture();
let api: PlacementClient;

beforeAll(async () => {
  api = new PlacementClient(service.url, { version: 'latest' });
  await createFixture(api, fixture);
});

/** The answers of the GETs that show the stored state the cases could touch. */
async function snapshot(): Promise<unknown[]> {
  return Promise.all(
    snapshotPaths(fixture).map(async (path) => {
      const response = await api.get(path);
      return [path, response.status, response.body];
    }),
  );
}

/** Writes the head on a socket and reads the answer until the server closes (status 0 when it answers nothing). */
function sendHead(head: string): Promise<Pick<ApiResponse, 'status' | 'text' | 'ms'>> {
  const { hostname, port } = new URL(service.url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(ANSWER_WITHIN_MS * 3, () => socket.destroy(new Error('no answer')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), text, ms: performance.now() - started });
    });
    socket.write(head, 'latin1');
  });
}

async function send(hostile: HostileCase): Promise<Pick<ApiResponse, 'status' | 'text' | 'ms'>> {
  if (hostile.head !== undefined) return sendHead(hostile.head);
  const headers = { ...(hostile.raw === undefined ? {} : { 'content-type': 'application/json' }), ...hostile.headers };
  return api.request(hostile.method, hostile.path, {
    version: hostile.version === undefined ? 'latest' : hostile.version,
    headers,
    ...(hostile.json === undefined ? {} : { json: hostile.json }),
    ...(hostile.raw === undefined ? {} : { rawBody: hostile.raw }),
  });
}

for (const [className, casesOf] of Object.entries(CASE_CLASSES)) {
  describe(className, () => {
    // Refused requests change nothing, so the state after each must be the state before the class began.
    let before: unknown[];
    beforeAll(async () => {
      before = await snapshot();
    });

    for (const hostile of casesOf(fixture)) {
      it(`${hostile.name}: ${hostile.status}`, async () => {
        const response = await send(hostile);
        expect(response.status, response.text.slice(0, 500)).toBe(hostile.status);
        if (hostile.detail !== undefined) expect(response.text).toContain(JSON.stringify(hostile.detail).slice(1, -1));
        expect(response.status).toBeLessThan(500);
        expect(response.ms).toBeLessThan(ANSWER_WITHIN_MS);
        if (hostile.writes) before = await snapshot();
        else expect(await snapshot()).toEqual(before);
      });
    }
  });
}

describe('uuids in any case', () => {
  const provider = randomUUID();
  const upper = (uuid: string) => uuid.toUpperCase();
  const claim = (generation: number | null, amount = 1) => ({
    allocations: { [upper(provider)]: { resources: { VCPU: amount } } },
    project_id: 'p',
    user_id: 'u',
    consumer_generation: generation,
    consumer_type: 'INSTANCE',
  });

  beforeAll(async () => {
    expect((await api.post('/resource_providers', { name: `case-${provider}`, uuid: upper(provider) })).body.uuid).toBe(provider);
    expect(
      (await api.put(`/resource_providers/${upper(provider)}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } })).status,
    ).toBe(200);
  });

  it('name one provider on every method', async () => {
    expect((await api.get(`/resource_providers/${upper(provider)}`)).body.uuid).toBe(provider);
    expect((await api.get(`/resource_providers?uuid=${upper(provider)}`)).body.resource_providers).toHaveLength(1);
    expect((await api.get(`/resource_providers?in_tree=${upper(provider)}`)).body.resource_providers).toHaveLength(1);
    expect((await api.put(`/resource_providers/${upper(provider)}/traits`, { resource_provider_generation: 1, traits: ['HW_CPU_X86_AVX2'] })).status).toBe(200);
    expect((await api.get(`/resource_providers/${provider}/traits`)).body.traits).toEqual(['HW_CPU_X86_AVX2']);
    expect((await api.get(`/allocation_candidates?resources=VCPU:1&in_tree=${upper(provider)}`)).body.allocation_requests).toHaveLength(1);
  });

  it('name one consumer on PUT, GET, POST and DELETE', async () => {
    const consumer = randomUUID();
    expect((await api.put(`/allocations/${upper(consumer)}`, claim(null))).status).toBe(204);
    for (const asked of [consumer, upper(consumer)]) {
      expect((await api.get(`/allocations/${asked}`)).body).toMatchObject({ allocations: { [provider]: { resources: { VCPU: 1 } } }, consumer_generation: 1 });
    }
    expect(Object.keys((await api.get(`/resource_providers/${upper(provider)}/allocations`)).body.allocations)).toEqual([consumer]);
    expect((await api.post('/allocations', { [upper(consumer)]: claim(1, 2) })).status).toBe(204);
    expect((await api.get(`/allocations/${consumer}`)).body).toMatchObject({ allocations: { [provider]: { resources: { VCPU: 2 } } }, consumer_generation: 2 });
    expect((await api.delete(`/allocations/${upper(consumer)}`)).status).toBe(204);
    expect((await api.get(`/allocations/${consumer}`)).body).toEqual({ allocations: {} });
    expect((await api.get(`/resource_providers/${provider}/usages`)).body.usages).toEqual({ VCPU: 0 });
  });

  it('name one provider when it is deleted', async () => {
    expect((await api.delete(`/resource_providers/${upper(provider)}`)).status).toBe(204);
    expect((await api.get(`/resource_providers/${provider}`)).status).toBe(404);
  });
});
