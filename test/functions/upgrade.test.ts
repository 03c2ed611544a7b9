/**
 * Versioned storage formats through the API (docs/operators/upgrade.md): a
 * table without a format record is release 1.0.0's and is written as 1.0.0
 * reads it until the operator finalizes (straight to format 3, whose
 * entries the finalize then builds); a table at a format newer than this
 * release knows is refused with a 503, never misread.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useLocalService } from '../support/local-service.js';

const RELEASE = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
const FORMAT_KEY = { pk: 'TABLE', sk: 'STORAGE_FORMAT' };
const PROVIDER = 'a0000000-0000-4000-8000-0000000000a1';
const [OLD_CONSUMER, NEW_CONSUMER] = ['c0000000-0000-4000-8000-0000000000c1', 'c0000000-0000-4000-8000-0000000000c2'];

// The format read on every request, so that the test's own changes of the record take effect at once; no request outlives
// the test's, so the build of format 3's entries need not wait for any.
const service = useLocalService(() => ({ PLACEMENT_STORAGE_FORMAT_SECONDS: '0', PLACEMENT_LONGEST_REQUEST_SECONDS: '0' }));
const api = service.client({ token: 'admin', version: '1.39' });

/** The service's table, as the test reaches it beside the service. */
function table(): DynamoDBDocumentClient {
  const endpoint = process.env.PLACEMENT_DYNAMODB_ENDPOINT!;
  return DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
}
const tableName = () => process.env.PLACEMENT_TABLE_NAME!;

async function storedAllocation(consumer: string): Promise<Record<string, unknown> | undefined> {
  const output = await table().send(new GetCommand({ TableName: tableName(), Key: { pk: `RP#${PROVIDER}`, sk: `ALLOC#${consumer}` } }));
  return output.Item;
}

/** Every part of GET /upgrade/entries (a loaded machine may take more than one call's time), summed. */
async function verified() {
  const total = { providers: 0, entries: 0, pending: 0, disagreements: [] as unknown[] };
  for (let marker: string | null = ''; marker !== null;) {
    const page: { providers: number; entries: number; pending: number; disagreements: unknown[]; next: string | null } = (
      await api('GET', `/upgrade/entries${marker ? `?marker=${marker}` : ''}`)
    ).body;
    total.providers += page.providers;
    total.entries += page.entries;
    total.pending += page.pending;
    total.disagreements.push(...page.disagreements);
    marker = page.next;
  }
  return total;
}

async function claim(consumer: string): Promise<void> {
  const body = {
    allocations: { [PROVIDER]: { resources: { VCPU: 1 } } },
    project_id: 'p',
    user_id: 'u',
    consumer_generation: null,
    consumer_type: 'INSTANCE',
  };
  expect((await api('PUT', `/allocations/${consumer}`, body)).status).toBe(204);
}

