/**
 * Re-parenting and creating children at the same time, while the tree index
 * lags (the fault proxy answers every index query with items that changed
 * lately shown as they were, or missing): no round may leave a loop, a
 * provider whose root is not the top of its tree, or a parent whose children
 * set disagrees with its children.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../../scripts/lib/dynamodb-fault-proxy.js';
import { PlacementClient } from '../../scripts/lib/placement-client.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local.js';
import { getProvider } from '../../shared/storage/providers.js';
import { useLocalService } from '../support/local-service.js';

const ROUNDS = 20;

let database: DynamoDbLocal | undefined;
let proxy: FaultProxy | undefined;
const service = useLocalService(async () => {
  database = await startDynamoDbLocal();
  // The index lags for the whole test: every tree query sees what changed since its first answer only partly.
  proxy = await startFaultProxy({ target: database.endpoint, rates: { staleIndex: 1 }, indexLagMs: 60 * 60_000, seed: 5 });
  return { PLACEMENT_DYNAMODB_ENDPOINT: proxy.url };
});
afterAll(async () => {
  await proxy?.stop();
  await database?.stop();
});

interface Place {
  parentUuid: string | null;
  rootUuid: string;
}

/** What is wrong with a set of providers, read strongly consistently. */
async function damage(uuids: string[]): Promise<{ loops: string[]; staleRoots: string[]; brokenLinks: string[] }> {
  const places = new Map<string, Place>();
  const children = new Map<string, string[]>();
  for (const uuid of uuids) {
    const provider = await getProvider(uuid);
    if (provider === undefined) continue;
    places.set(uuid, { parentUuid: provider.parentUuid, rootUuid: provider.rootUuid });
    children.set(uuid, provider.children);
  }
  const loops = new Set<string>();
  const found = { loops: [] as string[], staleRoots: [] as string[], brokenLinks: [] as string[] };
  for (const [uuid, place] of places) {
    const path = [uuid];
    let looped = false;
    for (let parent = place.parentUuid; parent !== null; parent = places.get(parent)?.parentUuid ?? null) {
      if (path.includes(parent)) {
        // The same loop is met from each provider in or below it: name it by its members.
        loops.add(path.slice(path.indexOf(parent)).sort().join(' '));
        looped = true;
        break;
      }
      path.push(parent);
    }
    const top = path.at(-1)!;
    if (!looped && place.rootUuid !== top) found.staleRoots.push(`${uuid} has root ${place.rootUuid}, its tree's top is ${top}`);
    if (place.parentUuid !== null && !(children.get(place.parentUuid) ?? []).includes(uuid))
      found.brokenLinks.push(`${uuid} missing from its parent's children`);
    for (const child of children.get(uuid) ?? []) {
      if (places.get(child)?.parentUuid !== uuid) found.brokenLinks.push(`${child} listed under ${uuid} but hangs elsewhere`);
    }
  }
  found.loops = [...loops];
  return found;
}

describe('re-parenting and creating children concurrently while the index lags', () => {
  it('never leaves a loop, a stale root or a broken link', async () => {
    const api = new PlacementClient(service.url, { token: 'admin', version: '1.37' });
    const statuses = new Map<string, number>();
    const count = (what: string, status: number) => statuses.set(`${what} ${status}`, (statuses.get(`${what} ${status}`) ?? 0) + 1);
    const totals = { loops: 0, staleRoots: 0, brokenLinks: 0 };
    const problems: string[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      const uuids: string[] = [];
      const create = async (name: string, parent?: string): Promise<string | undefined> => {
        const response = await api.post('/resource_providers', {
          name: `${name}-${round}-${Math.random()}`,
          ...(parent ? { parent_provider_uuid: parent } : {}),
        });
        count('create', response.status);
        if (response.status !== 200) return undefined;
        uuids.push(response.body.uuid);
        return response.body.uuid as string;
      };
      const move = async (uuid: string, parent: string | undefined) => {
        if (parent === undefined) return;
        const response = await api.put(`/resource_providers/${uuid}`, {
          name: (await api.get(`/resource_providers/${uuid}`)).body.name,
          parent_provider_uuid: parent,
        });
        count('move', response.status);
      };

      // r1 -> a -> a1, r1 -> b -> b1; r2 -> c.
      const r1 = (await create('r1'))!;
      const a = (await create('a', r1))!;
      const a1 = (await create('a1', a))!;
      const b = (await create('b', r1))!;
      const b1 = (await create('b1', b))!;
      const r2 = (await create('r2'))!;
      const c = (await create('c', r2))!;
      // The index answers every later tree query with this round's changes lagging behind.
      await api.get(`/resource_providers?in_tree=${r1}`);
      await api.get(`/resource_providers?in_tree=${r2}`);

      await Promise.all([
        // A new child, then its grandparent moved below it: a loop unless the move sees the child.
        (async () => move(a, await create('x', a1)))(),
        // Two moves that would close a loop together.
        move(a, b1),
        move(b, a1),
        // A child created while its parent's subtree moves to the other tree must end with the new root.
        create('y', b1),
        move(b, c),
      ]);

      // A listing after the races reads the lagging index (reads may lag; writes must not depend on it).
      await api.get(`/resource_providers?in_tree=${r1}`);
      const found = await damage(uuids);
      totals.loops += found.loops.length;
      totals.staleRoots += found.staleRoots.length;
      totals.brokenLinks += found.brokenLinks.length;
      problems.push(...found.loops.map((members) => `round ${round}: a loop through ${members}`), ...found.staleRoots.map((line) => `round ${round}: ${line}`));
      problems.push(...found.brokenLinks.map((line) => `round ${round}: ${line}`));
    }

    const lagged = proxy!.injected().staleIndex;
    console.log(
      `tree races: ${ROUNDS} rounds, lagging index answers ${lagged}, ` +
        `answers ${[...statuses]
          .sort()
          .map(([what, n]) => `${what} x${n}`)
          .join(', ')}; ` +
        `loops found ${totals.loops}, stale roots found ${totals.staleRoots}, broken links ${totals.brokenLinks}`,
    );
    expect(lagged).toBeGreaterThan(0);
    expect([...statuses.keys()].filter((key) => / 5\d\d$/.test(key))).toEqual([]);
    expect(problems).toEqual([]);
  }, 600_000);
});
