/** The synthetic region loaded through the API, grown and shrunk: placement-admin verify finds the service equal to the region's file. */
import { describe, expect, it } from 'vitest';
import { PlacementClient } from '../../../admin/placement-client.js';
import { regionFileLines } from '../../../admin/region-copy/region-file.js';
import { LoadedRegion } from '../../../scripts/synthetic-region/api-loader.js';
import { SyntheticRegion, VARIED_SHAPE } from '../../../scripts/synthetic-region/region.js';
import { runAdmin, verifyLine } from '../../support/admin.js';
import { useLocalService } from '../../support/local-service.js';

const HEADER = { created_at: '2024-01-01T00:00:00.000Z', source: 'test', microversion: '1.39' };

describe('the synthetic region loaded through the API', () => {
  const service = useLocalService();
  const region = new SyntheticRegion({ ...VARIED_SHAPE, seed: 11 });
  const verify = (nodes: number) =>
    runAdmin(['verify', '--to', service.url, '--quiet'], { stdin: `${[...regionFileLines(region.build(nodes), HEADER)].join('\n')}\n` });

  it('is the region of its region file, however it grew and shrank, over-committed nodes included', async () => {
    const loaded = new LoadedRegion(region, new PlacementClient(service.url));
    await loaded.resize(5);
    await loaded.resize(10);
    const grown = await verify(10);
    expect(grown.status, grown.stdout).toBe(0);
    expect(verifyLine(grown)).toMatchObject({ differences: 0 });
    expect(loaded.instances.size).toBe(10 * VARIED_SHAPE.instancesPerNode);

    await loaded.resize(6);
    const shrunk = await verify(6);
    // Shrinking deletes providers and consumers, never a custom trait: the third block's rack stays.
    expect(shrunk.stdout).toMatch(/^trait CUSTOM_RACK_2: only in the target$/m);
    expect(verifyLine(shrunk)).toMatchObject({ differences: 1 });

    const rediscovered = new LoadedRegion(region, new PlacementClient(service.url));
    await rediscovered.discover();
    expect(rediscovered.size).toBe(6);
    expect([...rediscovered.instances.keys()].sort()).toEqual([...loaded.instances.keys()].sort());
  }, 600_000);
});
