import { describe, expect, it } from 'vitest';
import { capacity } from '../../../shared/domain/capacity.js';
import type { Consumer, Inventory, Provider } from '../../../shared/domain/model.js';
import {
  INVENTORY_DEFAULTS,
  MAX_INT,
  capacityProblem,
  classesInUse,
  compareResourceClasses,
  diffInventories,
  firstCapacityProblem,
  inUseMessage,
  inventoryWithDefaults,
  isWellFormedInventory,
  overCapacityClasses,
  replacementProblem,
  serializeInventories,
  serializeInventory,
  sortResourceClasses,
  withInventories,
} from '../../../shared/domain/inventory.js';
import { consumerTotals, consumerTypeOf, providerUsages, totalUsages, usagesByConsumerType } from '../../../shared/domain/usages.js';
import { makeProvider } from '../../support/fixtures.js';

const RP = 'c8b0b4b6-5b5e-4a8e-9f2a-4b1f6e0a7c11';

const inv = (total: number, extra: Partial<Inventory> = {}): Inventory => inventoryWithDefaults({ total, ...extra });

const provider = (extra: Partial<Provider> = {}): Provider => makeProvider(RP, { name: 'rp', generation: 4, ...extra });

const consumer = (allocations: Consumer['allocations'], consumerType?: string): Pick<Consumer, 'allocations' | 'consumerType'> => ({
  allocations,
  consumerType,
});

describe('inventory defaults', () => {
  it('fills every field the request left out with upstream defaults', () => {
    expect(inventoryWithDefaults({ total: 10 })).toEqual({
      total: 10,
      reserved: 0,
      min_unit: 1,
      max_unit: 2147483647,
      step_size: 1,
      allocation_ratio: 1.0,
    });
    expect(INVENTORY_DEFAULTS.max_unit).toBe(MAX_INT);
  });

  it('keeps given fields and ignores anything that is not an inventory field', () => {
    const fields = { total: 2048, reserved: 512, min_unit: 10, max_unit: 1024, step_size: 10, allocation_ratio: 1.5, resource_class: 'DISK_GB' };
    expect(inventoryWithDefaults(fields)).toEqual({ total: 2048, reserved: 512, min_unit: 10, max_unit: 1024, step_size: 10, allocation_ratio: 1.5 });
  });

  it('recognises records that are not shaped like an inventory', () => {
    expect(isWellFormedInventory({ total: 3 })).toBe(true);
    expect(isWellFormedInventory({ total: 3, foo: 'x' })).toBe(true);
    expect(isWellFormedInventory({ foo: 3 })).toBe(false);
    expect(isWellFormedInventory({ total: '3' })).toBe(false);
    expect(isWellFormedInventory({ total: 3, reserved: 'a' })).toBe(false);
    expect(isWellFormedInventory([1])).toBe(false);
    expect(isWellFormedInventory(null)).toBe(false);
  });
});

