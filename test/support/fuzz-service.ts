/**
 * The service the fuzzer's tests (test/functions/fuzz*.test.ts) send to:
 * behind the DynamoDB fault proxy, which counts the writes it sends, with
 * write-outcomes.ts between the proxy and the worker's DynamoDB Local, which
 * tells which of them DynamoDB applied. Nothing writes in the background
 * (the sweeper is off; so is the history stream in the tests), so every
 * write counted is a request's.
 */
import { afterAll, beforeAll } from 'vitest';
import { startWriteOutcomes, type WriteOutcomes } from '../../scripts/fuzz/write-outcomes.js';
import { useServiceBehindFaultProxy, type ServiceBehindFaultProxy } from './fault-proxy-service.js';

export interface FuzzedService extends ServiceBehindFaultProxy {
  /** Which writes DynamoDB applied, once the service runs. */
  outcomes(): WriteOutcomes;
}

export function useFuzzedService(): FuzzedService {
  let outcomes: WriteOutcomes | undefined;
  const database = process.env.PLACEMENT_DYNAMODB_ENDPOINT!;
  // Before the service's own hooks: the proxy it starts sends to the outcomes.
  beforeAll(async () => {
    outcomes = await startWriteOutcomes(database);
    process.env.PLACEMENT_DYNAMODB_ENDPOINT = outcomes.url;
  });
  afterAll(async () => {
    process.env.PLACEMENT_DYNAMODB_ENDPOINT = database;
    await outcomes?.stop();
  });
  const service = useServiceBehindFaultProxy({}, { PLACEMENT_LOCAL_SWEEP_SECONDS: '0', PLACEMENT_LOG_LEVEL: 'CRITICAL' });
  return {
    ...service,
    outcomes: () => {
      if (outcomes === undefined) throw new Error('the write outcomes are not running');
      return outcomes;
    },
  };
}
