/**
 * GET /traits?associated=: from the holder each trait's catalog entry
 * names, confirmed by that provider's item, and where it let the trait go
 * from format 3's trait holder entries, each confirmed the same way, so
 * that an entry left behind (a deleted provider's, waiting for the
 * sweeper's cleanup) lists nothing; on a table whose entries are not built
 * (format 2), from every provider, with the same answers. A listing of the
 * whole catalog answers the same as one by name.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { putItem, tableName } from '../../shared/storage/dynamodb.js';
import { encodeSearchEntry, traitHolderKey } from '../../shared/storage/items/search-entry.js';
import { encodeStorageFormat } from '../../shared/storage/items/storage-format.js';
import { useLocalService } from '../support/local-service.js';

const service = useLocalService(() => ({ PLACEMENT_LOCAL_SWEEP_SECONDS: '0', PLACEMENT_STORAGE_FORMAT_SECONDS: '0' }));
const api = service.client({ token: 'admin', version: '1.39' });
const suffix = randomUUID().slice(0, 8).toUpperCase();
const [HELD, GONE, STALE, NEVER, MOVED] = ['HELD', 'GONE', 'STALE', 'NEVER', 'MOVED'].map((name) => `CUSTOM_${name}_${suffix}`) as [
  string,
  string,
  string,
  string,
  string,
];
const ALL = [HELD, GONE, STALE, NEVER, MOVED];

async function ok(method: string, path: string, body?: unknown) {
  const response = await api(method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  return response.body;
}

async function providerWith(trait: string): Promise<string> {
  const uuid = randomUUID();
  await ok('POST', '/resource_providers', { uuid, name: `traits-${uuid}` });
  await ok('PUT', `/resource_providers/${uuid}/traits`, { resource_provider_generation: 0, traits: [trait] });
  return uuid;
}

const listed = async (associated: boolean): Promise<string[]> =>
  ((await ok('GET', `/traits?associated=${associated}&name=in:${ALL.join(',')}`)) as { traits: string[] }).traits.sort();
/** The same from a listing of the whole catalog. */
const listedWhole = async (associated: boolean): Promise<string[]> =>
  ((await ok('GET', `/traits?associated=${associated}`)) as { traits: string[] }).traits.filter((name) => ALL.includes(name)).sort();

beforeAll(async () => {
  for (const trait of ALL) await ok('PUT', `/traits/${trait}`);
  await providerWith(HELD);
  // MOVED's entry names its first holder, which lets it go after a second provider took it.
  const first = await providerWith(MOVED);
  await providerWith(MOVED);
  await ok('PUT', `/resource_providers/${first}/traits`, { resource_provider_generation: 1, traits: [] });
  await ok('DELETE', `/resource_providers/${await providerWith(GONE)}`);
  // An entry whose provider is gone, as a deletion of a provider with more entries than its commit takes leaves them.
  const stray = randomUUID();
  await putItem({ TableName: tableName(), Item: encodeSearchEntry(traitHolderKey(STALE, stray), stray) });
});

it('lists the traits a provider holds, not those whose only entry outlived its provider (format 3)', async () => {
  expect(await listed(true)).toEqual([HELD, MOVED].sort());
  expect(await listed(false)).toEqual([GONE, NEVER, STALE].sort());
  expect(await listedWhole(true)).toEqual([HELD, MOVED].sort());
  expect(await listedWhole(false)).toEqual([GONE, NEVER, STALE].sort());
});

it('answers the same from every provider while the entries are not built (format 2)', async () => {
  await putItem({ TableName: tableName(), Item: encodeStorageFormat({ format: 2 }) });
  try {
    expect(await listed(true)).toEqual([HELD, MOVED].sort());
    expect(await listed(false)).toEqual([GONE, NEVER, STALE].sort());
  } finally {
    await putItem({ TableName: tableName(), Item: encodeStorageFormat({ format: 3 }) });
  }
});