describe('capacity validation', () => {
  it('computes capacity as int((total - reserved) * allocation_ratio)', () => {
    expect(capacity(inv(3, { allocation_ratio: 1.1 }))).toBe(3);
    expect(capacity(inv(10, { reserved: 2, allocation_ratio: 16 }))).toBe(128);
    expect(capacity(inv(1, { allocation_ratio: 0.5 }))).toBe(0);
    expect(capacity(inv(10, { allocation_ratio: -1 }))).toBe(-10);
    expect(capacity(inv(10, { allocation_ratio: -0.5 }))).toBe(-5);
  });

  it('refuses reserved >= total before 1.26', () => {
    expect(capacityProblem('DISK_GB', RP, inv(256, { reserved: 512 }), false)).toBe(
      `Invalid inventory for 'DISK_GB' on resource provider '${RP}'. The reserved value is greater than or equal to total.`,
    );
    expect(capacityProblem('IPV4_ADDRESS', RP, inv(253, { reserved: 253 }), false)).toMatch(/greater than or equal to total/);
    expect(capacityProblem('VCPU', RP, inv(253, { reserved: 252 }), false)).toBeUndefined();
  });

  it('allows reserved == total from 1.26 but still refuses reserved > total', () => {
    expect(capacityProblem('IPV4_ADDRESS', RP, inv(253, { reserved: 253 }), true)).toBeUndefined();
    expect(capacityProblem('IPV4_ADDRESS', RP, inv(253, { reserved: 512 }), true)).toBe(
      `Invalid inventory for 'IPV4_ADDRESS' on resource provider '${RP}'. The reserved value is greater than total.`,
    );
  });

  it('judges the allocation ratio as part of capacity, as upstream does', () => {
    expect(capacityProblem('VGPU', RP, inv(1, { allocation_ratio: 0.5 }), false)).toBeDefined();
    expect(capacityProblem('VGPU', RP, inv(1, { allocation_ratio: 0.5 }), true)).toBeUndefined();
    expect(capacityProblem('VGPU', RP, inv(10, { allocation_ratio: -1 }), true)).toBeDefined();
    expect(capacityProblem('VGPU', RP, inv(10, { allocation_ratio: 0 }), false)).toBeDefined();
  });

  it('refuses an allocation ratio of NaN at every microversion (JSON allows it, no comparison catches it)', () => {
    for (const reservedMayEqualTotal of [false, true]) {
      expect(capacityProblem('VCPU', RP, inv(16, { allocation_ratio: Number.NaN }), reservedMayEqualTotal)).toBe(
        `Invalid inventory for 'VCPU' on resource provider '${RP}'. The allocation_ratio is not a number.`,
      );
    }
  });

  it('does not check unit constraints against each other (upstream accepts min_unit > max_unit)', () => {
    expect(capacityProblem('PCPU', RP, inv(10, { min_unit: 100, max_unit: 10, step_size: 1000 }), false)).toBeUndefined();
  });

  it('reports the first bad inventory of a set', () => {
    const problem = firstCapacityProblem({ VCPU: inv(8), DISK_GB: inv(5, { reserved: 5 }), MEMORY_MB: inv(5, { reserved: 9 }) }, RP, false);
    expect(problem).toMatch(/'DISK_GB'/);
    expect(firstCapacityProblem({ VCPU: inv(8), DISK_GB: inv(5, { reserved: 5 }) }, RP, true)).toBeUndefined();
  });
});

describe('resource class order', () => {
  it('puts standard classes in catalog order, then custom classes by name', () => {
    expect(sortResourceClasses(['CUSTOM_B', 'DISK_GB', 'CUSTOM_A', 'VCPU', 'MEMORY_MB'])).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB', 'CUSTOM_A', 'CUSTOM_B']);
    expect(compareResourceClasses('PCPU', 'VGPU')).toBeGreaterThan(0);
  });
});

describe('inventory replacement while allocations exist', () => {
  const rp = provider({
    inventories: { VCPU: inv(8), MEMORY_MB: inv(50), DISK_GB: inv(10), CUSTOM_GOLD: inv(8) },
    usages: { VCPU: 2, MEMORY_MB: 5, DISK_GB: 0, CUSTOM_GOLD: 1 },
  });

  it('lists the classes in use among those asked about, in upstream order', () => {
    expect(classesInUse(rp.usages, ['CUSTOM_GOLD', 'DISK_GB', 'MEMORY_MB', 'VCPU'])).toEqual(['VCPU', 'MEMORY_MB', 'CUSTOM_GOLD']);
    expect(classesInUse(rp.usages, ['DISK_GB', 'PCPU'])).toEqual([]);
  });

  it('refuses to remove a class some consumer holds, naming every such class', () => {
    expect(replacementProblem(rp, {})).toBe(`Inventory for 'VCPU, MEMORY_MB, CUSTOM_GOLD' on resource provider '${RP}' in use.`);
    expect(replacementProblem(rp, { VCPU: inv(8), MEMORY_MB: inv(50), CUSTOM_GOLD: inv(8) })).toBeUndefined();
    expect(replacementProblem(rp, { VCPU: inv(8), CUSTOM_GOLD: inv(8) })).toBe(inUseMessage(['MEMORY_MB'], RP));
  });

  it('allows shrinking a class below its usage, and says which classes end up over capacity', () => {
    const shrunk = { VCPU: inv(1), MEMORY_MB: inv(50), CUSTOM_GOLD: inv(2, { reserved: 1 }), DISK_GB: inv(10) };
    expect(replacementProblem(rp, shrunk)).toBeUndefined();
    expect(overCapacityClasses(shrunk, rp.usages)).toEqual(['VCPU']);
    expect(overCapacityClasses({ MEMORY_MB: inv(4, { allocation_ratio: 1.1 }) }, rp.usages)).toEqual(['MEMORY_MB']);
    expect(overCapacityClasses({ MEMORY_MB: inv(4, { allocation_ratio: 1.25 }) }, rp.usages)).toEqual([]);
  });

  it('diffs inventories into added, removed and kept classes', () => {
    expect(diffInventories(rp.inventories, { VCPU: inv(1), PCPU: inv(2), CUSTOM_X: inv(3) })).toEqual({
      added: ['PCPU', 'CUSTOM_X'],
      removed: ['MEMORY_MB', 'DISK_GB', 'CUSTOM_GOLD'],
      kept: ['VCPU'],
    });
  });

  it('bumps the generation on every write and leaves usage as read', () => {
    const after = withInventories(rp, { VCPU: inv(8), MEMORY_MB: inv(50), CUSTOM_GOLD: inv(8) }, '2024-02-02T00:00:00.000Z');
    expect(after.generation).toBe(5);
    expect(after.updatedAt).toBe('2024-02-02T00:00:00.000Z');
    expect(after.usages).toBe(rp.usages);
    expect(rp.generation).toBe(4);
    const same = withInventories(after, after.inventories, '2024-02-03T00:00:00.000Z');
    expect(same.generation).toBe(6);
    expect(withInventories(provider(), {}, 'now').generation).toBe(5);
  });
});

