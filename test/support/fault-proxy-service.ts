/**
 * The local service of one test file (in this process) on a DynamoDB Local
 * of its own, behind the fault proxy (scripts/lib/dynamodb-fault-proxy.ts):
 * the tests set the proxy's rates, hold requests or fail from one on, and
 * read what the service did.
 */
import { afterAll } from 'vitest';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local.js';
import { startFaultProxy, type FaultProxy, type FaultProxyOptions } from '../../scripts/lib/dynamodb-fault-proxy.js';
import { useLocalService, type ServiceUnderTest } from './local-service.js';

export interface ServiceBehindFaultProxy {
  service: ServiceUnderTest;
  /** The proxy, once the service runs. */
  proxy(): FaultProxy;
}

export function useServiceBehindFaultProxy(options: Omit<FaultProxyOptions, 'target'> = {}, environment: Record<string, string> = {}): ServiceBehindFaultProxy {
  let database: DynamoDbLocal | undefined;
  let proxy: FaultProxy | undefined;
  const service = useLocalService(async () => {
    database = await startDynamoDbLocal();
    proxy = await startFaultProxy({ ...options, target: database.endpoint });
    return { PLACEMENT_DYNAMODB_ENDPOINT: proxy.url, ...environment };
  });
  afterAll(async () => {
    await proxy?.stop();
    await database?.stop();
  });
  return {
    service,
    proxy: () => {
      if (proxy === undefined) throw new Error('the fault proxy is not running');
      return proxy;
    },
  };
}
