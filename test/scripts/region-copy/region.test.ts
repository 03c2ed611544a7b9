import { describe, expect, it } from 'vitest';
import { generateRegion, FPGA_CLASS } from '../../../scripts/region-copy/generate-region.js';
import { allocationsByProvider, providerLevels, type ProviderRecord, type Region } from '../../../scripts/region-copy/region.js';
import { readRegionFile, regionFileLines } from '../../../scripts/region-copy/region-file.js';
import { compareRegions, summaryLine } from '../../../scripts/region-copy/verify.js';
import { widenedInventories } from '../../../scripts/region-copy/write-api.js';
import { capacity } from '../../../shared/domain/capacity.js';
import { inventory } from '../../support/fixtures.js';

const record = (uuid: string, parent: string | null, fields: Partial<ProviderRecord> = {}): ProviderRecord => ({
  uuid,
  name: `rp-${uuid}`,
  parent_provider_uuid: parent,
  inventories: {},
  traits: [],
  aggregates: [],
  ...fields,
});

async function* linesOf(lines: Iterable<string>) {
  yield* lines;
}

const HEADER = { created_at: '2024-01-01T00:00:00.000Z', source: 'test', microversion: '1.39' };
const clone = (region: Region): Region => {
  const copy = JSON.parse(JSON.stringify({ ...region, providerAllocations: undefined, usages: undefined })) as Region;
  return { ...copy, providerAllocations: allocationsByProvider(copy.consumers) };
};

describe('providerLevels', () => {
  it('puts every parent in an earlier level than its children', () => {
    const levels = providerLevels([record('c', 'b'), record('b', 'a'), record('x', null), record('a', null)]);
    expect(levels.map((level) => level.map((provider) => provider.uuid))).toEqual([['a', 'x'], ['b'], ['c']]);
  });

  it('refuses a parent outside the region and a cycle', () => {
    expect(() => providerLevels([record('b', 'a')])).toThrow(/names parent a, which is not in the region/);
    expect(() => providerLevels([record('a', 'b'), record('b', 'a')])).toThrow(/its own ancestor/);
  });
});

describe('widenedInventories', () => {
  const inventories = { VCPU: inventory(10, { reserved: 2, allocation_ratio: 2, max_unit: 4 }), MEMORY_MB: inventory(1000) };

  it('leaves inventories that take their allocations alone', () => {
    expect(widenedInventories(inventories, { c1: { VCPU: 4, MEMORY_MB: 500 }, c2: { VCPU: 4 } })).toBeUndefined();
  });

  it('widens only the classes whose allocations no longer fit: capacity, max_unit or step_size', () => {
    // 20 VCPUs held on (10 - 2) * 2 = 16, one allocation above max_unit.
    const widened = widenedInventories(inventories, { c1: { VCPU: 6, MEMORY_MB: 500 }, c2: { VCPU: 14 } })!;
    expect(widened.MEMORY_MB).toEqual(inventories.MEMORY_MB);
    expect(capacity(widened.VCPU!)).toBeGreaterThanOrEqual(20);
    expect(widened.VCPU).toMatchObject({ reserved: 2, allocation_ratio: 2, max_unit: 14, min_unit: 1, step_size: 1 });
    const stepped = widenedInventories({ DISK_GB: inventory(100, { step_size: 10 }) }, { c1: { DISK_GB: 15 } })!;
    expect(stepped.DISK_GB).toMatchObject({ total: 100, step_size: 1 });
  });
});

describe('the region file', () => {
  const region = generateRegion({ computeNodes: 12, consumers: 80, seed: 5 });

  it('reads back what it wrote, compared by verify as 0 differences', async () => {
    const lines = [...regionFileLines(region, HEADER)];
    expect(JSON.parse(lines[0]!)).toEqual({ format: 'openstack-placement-region', version: 1, ...HEADER });
    expect(JSON.parse(lines.at(-1)!)).toEqual({
      end: { resource_classes: 1, traits: region.traits.length, resource_providers: region.providers.length, consumers: 80 },
    });
    const { header, region: read } = await readRegionFile(linesOf(lines));
    expect(header.source).toBe('test');
    expect(read.providers).toEqual(region.providers);
    expect(read.consumers).toEqual(region.consumers);
    const comparison = compareRegions(region, read);
    expect(comparison.differences).toEqual([]);
    expect(summaryLine(comparison)).toBe(`${comparison.checked} checked, 0 differences`);
  });

  it("skips npm run's banner before the header", async () => {
    const lines = ['', '> serverless-placement@0.1.0 export', '> tsx scripts/region-copy/export.ts --from http://x', '', ...regionFileLines(region, HEADER)];
    expect((await readRegionFile(linesOf(lines))).region.consumers).toHaveLength(80);
  });

  it('refuses a cut-off file, wrong counts, another version or an unknown record, naming the line', async () => {
    const lines = [...regionFileLines(region, HEADER)];
    await expect(readRegionFile(linesOf(lines.slice(0, -1)))).rejects.toThrow(/no "end" line: the file is cut off/);
    await expect(readRegionFile(linesOf([...lines.slice(0, 5), ...lines.slice(6)]))).rejects.toThrow(/the "end" line counts/);
    await expect(readRegionFile(linesOf([lines[0]!.replace('"version":1', '"version":2'), ...lines.slice(1)]))).rejects.toThrow(/line 1: format version 2/);
    await expect(readRegionFile(linesOf([lines[0]!, '{"flavor":"m1.small"}']))).rejects.toThrow(/line 2: unknown record "flavor"/);
    await expect(readRegionFile(linesOf([lines[0]!, '{"consumer":{"uuid":"x"}}']))).rejects.toThrow(/line 2: malformed consumer/);
    await expect(readRegionFile(linesOf(['{"nope":1}']))).rejects.toThrow(/line 1: not a region file/);
  });
});

