import { describe, expect, it } from 'vitest';
import { capacity, checkAllocation, fitsCapacity, freeCapacities, largestAllocation } from '../../../shared/domain/capacity.js';
import type { Inventory, Provider } from '../../../shared/domain/model.js';

const inventory = (total: number, extra: Partial<Inventory> = {}): Inventory => ({
  total,
  reserved: 0,
  min_unit: 1,
  max_unit: total,
  step_size: 1,
  allocation_ratio: 1,
  ...extra,
});

const host = (inventories: Provider['inventories'], usages: Provider['usages'] = {}) => ({ uuid: 'h', inventories, usages }) as Provider;

describe('capacity', () => {
  it('is (total - reserved) * allocation_ratio in whole units, cut towards zero like Python int()', () => {
    expect(capacity(inventory(10, { reserved: 2, allocation_ratio: 1.5 }))).toBe(12);
    expect(capacity(inventory(10, { reserved: 3, allocation_ratio: 1.55 }))).toBe(10); // 10.85
    // Upstream accepts such an inventory from 1.26 (int(-0.5) is 0) and shows capacity 0.
    expect(capacity(inventory(1, { reserved: 2, allocation_ratio: 0.5 }))).toBe(0);
  });

  it('checks usage, min/max unit and step size', () => {
    const vcpu = inventory(10, { reserved: 2, max_unit: 4, step_size: 2, allocation_ratio: 1.5 });
    const provider = host({ VCPU: vcpu }, { VCPU: 8 });
    expect(fitsCapacity(provider, 'VCPU', 4)).toBe(true);
    expect(fitsCapacity(provider, 'VCPU', 3)).toBe(false); // step size
    expect(fitsCapacity({ ...provider, usages: { VCPU: 10 } }, 'VCPU', 4)).toBe(false); // over capacity
    expect(fitsCapacity(provider, 'DISK_GB', 1)).toBe(false);
  });

  it('gives whole amounts the answer the unrounded product gives', () => {
    // 10.85 units: 10 fit, 11 do not, as upstream's claim check (10 + 1 <= 10.85 is false) answers.
    const memory = host({ MEMORY_MB: inventory(10, { reserved: 3, allocation_ratio: 1.55, max_unit: 100 }) });
    expect(fitsCapacity(memory, 'MEMORY_MB', 10)).toBe(true);
    expect(fitsCapacity(memory, 'MEMORY_MB', 11)).toBe(false);
    expect(() => checkAllocation(memory, 'MEMORY_MB', 1, 10)).toThrow(/would exceed the capacity/);
    expect(freeCapacities({ ...memory, usages: { MEMORY_MB: 4 } })).toEqual({ MEMORY_MB: 6 });
  });

  it('stores free capacity past 2^53 as 2^53 - 1, which the SDK can write', () => {
    const disk = host({ DISK_GB: inventory(8, { allocation_ratio: 9223372036854776000, max_unit: 2147483647 }) });
    expect(capacity(disk.inventories.DISK_GB)).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
    expect(freeCapacities({ ...disk, usages: { DISK_GB: 20 } })).toEqual({ DISK_GB: Number.MAX_SAFE_INTEGER });
    expect(fitsCapacity({ ...disk, usages: { DISK_GB: 20 } }, 'DISK_GB', 20)).toBe(true);
  });

  it('takes the largest allocation that fits as free capacity within max_unit, never below 0, and nothing larger fits', () => {
    const vcpu = inventory(16, { allocation_ratio: 4, max_unit: 16 });
    expect(largestAllocation(vcpu, 0)).toBe(16); // 64 free, max_unit 16
    expect(largestAllocation(vcpu, 54)).toBe(10);
    expect(largestAllocation(vcpu, 70)).toBe(0); // over-used after the inventory shrank
    for (const used of [0, 10, 54, 63, 64]) {
      const most = largestAllocation(vcpu, used);
      const provider = host({ VCPU: vcpu }, { VCPU: used });
      expect(fitsCapacity(provider, 'VCPU', most + 1)).toBe(false);
      if (most > 0) expect(fitsCapacity(provider, 'VCPU', most)).toBe(true);
    }
  });
});
