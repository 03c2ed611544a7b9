/**
 * npm run capacity:read-units [-- --compute-nodes 540,5400]
 *
 * What one run of the scheduled capacity function (functions/capacity-metrics.ts)
 * reads: the synthetic region's providers are loaded into DynamoDB Local
 * below the API (exactly the items the API writes, usages included;
 * consumers and allocations do not matter, the function never reads them),
 * then the function runs against it and DynamoDB's own
 * ReturnConsumedCapacity figures are printed. Each size is the region's
 * first that many compute nodes: the region grows from one size to the next.
 * Prices: DynamoDB on-demand $0.125 per million read request units
 * (us-east-1 list price), a run every 5 minutes (8,640 runs in 30 days).
 */
import { parseArgs } from 'node:util';
import { publishCapacity } from '../functions/capacity-metrics.js';
import { startLocalService } from '../local/service.js';
import { batchWrite } from './lib/batch-write.js';
import { regionItems } from './synthetic-region/items.js';
import { SyntheticRegion, VARIED_SHAPE } from './synthetic-region/region.js';

const READ_UNIT_PRICE = 0.125 / 1_000_000;
const RUNS_PER_MONTH = (30 * 24 * 60) / 5;

const { values } = parseArgs({ options: { 'compute-nodes': { type: 'string' } } });
const sizes = (values['compute-nodes'] ?? '540,5400').split(',').map(Number);
const region = new SyntheticRegion(VARIED_SHAPE);
const service = await startLocalService({ port: 0 });
try {
  console.log('| providers | items read | read units | $ per run | $ per month (every 5 min) | function ms on DynamoDB Local |');
  console.log('|---|---|---|---|---|---|');
  for (const computeNodes of sizes) {
    const built = region.build(computeNodes);
    await batchWrite(regionItems(built, { consumers: false }));
    const providers = built.providers.length;
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