describe('compareRegions', () => {
  const region = generateRegion({ computeNodes: 6, consumers: 30, seed: 9 });

  it('lists every kind of difference, one line each', () => {
    const changed = clone(region);
    const [first, second] = changed.providers;
    first!.name = 'renamed';
    first!.traits = [...first!.traits, 'CUSTOM_EXTRA'];
    second!.inventories = { ...second!.inventories, VCPU: inventory(1) };
    changed.consumers[0]!.project_id = 'someone-else';
    changed.consumers.pop();
    changed.resourceClasses.push('CUSTOM_ONLY_THERE');
    changed.providerAllocations = allocationsByProvider(changed.consumers);
    const { differences } = compareRegions(region, changed);
    expect(differences).toEqual(
      expect.arrayContaining([
        'resource class CUSTOM_ONLY_THERE: only in the target',
        expect.stringMatching(new RegExp(`^resource provider ${first!.uuid} \\(.*\\): name: source ".*", target "renamed"$`)),
        expect.stringMatching(new RegExp(`^resource provider ${first!.uuid} .*: traits: `)),
        expect.stringMatching(new RegExp(`^resource provider ${second!.uuid} .*: inventories: `)),
        expect.stringMatching(new RegExp(`^consumer ${region.consumers[0]!.uuid}: source vs target: project_id `)),
        `consumer ${region.consumers.at(-1)!.uuid}: only in the source`,
        expect.stringMatching(/: allocations: /),
      ]),
    );
    expect(differences.some((line) => /: usages: /.test(line))).toBe(false);
  });

  it('compares usages when a side reported them, against what the allocations add up to on the other', () => {
    const reported = clone(region);
    const [provider] = region.providers.filter((p) => region.providerAllocations.has(p.uuid));
    const held = Object.values(region.providerAllocations.get(provider!.uuid)!).reduce((sum, resources) => sum + (resources.VCPU ?? 0), 0);
    reported.usages = new Map([[provider!.uuid, { VCPU: held + 1 }]]);
    const { differences } = compareRegions(region, reported);
    expect(differences.filter((line) => line.includes(': usages: '))).toEqual([expect.stringContaining(`${provider!.uuid}`)]);
  });
});

describe('generateRegion', () => {
  const region = generateRegion({ computeNodes: 200, consumers: 2000, seed: 1 });

  it('makes nested trees, sharing providers, custom classes and traits, and consumers of several projects and types', () => {
    expect(providerLevels(region.providers)).toHaveLength(3);
    expect(region.providers.filter((provider) => provider.traits.includes('MISC_SHARES_VIA_AGGREGATE'))).toHaveLength(1);
    expect(region.providers.some((provider) => FPGA_CLASS in provider.inventories)).toBe(true);
    expect(region.providers.some((provider) => provider.traits.some((trait) => trait.startsWith('CUSTOM_')))).toBe(true);
    expect(region.consumers).toHaveLength(2000);
    expect(new Set(region.consumers.map((consumer) => consumer.project_id)).size).toBe(20);
    expect(new Set(region.consumers.map((consumer) => consumer.consumer_type))).toEqual(new Set(['INSTANCE', 'MIGRATION', null]));
    expect(region.consumers.some((consumer) => Object.keys(consumer.allocations).length >= 3)).toBe(true);
  });

  it('leaves some providers over their capacity, as a lowered allocation ratio does', () => {
    const over = region.providers.filter((provider) => widenedInventories(provider.inventories, region.providerAllocations.get(provider.uuid) ?? {}));
    expect(over).toHaveLength(2);
  });

  it('is the same region for the same seed', () => {
    expect(generateRegion({ computeNodes: 200, consumers: 2000, seed: 1 }).consumers).toEqual(region.consumers);
  });
});
