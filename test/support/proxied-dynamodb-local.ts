/**
 * For tests that kill a service process at a chosen DynamoDB request: a fault
 * proxy in front of the worker's DynamoDB Local for the services
 * (scripts/lib/dynamodb-fault-proxy.ts, holdNext), all of them on the file's
 * table, and the test's own reads, writes and sweeps going to DynamoDB Local
 * directly.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { startFaultProxy, type FaultProxy, type RequestMatcher } from '../../scripts/lib/dynamodb-fault-proxy.js';
import { startServiceProcess, type ServiceProcess } from './service-process.js';

export function useProxiedDynamoDbLocal(): { readonly proxy: FaultProxy } {
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    proxy = await startFaultProxy({ target: process.env.PLACEMENT_DYNAMODB_ENDPOINT! });
  }, 600_000);
  afterAll(async () => {
    await proxy?.stop();
  });
  return {
    get proxy() {
      if (!proxy) throw new Error('the proxy starts in beforeAll');
      return proxy;
    },
  };
}

/**
 * A service process on that proxy, with no sweeps of its own (they would
 * race the test's), started before the file's tests and stopped after, and
 * the one way such tests kill it at a step. `environment` adds to its own.
 */
export function useKillableService(table: { readonly proxy: FaultProxy }, environment: Record<string, string> = {}) {
  let service: ServiceProcess | undefined;
  const start = async () => {
    service = await startServiceProcess({ dynamoDbEndpoint: table.proxy.url, environment: { PLACEMENT_LOCAL_SWEEP_SECONDS: '0', ...environment } });
  };
  beforeAll(start, 600_000);
  afterAll(async () => {
    await service?.stop();
  });
  return {
    client: () => new PlacementClient(service!.url, { version: '1.39', timeoutMs: 300_000 }),
    /**
     * Sends the request, SIGKILLs the service once the DynamoDB request that
     * `matches` arrived (held back by the proxy, so that the kill lands
     * exactly there), and starts it again. The request got no answer.
     */
    async killedAt(matches: RequestMatcher, send: () => Promise<unknown>): Promise<void> {
      const held = table.proxy.holdNext(matches);
      const sent = send().catch((error: unknown) => error);
      await held;
      await service!.kill();
      expect(await sent).toBeInstanceOf(Error);
      await start();
    },
  };
}
