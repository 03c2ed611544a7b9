/**
 * The property-based fuzzer (scripts/fuzz/, docs/testing/hostile-input.md)
 * with a fixed seed and a small budget: requests over every route of the
 * route table, each answered below 500, within 3 s, and a 4xx leaving the
 * stored state as it was; and every route answering a clean request with a
 * 2xx, each answer counted under the route that answered it. A
 * counterexample fails with the request as a curl command; the long runs
 * are `npm run fuzz -- --seed S --runs N`.
 */
import { test } from '@fast-check/vitest';
import { beforeAll, expect, it } from 'vitest';
import { describeFailure, FuzzSession } from '../../scripts/fuzz/property.js';
import { fuzzRequests } from '../../scripts/fuzz/requests.js';
import { useFuzzedService } from '../support/fuzz-service.js';

const SEED = 46;
const RUNS = 500;

const { service, proxy, outcomes } = useFuzzedService();

let session: FuzzSession;
beforeAll(async () => {
  session = new FuzzSession(service.url, proxy(), outcomes());
  await session.start();
});

test.prop([fuzzRequests], { seed: SEED, numRuns: RUNS })('every request: below 500, within 3 s, a 4xx leaves the stored state as it was', async (request) => {
  const verdict = await session.check(request);
  if (verdict.problems.length > 0) throw new Error(describeFailure(verdict, service.url));
});

it('every route of the route table answered a clean request with a 2xx', () => {
  expect(session.tally.routesNotCovered(), session.tally.table()).toEqual([]);
});
