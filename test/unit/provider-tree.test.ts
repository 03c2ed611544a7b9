import { describe, expect, it } from 'vitest';
import type { Provider } from '../../shared/domain/model.js';
import { checkNewParent, isInSubtree } from '../../shared/domain/provider-tree.js';
import { capacity, fitsCapacity } from '../../shared/domain/capacity.js';

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

describe('capacity', () => {
  const vcpu = { total: 10, reserved: 2, min_unit: 1, max_unit: 4, step_size: 2, allocation_ratio: 1.5 };
  it('is (total - reserved) * allocation_ratio', () => {
    expect(capacity(vcpu)).toBe(12);
  });
  it('checks usage, min/max unit and step size', () => {
    const host = provider('h', null, { inventories: { VCPU: vcpu }, usages: { VCPU: 8 } });
    expect(fitsCapacity(host, 'VCPU', 4)).toBe(true);
    expect(fitsCapacity(host, 'VCPU', 3)).toBe(false); // step size
    expect(fitsCapacity({ ...host, usages: { VCPU: 10 } }, 'VCPU', 4)).toBe(false); // over capacity
    expect(fitsCapacity(host, 'DISK_GB', 1)).toBe(false);
  });
});
