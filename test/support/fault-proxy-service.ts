/**
 * The local service of one test file (in this process) on the worker's
 * DynamoDB Local, behind the fault proxy (scripts/lib/dynamodb-fault-proxy.ts):
 * the tests set the proxy's rates, hold requests or fail from one on, and
 * read what the service did.
 */
import { afterAll } from 'vitest';
import { startFaultProxy, type FaultProxy, type FaultProxyOptions } from '../../scripts/lib/dynamodb-fault-proxy.js';
import { useLocalService, type ServiceUnderTest } from './local-service.js';

export interface ServiceBehindFaultProxy {
  service: ServiceUnderTest;
  /** The proxy, once the service runs. */
  proxy(): FaultProxy;
}

export function useServiceBehindFaultProxy(options: Omit<FaultProxyOptions, 'target'> = {}, environment: Record<string, string> = {}): ServiceBehindFaultProxy {
  let proxy: FaultProxy | undefined;
  const service = useLocalService(async () => {
    proxy = await startFaultProxy({ ...options, target: process.env.PLACEMENT_DYNAMODB_ENDPOINT! });
    return { PLACEMENT_DYNAMODB_ENDPOINT: proxy.url, ...environment };
  });
  afterAll(async () => {
    await proxy?.stop();
  });
  return {
    service,
    proxy: () => {
      if (proxy === undefined) throw new Error('the fault proxy is not running');
      return proxy;
    },
  };
}
