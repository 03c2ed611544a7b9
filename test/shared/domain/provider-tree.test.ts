import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../shared/domain/model.js';
import { makeProvider, NOW } from '../../support/fixtures.js';
import { ancestry, checkNewParent, MAX_TREE_DEPTH, newProvider, nextAncestor, type Lineage } from '../../../shared/domain/provider-tree.js';

const provider = (uuid: string, parentUuid: string | null, extra: Partial<Provider> = {}): Provider =>
  makeProvider(uuid, { parentUuid, rootUuid: 'root', ...extra });

const root = provider('root', null);
const a = provider('a', 'root');
const b = provider('b', 'a');
const c = provider('c', 'root');
const lineage = (...providers: Provider[]): Lineage => ({ providers, damaged: false });

describe('re-parenting rules', () => {
  it('refuses loops and, before 1.37, any move', () => {
    expect(checkNewParent(a, 'b', lineage(b, a, root), true)?.reason).toMatch(/loop/);
    expect(checkNewParent(b, 'c', lineage(c, root), false)?.reason).toMatch(/re-parenting a provider is not currently allowed/);
    expect(checkNewParent(b, null, lineage(), false)?.reason).toMatch(/un-parenting/);
  });
  it('allows moves and un-parenting from 1.37', () => {
    expect(checkNewParent(b, 'c', lineage(c, root), true)).toBeUndefined();
    expect(checkNewParent(b, null, lineage(), true)).toBeUndefined();
  });
  it('reports a parent that does not exist as upstream does, as a failed create', () => {
    expect(checkNewParent(b, 'gone', lineage(), true)).toEqual({ action: 'create', reason: 'parent provider UUID does not exist.' });
  });
  it('refuses to hang a provider below a damaged tree', () => {
    expect(checkNewParent(c, 'b', { providers: [b, a], damaged: true }, true)?.reason).toMatch(/loop/);
  });
});

describe('walking up a tree', () => {
  const links = (...pairs: [string, string | null][]) => new Map(pairs.map(([uuid, parentUuid]) => [uuid, { uuid, parentUuid }]));

  it('goes from a provider to its root', () => {
    expect(ancestry('b', links(['root', null], ['a', 'root'], ['b', 'a']))).toEqual(['b', 'a', 'root']);
    expect(nextAncestor([{ uuid: 'b', parentUuid: 'a' }])).toBe('a');
    expect(nextAncestor([{ uuid: 'root', parentUuid: null }])).toBeNull();
  });

  it('stops at a provider it cannot find', () => {
    expect(ancestry('b', links(['b', 'a']))).toEqual(['b', 'a']);
  });

  it('ends on a loop instead of going round it', () => {
    const loop = links(['x', 'y'], ['y', 'z'], ['z', 'x'], ['leaf', 'x']);
    expect(ancestry('leaf', loop)).toEqual(['leaf', 'x', 'y', 'z']);
    expect(nextAncestor([...loop.values()].slice(0, 3))).toBe('damaged');
  });

  it('ends after MAX_TREE_DEPTH providers', () => {
    const chain = links(...Array.from({ length: 2 * MAX_TREE_DEPTH }, (_, n): [string, string | null] => [`p${n}`, `p${n + 1}`]));
    expect(ancestry('p0', chain)).toHaveLength(MAX_TREE_DEPTH);
  });
});

describe('newProvider', () => {
  it('starts at generation 0 holding nothing, as the root of its own tree or in its parent tree', () => {
    const created = newProvider('n', 'name', undefined, NOW);
    expect(created).toMatchObject({
      generation: 0,
      parentUuid: null,
      rootUuid: 'n',
      inventories: {},
      usages: {},
      children: [],
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect(newProvider('m', 'child', a, NOW)).toMatchObject({ parentUuid: 'a', rootUuid: 'root' });
  });
});
