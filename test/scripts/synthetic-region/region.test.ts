import { describe, expect, it } from 'vitest';
import { providerLevels } from '../../../admin/region-copy/region.js';
import { readRegionFile, regionFileLines } from '../../../admin/region-copy/region-file.js';
import { compareRegions } from '../../../admin/region-copy/verify.js';
import { widenedInventories } from '../../../admin/region-copy/write-api.js';
import { capacity } from '../../../shared/domain/capacity.js';
import { DEFAULT_SHAPE, FPGA_CLASS, SyntheticRegion, VARIED_SHAPE } from '../../../scripts/synthetic-region/region.js';
import { regionItems } from '../../../scripts/synthetic-region/items.js';

async function* linesOf(lines: Iterable<string>) {
  yield* lines;
}

describe('the synthetic region', () => {
  const varied = new SyntheticRegion({ ...VARIED_SHAPE, seed: 1 });
  const region = varied.build(200);

  it('makes nested trees, sharing providers, custom classes and traits, and consumers of several projects and types', () => {
    expect(providerLevels(region.providers)).toHaveLength(3);
    expect(region.providers.filter((provider) => provider.traits.includes('MISC_SHARES_VIA_AGGREGATE')).length).toBeGreaterThan(5);
    expect(region.providers.some((provider) => FPGA_CLASS in provider.inventories)).toBe(true);
    expect(region.providers.filter((provider) => provider.name.endsWith('-nic'))).toHaveLength(80);
    expect(region.providers.some((provider) => /-pf\d$/.test(provider.name))).toBe(true);
    expect(region.resourceClasses).toEqual([FPGA_CLASS]);
    expect(region.traits).toHaveLength(50);
    expect(region.consumers).toHaveLength(200 * VARIED_SHAPE.instancesPerNode);
    expect(new Set(region.consumers.map((consumer) => consumer.project_id)).size).toBe(20);
    expect(new Set(region.consumers.map((consumer) => consumer.consumer_type))).toEqual(new Set(['INSTANCE', 'MIGRATION', null]));
    expect(region.consumers.some((consumer) => Object.keys(consumer.allocations).length >= 3)).toBe(true);
  });

  it('places every instance where it fits, but for the over-committed nodes, as a lowered allocation ratio leaves them', () => {
    const over = region.providers.filter((provider) => widenedInventories(provider.inventories, region.providerAllocations.get(provider.uuid) ?? {}));
    expect(over.map((provider) => provider.name).sort()).toEqual(['region-cn-107-numa0', 'region-cn-7-numa0']);
    for (const provider of over) expect(capacity(provider.inventories.VCPU!)).toBeLessThan(2 * VARIED_SHAPE.instancesPerNode);
  });

  it('keeps node i the same whatever the size: a region grows by its next nodes', () => {
    const smaller = varied.build(120);
    const ofSmaller = new Set(smaller.providers.map((provider) => provider.uuid));
    expect(region.providers.filter((provider) => ofSmaller.has(provider.uuid) && !provider.traits.includes('MISC_SHARES_VIA_AGGREGATE'))).toEqual(
      smaller.providers.filter((provider) => !provider.traits.includes('MISC_SHARES_VIA_AGGREGATE')),
    );
    expect(region.consumers.slice(0, smaller.consumers.length)).toEqual(smaller.consumers);
    expect(new SyntheticRegion({ ...VARIED_SHAPE, seed: 2 }).build(1).providers[0]!.uuid).not.toBe(
      region.providers.find((p) => p.name === 'region-cn-0')!.uuid,
    );
  });

  it('gives the benchmarks polled compute nodes of one project, with the ~60 traits of a libvirt host', () => {
    const bench = new SyntheticRegion(DEFAULT_SHAPE).build(40);
    expect(new Set(bench.consumers.map((consumer) => consumer.project_id))).toEqual(new Set(['bench-region-project']));
    expect(bench.consumers).toHaveLength(40 * 30);
    expect(bench.providers.find((provider) => provider.name === 'region-cn-0')!.traits.length).toBeGreaterThan(55);
    expect(bench.resourceClasses).toEqual([]);
    expect(bench.traits).toEqual([]);
  });

  it('is one region whichever loader takes it: a region file reads back the same, the items hold every provider and consumer', async () => {
    const small = varied.build(12);
    const header = { created_at: '2024-01-01T00:00:00.000Z', source: 'test', microversion: '1.39' };
    const { region: read } = await readRegionFile(linesOf(regionFileLines(small, header)));
    expect(compareRegions(small, read).differences).toEqual([]);
    const items = regionItems(small);
    expect(items.filter((item) => item.sk === 'PROVIDER')).toHaveLength(small.providers.length);
    expect(items.filter((item) => item.sk === 'CONSUMER')).toHaveLength(small.consumers.length);
  });
});
