/**
 * The build of format 3's entries (shared/storage/entries/build.ts), the
 * finalize of a region at format 2, killed half-way: the service is killed
 * with SIGKILL at a build transaction and at the record of a page (each
 * held back by a proxy, so that the kill lands exactly there), started
 * again, and finalized again until done. Every entry must then be there
 * exactly once (no disagreement, as many as the providers have), whatever
 * the kill left; the build must have written each page at most twice.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { putItem, tableName, updateItem } from '../../shared/storage/dynamodb.js';
import { catalogEntryKey, TRAITS_PK } from '../../shared/storage/items/catalog-entry.js';
import { encodeStorageFormat } from '../../shared/storage/items/storage-format.js';
import { verifyAllEntries } from '../support/entries.js';
import { nth } from '../support/journal-requests.js';
import { useProxiedDynamoDbLocal } from '../support/proxied-dynamodb-local.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

type Request = Record<string, any>;
const actions = (operation: string, request: Request): Request[] => (operation === 'TransactWriteItems' ? (request.TransactItems as Request[]) : []);
const isBuildTransaction = (operation: string, request: Request) =>
  actions(operation, request).some((action) => action.ConditionCheck?.Key?.sk?.S === 'PROVIDER') &&
  actions(operation, request).some((action) => String(action.Put?.Item?.pk?.S).startsWith('CAPACITY#'));
const isPageRecord = (operation: string, request: Request) =>
  operation === 'UpdateItem' && request.Key?.pk?.S === 'TABLE' && String(request.UpdateExpression).includes('+');

const PROVIDERS = 120;
const TRAITS = ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE42', 'COMPUTE_VOLUME_MULTI_ATTACH', 'COMPUTE_NET_ATTACH_INTERFACE', 'COMPUTE_IMAGE_TYPE_QCOW2'];
const CLASSES = 3;

const KILL_POINTS = [
  { step: 'a build transaction (the fifth held back)', matches: () => nth(5, isBuildTransaction) },
  { step: "a page's record (the third held back)", matches: () => nth(3, isPageRecord) },
];

describe('the build of the entries, killed half-way and finalized again', () => {
  const table = useProxiedDynamoDbLocal();
  // Every request reads the format, and none outlives the test's, so the build starts with the finalize.
  const environment = { PLACEMENT_LOCAL_SWEEP_SECONDS: '0', PLACEMENT_STORAGE_FORMAT_SECONDS: '0', PLACEMENT_LONGEST_REQUEST_SECONDS: '0' };
  const start = () => startServiceProcess({ dynamoDbEndpoint: table.proxy.url, environment });
  const rows: string[] = [];

  /** A region at format 2 (as release 1.1.0 leaves it): providers with inventories, traits and claims, and no entries of format 3. */
  async function regionAtFormat2(placement: PlacementClient): Promise<void> {
    await putItem({ TableName: tableName(), Item: encodeStorageFormat({ format: 2, finalizedAt: new Date().toISOString(), finalizedBy: '1.1.0' }) });
    for (let n = 0; n < PROVIDERS; n++) {
      const uuid = randomUUID();
      expect((await placement.post('/resource_providers', { uuid, name: `node-${uuid}` })).status).toBe(200);
      const inventories = { VCPU: { total: 32, allocation_ratio: 4 }, MEMORY_MB: { total: 131072 }, DISK_GB: { total: 2000 } };
      expect((await placement.put(`/resource_providers/${uuid}/inventories`, { resource_provider_generation: 0, inventories })).status).toBe(200);
      expect((await placement.put(`/resource_providers/${uuid}/traits`, { resource_provider_generation: 1, traits: TRAITS })).status).toBe(200);
      const claim = { allocations: { [uuid]: { resources: { VCPU: 4, MEMORY_MB: 8192, DISK_GB: 40 } } }, project_id: 'p', user_id: 'u' };
      expect((await placement.put(`/allocations/${randomUUID()}`, { ...claim, consumer_generation: null, consumer_type: 'INSTANCE' })).status).toBe(204);
    }
    // 1.1.0 names no holder on the traits' catalog entries: the build must (the verify says so).
    for (const trait of TRAITS) await updateItem({ TableName: tableName(), Key: catalogEntryKey(TRAITS_PK, trait), UpdateExpression: 'REMOVE holder' });
  }

  for (const point of KILL_POINTS) {
    it(`killed at ${point.step}: every entry there once after a finalize again`, async () => {
      let service: ServiceProcess = await start();
      try {
        let placement = new PlacementClient(service.url, { version: '1.39', timeoutMs: 300_000 });
        await regionAtFormat2(placement);

        const held = table.proxy.holdNext(point.matches());
        const finalizing = placement.post('/upgrade/finalize', { format: 3 }).catch((error: unknown) => error);
        await held;
        await service.kill();
        expect(await finalizing).toBeInstanceOf(Error);

        service = await start();
        placement = new PlacementClient(service.url, { version: '1.39', timeoutMs: 300_000 });
        const after = (await placement.get('/upgrade')).body;
        expect(after.storage_format.table).toBe(3);
        expect(after.entries.state).toBe('building');
        let answer = await placement.post('/upgrade/finalize', { format: 3 });
        for (let calls = 1; answer.status === 202 && calls < 20; calls++) answer = await placement.post('/upgrade/finalize', { format: 3 });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);

        // Each case adds its providers to the file's table; the build goes over all of them.
        const { providers, entries, disagreements, pending } = await verifyAllEntries();
        const expected = providers * (CLASSES + TRAITS.length);
        const written = answer.body.entries.entries as number;
        rows.push(`| ${point.step} | ${providers} | ${expected} | ${entries} | ${written} | ${disagreements.length} |`);
        expect({ providers: providers % PROVIDERS, entries, disagreements, pending }).toEqual({
          providers: 0,
          entries: expected,
          disagreements: [],
          pending: 0,
        });
        // Counted by the pages recorded: at most a page per shard written again (the killed run's) beyond what is there.
        expect(written).toBeGreaterThanOrEqual(expected);
        expect(written).toBeLessThan(expected * 2);
      } finally {
        await service.stop();
      }
    }, 600_000);
  }

  it('prints what each run built', () => {
    console.log(
      [
        '| killed at | providers | entries expected | entries there | entries the record counts written | disagreements |',
        '|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    );
  });
});
