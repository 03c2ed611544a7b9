/**
 * npm run capacity:read-units [-- --compute-nodes 540,5400]
 *
 * What one run of the scheduled capacity function (functions/capacity-metrics.ts)
 * reads: a generated region's providers are loaded into DynamoDB Local
 * below the API (exactly the provider items the API writes, usages
 * included; consumers and allocations do not matter, the function never
 * reads them), then the function runs against it and DynamoDB's own
 * ReturnConsumedCapacity figures are printed. Sizes are cumulative: each
 * adds a region of that many compute nodes to what is loaded already.
 * Prices: DynamoDB on-demand $0.125 per million read request units
 * (us-east-1 list price), a run every 5 minutes (8,640 runs in 30 days).
 */
import { parseArgs } from 'node:util';
import { publishCapacity } from '../../functions/capacity-metrics.js';
import { startLocalService } from '../../local/service.js';
import type { Provider } from '../../shared/domain/model.js';
import { providerChangeWrites } from '../../shared/storage/providers.js';
import type { Item } from '../../shared/storage/reads.js';
import { batchWrite } from '../lib/batch-write.js';
import { generateRegion } from '../region-copy/generate-region.js';
import { usagesFromAllocations, type Region } from '../region-copy/region.js';

const READ_UNIT_PRICE = 0.125 / 1_000_000;
const RUNS_PER_MONTH = (30 * 24 * 60) / 5;

/** The provider items the API would have written for the region's providers. */
function providerItems(region: Region): Item[] {
  const now = new Date().toISOString();
  const parents = new Map(region.providers.map((provider) => [provider.uuid, provider.parent_provider_uuid]));
  const rootOf = (uuid: string): string => {
    const parent = parents.get(uuid);
    return parent ? rootOf(parent) : uuid;
  };
  const items: Item[] = [];
  for (const record of region.providers) {
    const provider: Provider = {
      uuid: record.uuid,
      name: record.name,
      generation: 1,
      parentUuid: record.parent_provider_uuid,
      rootUuid: rootOf(record.uuid),
      inventories: record.inventories,
      usages: usagesFromAllocations(record, region.providerAllocations.get(record.uuid)),
      traits: record.traits,
      aggregates: record.aggregates,
      children: region.providers
        .filter((child) => child.parent_provider_uuid === record.uuid)
        .map((child) => child.uuid)
        .sort(),
      createdAt: now,
      updatedAt: now,
    };
    for (const write of providerChangeWrites(undefined, provider)) if (write.item.Put) items.push(write.item.Put.Item!);
  }
  return items;
}

const { values } = parseArgs({ options: { 'compute-nodes': { type: 'string' } } });
const sizes = (values['compute-nodes'] ?? '540,4860').split(',').map(Number);
const service = await startLocalService({ port: 0 });
try {
  console.log('| providers | items read | read units | $ per run | $ per month (every 5 min) | function ms on DynamoDB Local |');
  console.log('|---|---|---|---|---|---|');
  let providers = 0;
  for (const [index, computeNodes] of sizes.entries()) {
    const region = generateRegion({ computeNodes, consumers: computeNodes * 10, seed: 100 + index });
    await batchWrite(providerItems(region));
    providers += region.providers.length;
    const started = performance.now();
    const run = await publishCapacity(() => {});
    const ms = Math.round(performance.now() - started);
    if (run.report.providers !== providers) throw new Error(`the function saw ${run.report.providers} providers, ${providers} were loaded`);
    const perRun = run.readUnits * READ_UNIT_PRICE;
    console.log(
      `| ${providers.toLocaleString('en-US')} | ${run.itemsRead.toLocaleString('en-US')} | ${run.readUnits} | $${perRun.toFixed(6)} | $${(perRun * RUNS_PER_MONTH).toFixed(2)} | ${ms} |`,
    );
  }
} finally {
  await service.stop();
}
