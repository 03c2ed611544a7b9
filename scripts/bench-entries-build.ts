/**
 * `npm run bench:entries-build -- --nodes 30000`: the finalize to storage
 * format 3 of a region at format 2 (as release 1.1.0 leaves it): the
 * synthetic region (libvirt hosts, ~60 traits each) loaded as items without
 * format 3's entries, then POST /upgrade/finalize called until the build is
 * done, as `placement-admin upgrade finalize` does. Prints the build's time,
 * the entries it wrote, the transactions they took and their write units as
 * DynamoDB bills them (computed from the items: DynamoDB Local misreports a
 * transaction's units, cost-report/claim-units.ts), and the storage the
 * entries add per provider. `--verify` reads every entry back against its
 * provider afterwards.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { parseArgs } from 'node:util';
import { PlacementClient } from '../admin/placement-client.js';
import { dynamo, tableName } from '../shared/storage/client.js';
import { entriesOfProvider } from '../shared/storage/entries/of-provider.js';
import { CAPACITY_ENTRY_TYPE } from '../shared/storage/items/capacity-entry.js';
import { encodeStorageFormat } from '../shared/storage/items/storage-format.js';
import type { Item } from '../shared/storage/reads.js';
import { MAX_TRANSACTION_ITEMS } from '../shared/storage/commit/transact.js';
import { batchWrite } from './lib/batch-write.js';
import { startOurService } from './bench-candidates/services.js';
import { itemBytes, transactionWriteUnits } from './cost-report/claim-units.js';
import { providerItem, providers, regionItems } from './synthetic-region/items.js';
import { DEFAULT_SHAPE, SyntheticRegion } from './synthetic-region/region.js';

const { values } = parseArgs({ options: { nodes: { type: 'string', default: '30000' }, verify: { type: 'boolean', default: false } } });
const nodes = Number(values.nodes);
const log = (message: string) => console.error(`[bench-entries-build] ${message}`);

/** What format 3 adds: capacity entries and trait holder entries. */
const isFormat3Entry = (item: Item) => item.type === CAPACITY_ENTRY_TYPE || String(item.pk).startsWith('TRAIT#');

// The service reads the format on every request, and no request outlives the benchmark's: the build starts with the finalize.
process.env.PLACEMENT_STORAGE_FORMAT_SECONDS = '0';
process.env.PLACEMENT_LONGEST_REQUEST_SECONDS = '0';
const service = await startOurService();
try {
  const region = new SyntheticRegion(DEFAULT_SHAPE).build(nodes);
  await dynamo().send(new PutCommand({ TableName: tableName(), Item: encodeStorageFormat({ format: 2, finalizedBy: '1.1.0' }) }));
  // The build reads providers only: their usages say what the consumers hold, whose own items would only slow the load.
  const items = regionItems(region, { consumers: false }).filter((item) => !isFormat3Entry(item));
  let started = performance.now();
  await batchWrite(items);
  log(
    `${nodes} nodes, ${region.providers.length} providers: ${items.length} items loaded at format 2 in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );

  // What the build writes, as DynamoDB bills it: per provider, its entries beside a check of the provider, 100 actions a transaction.
  let units = 0;
  let transactions = 0;
  let filling = 0;
  let entryBytes = 0;
  let expected = 0;
  for (const provider of providers(region).values()) {
    const entries = entriesOfProvider(provider)
      .filter((entry) => entry.sinceFormat3)
      .map((entry) => entry.item);
    expected += entries.length;
    entryBytes += entries.reduce((sum, item) => sum + itemBytes(item), 0);
    for (let start = 0; start === 0 || start < entries.length; start += MAX_TRANSACTION_ITEMS - 1) {
      const part = entries.slice(start, start + MAX_TRANSACTION_ITEMS - 1);
      units += transactionWriteUnits(part) + transactionWriteUnits([providerItem(provider)]);
      // Parts are packed into transactions of at most 100 actions, a part never split (entries/build.ts).
      if (filling + part.length + 1 > MAX_TRANSACTION_ITEMS) filling = 0;
      if (filling === 0) transactions++;
      filling += part.length + 1;
    }
  }

  const placement = new PlacementClient(service.url, { version: '1.39', timeoutMs: 600_000 });
  started = performance.now();
  let answer = await placement.post('/upgrade/finalize', { format: 3 });
  for (let calls = 1; answer.status === 202; calls++) {
    const { shards_done, providers: built, entries } = answer.body.entries;
    log(`call ${calls}: ${shards_done} of 8 shards, ${built} providers, ${entries} entries (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    answer = await placement.post('/upgrade/finalize', { format: 3 });
  }
  if (answer.status !== 200) throw new Error(`finalize answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  const seconds = (performance.now() - started) / 1000;
  const { providers: built, entries: written } = answer.body.entries;

  let verified = 'not asked (--verify)';
  if (values.verify) {
    let marker: string | null = null;
    const total = { providers: 0, entries: 0, disagreements: 0 };
    do {
      const page: any = (await placement.get(`/upgrade/entries${marker ? `?marker=${marker}` : ''}`)).body;
      total.providers += page.providers;
      total.entries += page.entries;
      total.disagreements += page.disagreements.length;
      marker = page.next;
    } while (marker);
    verified = `${total.providers} providers, ${total.entries} entries, ${total.disagreements} disagreements`;
  }

  console.log(`\nThe build of format 3's entries at ${nodes} nodes (DynamoDB Local, this machine)\n`);
  console.log(
    '| nodes | providers | entries written | entries expected | transactions (computed) | write units (computed) | time s | entry bytes per provider | verify |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${nodes} | ${built} | ${written} | ${expected} | ${Math.round(transactions)} | ${units} | ${seconds.toFixed(0)} | ${Math.round(entryBytes / region.providers.length)} | ${verified} |`,
  );
} finally {
  await service.stop();
}
