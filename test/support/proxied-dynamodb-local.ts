/**
 * For tests that kill a service process at a chosen DynamoDB request: one
 * DynamoDB Local for the file, a fault proxy in front of it for the services
 * (scripts/lib/dynamodb-fault-proxy.ts, holdNext), and the test's own reads,
 * writes and sweeps going to DynamoDB Local directly.
 */
import { afterAll, beforeAll } from 'vitest';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local.js';
import { startFaultProxy, type FaultProxy } from '../../scripts/lib/dynamodb-fault-proxy.js';

export function useProxiedDynamoDbLocal(): { readonly proxy: FaultProxy } {
  let database: DynamoDbLocal | undefined;
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    database = await startDynamoDbLocal({});
    proxy = await startFaultProxy({ target: database.endpoint });
    process.env.PLACEMENT_DYNAMODB_ENDPOINT = database.endpoint;
  }, 600_000);
  afterAll(async () => {
    await proxy?.stop();
    await database?.stop();
    delete process.env.PLACEMENT_DYNAMODB_ENDPOINT;
  });
  return {
    get proxy() {
      if (!proxy) throw new Error('the proxy starts in beforeAll');
      return proxy;
    },
  };
}
