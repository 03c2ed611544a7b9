/**
 * The property-based fuzzer (scripts/fuzz/, docs/testing/hostile-input.md)
 * with a fixed seed and a small budget: requests over every route of the
 * route table, each answered below 500, within 3 s, and a 4xx writing
 * nothing. A counterexample fails with the request as a curl command; the
 * long runs are `npm run fuzz -- --seed S --runs N`.
 */
import { test } from '@fast-check/vitest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeFailure, FuzzSession } from '../../scripts/fuzz/property.js';
import { fuzzRequests } from '../../scripts/fuzz/requests.js';
import { startWriteOutcomes, type WriteOutcomes } from '../../scripts/fuzz/write-outcomes.js';
import { useServiceBehindFaultProxy } from '../support/fault-proxy-service.js';

const SEED = 46;
const RUNS = 400;

// Between the fault proxy and the worker's DynamoDB Local: which of the writes sent DynamoDB applied.
let outcomes: WriteOutcomes | undefined;
const database = process.env.PLACEMENT_DYNAMODB_ENDPOINT!;
beforeAll(async () => {
  outcomes = await startWriteOutcomes(database);
  process.env.PLACEMENT_DYNAMODB_ENDPOINT = outcomes.url;
});
afterAll(async () => {
  process.env.PLACEMENT_DYNAMODB_ENDPOINT = database;
  await outcomes?.stop();
});

// Nothing writes in the background (the sweeper; the history stream is off in the tests), so every write counted is a request's.
const { service, proxy } = useServiceBehindFaultProxy({}, { PLACEMENT_LOCAL_SWEEP_SECONDS: '0', PLACEMENT_LOG_LEVEL: 'CRITICAL' });

let session: FuzzSession;
beforeAll(async () => {
  session = new FuzzSession(service.url, proxy(), outcomes!);
  await session.start();
});

test.prop([fuzzRequests], { seed: SEED, numRuns: RUNS })('every request: below 500, within 3 s, a 4xx writes nothing', async (request) => {
  const verdict = await session.check(request);
  if (verdict.problems.length > 0) throw new Error(describeFailure(verdict, service.url));
});

it('reached every route of the route table', () => {
  expect(session.tally.routesNotCovered()).toEqual([]);
});
