import { describe, expect, it } from 'vitest';
import type { Provider } from '../../shared/domain/model.js';
import { checkNewParent, isInSubtree } from '../../shared/domain/provider-tree.js';

const provider = (uuid: string, parentUuid: string | null, extra: Partial<Provider> = {}): Provider => ({
  uuid,
  name: uuid,
  generation: 0,
  parentUuid,
  rootUuid: 'root',
  inventories: {},
  usages: {},
  traits: [],
  aggregates: [],
  children: [],
  createdAt: '',
  updatedAt: '',
  ...extra,
});

const tree = [provider('root', null), provider('a', 'root'), provider('b', 'a'), provider('c', 'root')];

describe('re-parenting rules', () => {
  it('refuses loops and, before 1.37, any move', () => {
    expect(isInSubtree('b', 'a', tree)).toBe(true);
    expect(checkNewParent(tree[1]!, 'b', tree[2], tree, true)?.reason).toMatch(/loop/);
    expect(checkNewParent(tree[2]!, 'c', tree[3], tree, false)?.reason).toMatch(/re-parenting a provider is not currently allowed/);
    expect(checkNewParent(tree[2]!, null, undefined, tree, false)?.reason).toMatch(/un-parenting/);
  });
  it('allows moves and un-parenting from 1.37', () => {
    expect(checkNewParent(tree[2]!, 'c', tree[3], tree, true)).toBeUndefined();
    expect(checkNewParent(tree[2]!, null, undefined, tree, true)).toBeUndefined();
  });
});
