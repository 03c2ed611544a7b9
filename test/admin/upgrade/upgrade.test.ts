/**
 * placement-admin upgrade check, finalize and verify, the built command
 * against the local service; a part of the region that still runs release
 * 1.0.0 is an endpoint without the upgrade route, as 1.0.0 answers it (CI's
 * mixed run uses the previous release itself: docs/testing/upgrades.md).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capacityShardOf } from '../../../shared/storage/items/capacity-entry.js';
import { runAdmin } from '../../support/admin.js';
import { useLocalService } from '../../support/local-service.js';

// The format read on every request, and no request outlives the test's: a finalize's build of the entries starts at once.
const service = useLocalService(() => ({ PLACEMENT_STORAGE_FORMAT_SECONDS: '0', PLACEMENT_LONGEST_REQUEST_SECONDS: '0' }));
const api = service.client({ token: 'admin', version: '1.39' });

/** Release 1.0.0's answer to GET /upgrade: Placement's 404 for a path it does not have. */
let release100: Server;
let release100Url: string;
beforeAll(async () => {
  release100 = createServer((_request, response) => {
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ errors: [{ status: 404, title: 'Not Found', detail: 'The resource could not be found.' }] }));
  });
  await new Promise<void>((resolve) => release100.listen(0, '127.0.0.1', resolve));
  release100Url = `http://127.0.0.1:${(release100.address() as { port: number }).port}`;
});
afterAll(() => new Promise((resolve) => release100.close(resolve)));

function table(): DynamoDBDocumentClient {
  const endpoint = process.env.PLACEMENT_DYNAMODB_ENDPOINT!;
  return DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } }));
}

async function forgetFormatRecord(): Promise<void> {
  await table().send(new DeleteCommand({ TableName: process.env.PLACEMENT_TABLE_NAME, Key: { pk: 'TABLE', sk: 'STORAGE_FORMAT' } }));
}

describe('placement-admin upgrade', () => {
  it('has nothing to do on a table its release created', async () => {
    const run = await runAdmin(['upgrade', 'check', '--url', service.url]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^storage format of the table: 3 \(set .* by release \d+\.\d+\.\d+\)$/m);
    expect(run.stdout).toMatch(/^multi-step changes in flight: 0$/m);
    expect(run.stdout).toMatch(/^entries: built \(8 of 8 shards done/m);
    expect(run.stdout).toMatch(/^next step: nothing to do: the table is at storage format 3/m);
  });

  it("on 1.0.0's table: waits and refuses to finalize while 1.0.0 still serves, finalizes once it does not", async () => {
    await forgetFormatRecord();
    // A provider written by 1.0.0, with no entries of format 3: the finalize builds them.
    const provider = 'a0000000-0000-4000-8000-0000000000b1';
    expect((await api('POST', '/resource_providers', { name: 'from-1.0.0', uuid: provider })).status).toBe(200);
    const inventories = { VCPU: { total: 8 } };
    expect((await api('PUT', `/resource_providers/${provider}/inventories`, { resource_provider_generation: 0, inventories })).status).toBe(200);
    const mixed = await runAdmin(['upgrade', 'check', '--url', service.url, '--url', release100Url]);
    expect(mixed.status, mixed.stderr).toBe(0);
    expect(mixed.stdout).toMatch(/^storage format of the table: 1 \(no record: release 1\.0\.0's\)$/m);
    expect(mixed.stdout).toMatch(new RegExp(`^${release100Url} +1\\.0\\.0 +1$`, 'm'));
    expect(mixed.stdout).toMatch(/^next step: wait: 1 of 2 still run release 1\.0\.0, which cannot read storage format 3/m);

    const refused = await runAdmin(['upgrade', 'finalize', '--url', service.url, '--url', release100Url]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^upgrade finalize refused: 1 of 2 still run release 1\.0\.0/);
    const json = JSON.parse((await runAdmin(['upgrade', 'check', '--url', service.url, '--json'])).stdout);
    expect(json.status.storage_format.table).toBe(1);
    expect(json.next).toEqual({ kind: 'finalize', to: 3 });

    const finalized = await runAdmin(['upgrade', 'finalize', '--url', service.url]);
    expect(finalized.status, finalized.stderr).toBe(0);
    expect(finalized.stderr).toMatch(/^entries: built \(8 of 8 shards done, 1 providers, 1 entries, \d+ write units\)$/m);
    expect(finalized.stdout).toMatch(/^the table is at storage format 3 \(finalized by release/);
    const after = await runAdmin(['upgrade', 'check', '--url', service.url, '--url', release100Url]);
    expect(after.stdout).toMatch(/^next step: act now: .* \(release 1\.0\.0\) cannot read storage format 3/m);
  });

  it('verifies the entries against the providers, and names a disagreement with exit status 1', async () => {
    const agreed = await runAdmin(['upgrade', 'verify', '--url', service.url]);
    expect(agreed.status, agreed.stderr).toBe(0);
    expect(agreed.stdout).toMatch(/^1 providers, 1 entries checked, 0 pending cleanup, 0 disagreements$/m);

    const entry = { pk: `CAPACITY#VCPU#${capacityShardOf('a0000000-0000-4000-8000-0000000000b1')}`, sk: '0000000008#a0000000-0000-4000-8000-0000000000b1' };
    await table().send(new DeleteCommand({ TableName: process.env.PLACEMENT_TABLE_NAME, Key: entry }));
    const disagreed = await runAdmin(['upgrade', 'verify', '--url', service.url]);
    expect(disagreed.status).toBe(1);
    expect(disagreed.stdout).toContain(`a0000000-0000-4000-8000-0000000000b1  capacity VCPU  ${entry.pk} ${entry.sk}: missing`);
    expect(disagreed.stdout).toMatch(/^1 providers, 0 entries checked, 0 pending cleanup, 1 disagreements$/m);
  });

  it('refuses --stack without --region', async () => {
    const run = await runAdmin(['upgrade', 'check', '--url', service.url, '--stack', 'placement-prod']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^--stack and --region go together/);
  });
});
