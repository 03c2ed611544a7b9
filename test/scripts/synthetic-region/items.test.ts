/** The synthetic region written as DynamoDB items: placement-admin verify finds the service equal to the region's file. */
import { describe, expect, it } from 'vitest';
import { regionFileLines } from '../../../admin/region-copy/region-file.js';
import { batchWrite } from '../../../scripts/lib/batch-write.js';
import { regionItems } from '../../../scripts/synthetic-region/items.js';
import { SyntheticRegion, VARIED_SHAPE } from '../../../scripts/synthetic-region/region.js';
import { runAdmin, verifyLine } from '../../support/admin.js';
import { useLocalService } from '../../support/local-service.js';

describe('the synthetic region loaded as items', () => {
  const service = useLocalService();

  it('is, through the API, the region of its region file', async () => {
    const region = new SyntheticRegion({ ...VARIED_SHAPE, seed: 11 }).build(10);
    for (const name of region.resourceClasses)
      expect((await service.client({ token: 'admin', version: '1.7' })('PUT', `/resource_classes/${name}`)).status).toBe(201);
    for (const name of region.traits) expect((await service.client({ token: 'admin', version: '1.6' })('PUT', `/traits/${name}`)).status).toBe(201);
    await batchWrite(regionItems(region));
    const header = { created_at: '2024-01-01T00:00:00.000Z', source: 'test', microversion: '1.39' };
    const run = await runAdmin(['verify', '--to', service.url, '--quiet'], { stdin: `${[...regionFileLines(region, header)].join('\n')}\n` });
    expect(run.status, run.stdout).toBe(0);
    expect(verifyLine(run)).toMatchObject({ differences: 0 });
  }, 600_000);
});
