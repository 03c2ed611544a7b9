/**
 * getDescendants, which a move to another tree rewrites: what the tree index
 * shows below the provider is read in one round, and the children sets read
 * strongly consistently decide, so a child the index does not show under the
 * tree yet is still found, and one it shows there that the sets do not name
 * is left out.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../../admin/placement-client.js';
import { dynamo, tableName } from '../../../shared/storage/client.js';
import { encodeProvider } from '../../../shared/storage/items/provider.js';
import { getDescendants, getProvider } from '../../../shared/storage/providers.js';
import { useLocalService } from '../../support/local-service.js';

const service = useLocalService();
let api: PlacementClient;
beforeAll(() => {
  api = new PlacementClient(service.url, { version: '1.39' });
});

async function create(parent?: string): Promise<string> {
  const uuid = randomUUID();
  const response = await api.post('/resource_providers', { uuid, name: `rp-${uuid}`, ...(parent && { parent_provider_uuid: parent }) });
  expect(response.status).toBe(200);
  return uuid;
}

/** Rewrites a provider item as it is but for its root, which puts it under another tree in the index. */
async function indexUnder(uuid: string, rootUuid: string): Promise<void> {
  const provider = (await getProvider(uuid))!;
  await dynamo().send(new PutCommand({ TableName: tableName(), Item: encodeProvider({ ...provider, rootUuid }) }));
}

const uuidsBelow = async (uuid: string) => (await getDescendants((await getProvider(uuid))!)).map((provider) => provider.uuid).sort();

describe('getDescendants', () => {
  it('finds every provider below, at every depth, and nothing beside it', async () => {
    const root = await create();
    const moved = await create(root);
    const sibling = await create(root);
    await create(sibling);
    const children = [await create(moved), await create(moved)];
    const grandchild = await create(children[0]);
    const deepest = await create(grandchild);
    expect(await uuidsBelow(moved)).toEqual([...children, grandchild, deepest].sort());
    expect(await uuidsBelow(deepest)).toEqual([]);
  });

  it('finds a child the index does not show in the tree yet, and what hangs below it', async () => {
    const root = await create();
    const moved = await create(root);
    const child = await create(moved);
    const grandchild = await create(child);
    await indexUnder(child, randomUUID());
    await indexUnder(grandchild, randomUUID());
    expect(await uuidsBelow(moved)).toEqual([child, grandchild].sort());
  });

  it('leaves out a provider the index shows below it that no children set names', async () => {
    const root = await create();
    const moved = await create(root);
    const child = await create(moved);
    const elsewhere = await create();
    // Named as the child's child, in the moved provider's tree, by its own item only.
    const stray = (await getProvider(await create(elsewhere)))!;
    await dynamo().send(new PutCommand({ TableName: tableName(), Item: encodeProvider({ ...stray, parentUuid: child, rootUuid: root }) }));
    expect(await uuidsBelow(moved)).toEqual([child]);
  });
});
