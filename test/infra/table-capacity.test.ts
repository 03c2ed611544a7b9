import { describe, expect, it } from 'vitest';
import { provisionedCapacityFor, provisionedUnits } from '../../infra/table-capacity.js';

describe('provisioned table capacity, sized from nova-compute polling', () => {
  const thousand = provisionedCapacityFor({ computeNodes: 1000, instancesPerNode: 30 });

  it('provisions the steady load divided by the target utilisation', () => {
    expect(provisionedUnits(70, 70)).toBe(100);
    expect(provisionedUnits(70.1, 70)).toBe(101);
    expect(provisionedUnits(100, 50)).toBe(200);
  });

  it("reads: a 1,000-node region's polling at its read units a request, kept at 70%, up to twice that", () => {
    // Per node and hour: 120 x 2 (a node's allocations) + 1,800 x 1.5 (an instance's) + 12 x 0.5 (in_tree) + 36 x 1 (inventories, aggregates, traits).
    expect(thousand.steadyReadUnitsPerSecond).toBeCloseTo((1000 * (240 + 2700 + 6 + 36)) / 3600, 6);
    // The table serves all but the in_tree listing, which the byShard index serves.
    expect(thousand.table.read).toEqual({ min: Math.ceil((1000 * 2976) / 3600 / 0.7), max: 2 * 1181 });
    expect(thousand.table.read.min).toBe(1181);
    expect(thousand.index.read.min).toBe(5);
    // The candidate search walks the index in bursts: it may scale as far as the table.
    expect(thousand.index.read.max).toBe(thousand.table.read.max);
  });

  it('writes: 3 claims a second for 1,000 nodes at 70%, up to ten times that', () => {
    expect(thousand.table.write).toEqual({ min: 26, max: 260 });
    expect(thousand.index.write).toEqual({ min: 9, max: 90 });
  });

  it('follows the region and the target, and keeps a floor of 5 units', () => {
    const five = provisionedCapacityFor({ computeNodes: 5000, instancesPerNode: 30 });
    expect(five.table.read.min).toBe(5905);
    const tight = provisionedCapacityFor({ computeNodes: 1000, instancesPerNode: 30 }, 90);
    expect(tight.table.read.min).toBe(Math.ceil((thousand.steadyReadUnitsPerSecond - (1000 * 6) / 3600) / 0.9));
    expect(tight.targetPercent).toBe(90);
    const tiny = provisionedCapacityFor({ computeNodes: 1, instancesPerNode: 0 });
    expect(tiny.table.write).toEqual({ min: 5, max: 50 });
    expect(tiny.index.read).toEqual({ min: 5, max: 10 });
  });
});