describe('storage formats and the upgrade routes', () => {
  it('starts a table it creates at its newest format and says which release answers', async () => {
    const response = await api('GET', '/upgrade');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      release: RELEASE,
      storage_format: { table: 3, known: [1, 2, 3], newest: 3, finalized_by: RELEASE },
      entries: { state: 'built', shards_done: 8, providers: 0 },
      changes_in_flight: 0,
    });
  });

  it("writes what release 1.0.0 reads on 1.0.0's table until finalized, and its own format after", async () => {
    // Release 1.0.0 wrote no format record.
    await table().send(new DeleteCommand({ TableName: tableName(), Key: FORMAT_KEY }));
    expect((await api('GET', '/upgrade')).body.storage_format).toMatchObject({ table: 1, finalized_at: null });
    expect((await api('POST', '/resource_providers', { name: 'compute-1', uuid: PROVIDER })).status).toBe(200);
    expect(
      (await api('PUT', `/resource_providers/${PROVIDER}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } })).status,
    ).toBe(200);
    await claim(OLD_CONSUMER);
    expect(await storedAllocation(OLD_CONSUMER)).toMatchObject({ consumerUuid: OLD_CONSUMER, resources: { VCPU: 1 } });

    // A finalize meant for another release's format is refused; this one's moves the table on, from 1.0.0's format to 3,
    // and builds the entries of the provider already there.
    expect((await api('POST', '/upgrade/finalize', { format: 2 })).status).toBe(409);
    const finalized = await api('POST', '/upgrade/finalize', { format: 3 });
    expect(finalized.status).toBe(200);
    expect(finalized.body.storage_format).toMatchObject({ table: 3, finalized_by: RELEASE });
    expect(finalized.body.entries).toMatchObject({ state: 'built', shards_done: 8, providers: 1, entries: 1 });
    expect((await api('POST', '/upgrade/finalize', { format: 3 })).status).toBe(200);
    expect(await verified()).toEqual({ providers: 1, entries: 1, pending: 0, disagreements: [] });

    await claim(NEW_CONSUMER);
    const item = await storedAllocation(NEW_CONSUMER);
    expect(item).toMatchObject({ resources: { VCPU: 1 } });
    expect(item).not.toHaveProperty('consumerUuid');

    // Both formats read back alike.
    const listing = await api('GET', `/resource_providers/${PROVIDER}/allocations`);
    expect(Object.keys(listing.body.allocations).sort()).toEqual([OLD_CONSUMER, NEW_CONSUMER]);
    for (const consumer of [OLD_CONSUMER, NEW_CONSUMER]) {
      expect((await api('GET', `/allocations/${consumer}`)).body.allocations).toEqual({ [PROVIDER]: { resources: { VCPU: 1 }, generation: 3 } });
    }
  });

  it('refuses with a 503 that says why a table at a format newer than it knows, and reads nothing of it', async () => {
    await table().send(new PutCommand({ TableName: tableName(), Item: { ...FORMAT_KEY, type: 'storageFormat', format: 4 } }));
    try {
      for (const path of ['/resource_providers', `/allocations/${OLD_CONSUMER}`, '/upgrade']) {
        const response = await api('GET', path);
        expect(response.status, path).toBe(503);
        expect(response.body.errors[0].detail).toMatch(/storage format 4, newer than release .* reads \(up to format 3\)/);
      }
      expect((await api('DELETE', `/allocations/${NEW_CONSUMER}`)).status).toBe(503);
      // The version document reads no table.
      expect((await api('GET', '/')).status).toBe(200);
    } finally {
      await table().send(new PutCommand({ TableName: tableName(), Item: { ...FORMAT_KEY, type: 'storageFormat', format: 3 } }));
    }
    expect((await api('GET', `/allocations/${NEW_CONSUMER}`)).status).toBe(200);
  });

  it("refuses to rename a class in use on 1.0.0's table (1.0.0's writers could bring the old name back) and renames it once finalized", async () => {
    const holder = 'a0000000-0000-4000-8000-0000000000a2';
    const rename = (from: string, to: string) => api('PUT', `/resource_classes/${from}`, { name: to }, { 'openstack-api-version': 'placement 1.6' });
    for (const name of ['CUSTOM_HELD', 'CUSTOM_UNUSED']) expect((await api('POST', '/resource_classes', { name })).status).toBe(201);
    expect((await api('POST', '/resource_providers', { name: 'holder', uuid: holder })).status).toBe(200);
    const inventories = { CUSTOM_HELD: { total: 4 } };
    expect((await api('PUT', `/resource_providers/${holder}/inventories`, { resource_provider_generation: 0, inventories })).status).toBe(200);

    await table().send(new DeleteCommand({ TableName: tableName(), Key: FORMAT_KEY }));
    const refused = await rename('CUSTOM_HELD', 'CUSTOM_HELD_NEW');
    expect(refused.status).toBe(409);
    expect(refused.body.errors[0].detail).toMatch(/in use in inventory.*placement-admin upgrade finalize/);
    expect((await api('GET', `/resource_providers/${holder}/inventories`)).body.inventories).toHaveProperty('CUSTOM_HELD');
    expect((await api('GET', '/resource_classes/CUSTOM_HELD_NEW')).status).toBe(404);
    // A class no inventory names renames as it did in 1.0.0.
    expect((await rename('CUSTOM_UNUSED', 'CUSTOM_UNUSED_NEW')).status).toBe(200);

    expect((await api('POST', '/upgrade/finalize', { format: 3 })).status).toBe(200);
    expect((await rename('CUSTOM_HELD', 'CUSTOM_HELD_NEW')).status).toBe(200);
    expect((await api('GET', `/resource_providers/${holder}/inventories`)).body.inventories).toEqual({
      CUSTOM_HELD_NEW: expect.objectContaining({ total: 4 }),
    });
  });

  it('lets admins only check, finalize and verify by default', async () => {
    const user = service.client({ token: 'someone:project', version: '1.39' });
    expect((await user('GET', '/upgrade')).status).toBe(403);
    expect((await user('POST', '/upgrade/finalize', { format: 3 })).status).toBe(403);
    expect((await user('GET', '/upgrade/entries')).status).toBe(403);
  });

  it('refuses a verify marker it did not give (400), and to verify entries not built yet (409)', async () => {
    for (const marker of ['x', Buffer.from('{"phase":"providers","shard":-1}').toString('base64url'), Buffer.from('[1]').toString('base64url')]) {
      const response = await api('GET', `/upgrade/entries?marker=${marker}`);
      expect(response.status, marker).toBe(400);
      expect(response.body.errors[0].detail).toMatch(/Invalid marker: .* is not one this route gave/);
    }
    expect((await api('GET', '/upgrade/entries?other=1')).status).toBe(400);
    await table().send(new PutCommand({ TableName: tableName(), Item: { ...FORMAT_KEY, type: 'storageFormat', format: 2 } }));
    try {
      expect((await api('GET', '/upgrade/entries')).status).toBe(409);
    } finally {
      await table().send(new PutCommand({ TableName: tableName(), Item: { ...FORMAT_KEY, type: 'storageFormat', format: 3 } }));
    }
  });
});