describe('inventory serialization', () => {
  it('shows the six fields in order, with the generation unless it is 0', () => {
    const body = serializeInventory(inv(2048, { reserved: 512 }), 3);
    expect(Object.keys(body)).toEqual(['total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio', 'resource_provider_generation']);
    expect(body).toMatchObject({ total: 2048, reserved: 512, resource_provider_generation: 3 });
    expect(serializeInventory(inv(1), 0)).not.toHaveProperty('resource_provider_generation');
  });

  it('keys all inventories by class, in class order, under the provider generation', () => {
    const body = serializeInventories({ DISK_GB: inv(10), VCPU: inv(4) }, 7);
    expect(body.resource_provider_generation).toBe(7);
    expect(Object.keys(body.inventories)).toEqual(['VCPU', 'DISK_GB']);
    expect(body.inventories.DISK_GB).not.toHaveProperty('resource_provider_generation');
    expect(serializeInventories({}, 0)).toEqual({ resource_provider_generation: 0, inventories: {} });
  });
});

describe('usages', () => {
  it('reports every inventoried class of a provider, 0 when unused', () => {
    const rp = provider({ inventories: { DISK_GB: inv(10), VCPU: inv(4) }, usages: { VCPU: 3, PCPU: 0 } });
    expect(providerUsages(rp)).toEqual({ VCPU: 3, DISK_GB: 0 });
    expect(providerUsages(provider())).toEqual({});
  });

  it('sums one consumer over all its providers', () => {
    expect(consumerTotals(consumer({ a: { VCPU: 2, DISK_GB: 10 }, b: { DISK_GB: 5 } }))).toEqual({ VCPU: 2, DISK_GB: 15 });
    expect(consumerTotals(consumer({}))).toEqual({});
  });

  const fixture = [
    consumer({ rp1: { DISK_GB: 1000 } }),
    consumer({ rp1: { VCPU: 6 } }),
    consumer({ rp1: { VCPU: 1, DISK_GB: 20 } }),
    consumer({ rp1: { DISK_GB: 10 } }, 'INSTANCE'),
    consumer({ rp1: { DISK_GB: 10 } }, 'PONY'),
    consumer({}, 'PONY'),
  ];

  it('sums a project without consumer types before 1.38', () => {
    expect(totalUsages(fixture)).toEqual({ VCPU: 7, DISK_GB: 1040 });
    expect(totalUsages([])).toEqual({});
  });

  it('groups by consumer type from 1.38, with unknown for consumers without one', () => {
    expect(usagesByConsumerType(fixture)).toEqual({
      unknown: { DISK_GB: 1020, VCPU: 7, consumer_count: 3 },
      INSTANCE: { DISK_GB: 10, consumer_count: 1 },
      PONY: { DISK_GB: 10, consumer_count: 1 },
    });
    expect(consumerTypeOf({ consumerType: undefined })).toBe('unknown');
  });

  it('filters by consumer type: a name, all or unknown (case-sensitive)', () => {
    expect(usagesByConsumerType(fixture, 'PONY')).toEqual({ PONY: { DISK_GB: 10, consumer_count: 1 } });
    expect(usagesByConsumerType(fixture, 'COW')).toEqual({});
    expect(usagesByConsumerType(fixture, 'all')).toEqual({ all: { DISK_GB: 1040, VCPU: 7, consumer_count: 5 } });
    expect(usagesByConsumerType(fixture, 'ALL')).toEqual({});
    expect(usagesByConsumerType(fixture, 'unknown')).toEqual({ unknown: { DISK_GB: 1020, VCPU: 7, consumer_count: 3 } });
    expect(usagesByConsumerType(fixture, 'UNKNOWN')).toEqual({});
    expect(usagesByConsumerType([], 'all')).toEqual({});
  });
});
