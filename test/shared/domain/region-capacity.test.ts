import { describe, expect, it } from 'vitest';
import { HISTOGRAM_LABELS, regionCapacity } from '../../../shared/domain/region-capacity.js';
import { inventory } from '../../support/fixtures.js';

const provider = (name: string, inventories: Record<string, ReturnType<typeof inventory>>, usages: Record<string, number> = {}) => ({
  uuid: `uuid-${name}`,
  name,
  inventories,
  usages,
});

describe('regionCapacity', () => {
  const report = regionCapacity([
    provider('a', { VCPU: inventory(10, { reserved: 2, allocation_ratio: 4 }), MEMORY_MB: inventory(1000) }, { VCPU: 8, MEMORY_MB: 950 }),
    provider('b', { VCPU: inventory(10, { allocation_ratio: 1 }) }, { VCPU: 12 }),
    provider('c', { DISK_GB: inventory(100, { min_unit: 10, step_size: 10 }) }, { DISK_GB: 95 }),
    provider('d', { DISK_GB: inventory(100, { reserved: 100 }) }),
  ]);
  const byClass = Object.fromEntries(report.classes.map((c) => [c.resourceClass, c]));

  it('sums total, reserved, capacity and usage per class, never counting an over-full provider below zero free', () => {
    expect(report.providers).toBe(4);
    expect(report.classes.map((c) => c.resourceClass)).toEqual(['VCPU', 'MEMORY_MB', 'DISK_GB']);
    // a: (10 - 2) * 4 = 32, b: 10 (and 12 used: over by 2).
    expect(byClass.VCPU).toMatchObject({ providers: 2, total: 20, reserved: 2, capacity: 42, used: 20, free: 24, utilisationPercent: 47.62 });
    expect(byClass.MEMORY_MB).toMatchObject({ providers: 1, capacity: 1000, used: 950, free: 50, utilisationPercent: 95 });
  });

  it('counts a provider as having free capacity only when the smallest allocation its inventory allows still fits', () => {
    expect(byClass.VCPU!.providersWithFree).toBe(1);
    // c has 5 GB left but allocations come in tens; d reserves everything.
    expect(byClass.DISK_GB).toMatchObject({ providers: 2, capacity: 100, used: 95, free: 5, providersWithFree: 0 });
  });

  it('buckets providers by utilisation in tenths, with those that can take nothing more as full', () => {
    expect(HISTOGRAM_LABELS[0]).toBe('0-10%');
    expect(HISTOGRAM_LABELS[10]).toBe('full');
    const bucket = (resourceClass: string, label: string) => byClass[resourceClass]!.histogram[HISTOGRAM_LABELS.indexOf(label as never)];
    expect(bucket('VCPU', '20-30%')).toBe(1); // a: 8 of 32
    expect(bucket('VCPU', 'full')).toBe(1); // b: over capacity
    expect(bucket('MEMORY_MB', '90-100%')).toBe(1);
    expect(bucket('DISK_GB', 'full')).toBe(2);
    for (const summary of report.classes) expect(summary.histogram.reduce((sum, n) => sum + n, 0)).toBe(summary.providers);
  });

  it('lists the fullest provider and class pairs first', () => {
    expect(report.fullest.map((p) => `${p.name} ${p.resourceClass} ${p.utilisationPercent}`)).toEqual([
      'b VCPU 120',
      'd DISK_GB 100',
      'a MEMORY_MB 95',
      'c DISK_GB 95',
      'a VCPU 25',
    ]);
    expect(regionCapacity([], 3)).toEqual({ providers: 0, classes: [], fullest: [] });
  });
});
