/**
 * `npx tsx scripts/bench-class-rename.ts --reference URL [--providers N]`:
 * the rename of a custom class held by N providers (default 1,000) and 3N
 * consumers (scripts/lib/big-changes.ts, renameClassInUse), on this service
 * (started here on its own DynamoDB Local, behind the request-counting proxy
 * of scripts/lib/dynamodb-fault-proxy.ts, with no faults) and on the
 * reference: each side's status and time, the DynamoDB requests of the
 * rename by operation, and the paths at which the two states left differ.
 */
import { parseArgs } from 'node:util';
import { isDeepStrictEqual } from 'node:util';
import { startDynamoDbLocal } from '../local/dynamodb-local.js';
import { startFaultProxy } from './lib/dynamodb-fault-proxy.js';
import { renameClassInUse } from './lib/big-changes.js';
import { PlacementClient } from '../admin/placement-client.js';

const { values } = parseArgs({ options: { reference: { type: 'string' }, providers: { type: 'string', default: '1000' } } });
if (!values.reference) throw new Error('give --reference URL');

const database = await startDynamoDbLocal({});
const proxy = await startFaultProxy({ target: database.endpoint });
process.env.PLACEMENT_DYNAMODB_ENDPOINT = proxy.url;
process.env.PLACEMENT_LOCAL_SWEEP_SECONDS = '0';
const { startLocalService } = await import('../local/service.js');
const service = await startLocalService({ port: 0 });

/** The paths at which two states differ. */
function differences(a: unknown, b: unknown, path = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return [path || '/'];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((key) => differences((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}/${key}`));
}

try {
  const plan = renameClassInUse.plan(Number(values.providers));
  const states: unknown[] = [];
  for (const [side, url] of [
    ['target', service.url],
    ['reference', values.reference],
  ] as const) {
    const placement = new PlacementClient(url, { timeoutMs: 900_000 });
    await renameClassInUse.prepare(placement, plan);
    const before = proxy.requests();
    const response = await renameClassInUse.change(placement, plan);
    const after = proxy.requests();
    const requests = Object.fromEntries(
      Object.entries(after)
        .map(([operation, n]) => [operation, n - (before[operation] ?? 0)])
        .filter(([, n]) => n !== 0),
    );
    const total = Object.values(requests).reduce((sum: number, n) => sum + (n as number), 0);
    console.log(
      `${side}: ${response.status} in ${response.ms.toFixed(0)} ms${side === 'target' ? `; DynamoDB requests ${total}: ${JSON.stringify(requests)}` : ''}`,
    );
    states.push(await renameClassInUse.snapshot(placement, plan));
  }
  const differing = differences(states[0], states[1]);
  console.log(
    `${plan.providers.length} providers, ${plan.consumers.length} consumers; state differences: ${differing.length}${differing.length > 0 ? ` (${differing.slice(0, 5).join(', ')})` : ''}`,
  );
} finally {
  await service.stop();
  await proxy.stop();
  await database.stop();
}
