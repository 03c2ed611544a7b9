/**
 * `npm run fuzz -- --seed S --runs N`: the property-based fuzzer
 * (docs/testing/hostile-input.md) for long runs. Starts DynamoDB Local, the
 * fault proxy in front of it (no faults: it counts the writes sent; behind it
 * write-outcomes.ts tells which DynamoDB applied) and the local service in
 * this process, creates the fixture, and sends N generated
 * requests over every route. Prints answers per route that answered, by
 * status class, with the clean requests and their 2xx; the result; and each
 * failure as a curl command and the fast-check path that generates it again
 * (`--seed S --path P` sends that one request). Exits 1 on any failure, or
 * when a route answered no clean request with a 2xx.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { startDynamoDbLocal } from '../../local/dynamodb-local.js';
import { startFaultProxy } from '../lib/dynamodb-fault-proxy.js';
import { ANSWER_WITHIN_MS, describeFailure, FuzzSession } from './property.js';
import { fuzzRequests, ROUTE_KEYS } from './requests.js';
import { startWriteOutcomes } from './write-outcomes.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    runs: { type: 'string' },
    path: { type: 'string' },
  },
});
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const runs = Number(values.runs ?? (values.path === undefined ? 2000 : 1));
if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(runs) || runs < 1) throw new Error('--seed and --runs take whole numbers (--runs at least 1)');

// Nothing writes in the background (the sweeper, the history stream's reader): every write counted is a request's.
process.env.PLACEMENT_LOCAL_SWEEP_SECONDS = '0';
process.env.PLACEMENT_LOCAL_HISTORY_SECONDS = '0';
process.env.PLACEMENT_LOG_LEVEL ??= 'ERROR';
const database = await startDynamoDbLocal();
const outcomes = await startWriteOutcomes(database.endpoint);
const proxy = await startFaultProxy({ target: outcomes.url });
process.env.PLACEMENT_DYNAMODB_ENDPOINT = proxy.url;
const { startLocalService } = await import('../../local/service.js');
const service = await startLocalService({ port: 0 });

/** fast-check's path of the n-th run from the start (or from the path given). */
const pathOf = (n: number): string => {
  if (values.path === undefined) return String(n);
  return /^\d+$/.test(values.path) ? String(Number(values.path) + n) : values.path;
};

let failed: boolean;
try {
  const session = new FuzzSession(service.url, proxy, outcomes);
  await session.start();
  const started = performance.now();
  let run = 0;
  await fc.check(
    fc.asyncProperty(fuzzRequests, async (request) => {
      const path = pathOf(run++);
      await session.check(request, path);
      if (run % 500 === 0) {
        const seconds = ((performance.now() - started) / 1000).toFixed(0);
        process.stderr.write(`${run}/${runs} requests, ${session.tally.failures.length} failures, ${seconds} s\n`);
      }
      // Every request is judged by the session; the run goes on past failures, so that it finds them all.
      return true;
    }),
    { seed, numRuns: runs, ...(values.path === undefined ? {} : { path: values.path }) },
  );
  const seconds = (performance.now() - started) / 1000;
  const { tally } = session;
  const notCovered = tally.routesNotCovered();
  const perRoute = (counts: Map<string, number>) => [...counts].map(([route, n]) => `${n} on \`${route}\``).join(', ') || 'none';
  console.log(`## Fuzz run: seed ${seed}, ${tally.total} requests in ${seconds.toFixed(0)} s\n`);
  console.log(`Requests by mode: ${[...tally.modes].map(([mode, n]) => `${n} ${mode}`).join(', ')}. Each counted under the route that answered it.\n`);
  console.log(tally.table());
  console.log(
    [
      '',
      `Routes that answered a clean request with a 2xx: ${ROUTE_KEYS.length - notCovered.length} of ${ROUTE_KEYS.length}${notCovered.length > 0 ? ` (not: ${notCovered.join(', ')})` : ''}.`,
      `Result: ${tally.count('5xx')} answers of 5xx, ${tally.count('no answer')} connections closed without an answer, ` +
        `${tally.count('slow')} answers past ${ANSWER_WITHIN_MS / 1000} s (slowest ${tally.slowest.toFixed(0)} ms), ${tally.count('write on 4xx')} writes on a 4xx, ` +
        `${tally.count('state changed on 4xx')} 4xx answers that changed the stored state.`,
      `4xx answers that sent a write DynamoDB refused (nothing written): ${perRoute(tally.refusedOn4xx)}.`,
      `4xx answers that wrote and rolled back, the stored state as it was: ${perRoute(tally.rolledBackOn4xx)}.`,
      `Rollback bodies, by route: ${
        [...tally.rollbacks].map(([route, outcomes]) => `\`${route}\` ${[...outcomes].map(([outcome, n]) => `${n} ${outcome}`).join(', ')}`).join('; ') ||
        'none'
      }.`,
    ].join('\n'),
  );
  if (tally.failures.length > 0) {
    console.log('\n## Failures\n');
    for (const [n, { verdict, path }] of tally.failures.entries()) {
      console.log(`### ${n + 1}\n\n\`\`\`\n${describeFailure(verdict, service.url, `npm run fuzz -- --seed ${seed} --path ${path}`)}\n\`\`\`\n`);
    }
  }
  failed = tally.failures.length > 0 || notCovered.length > 0;
} finally {
  await service.stop();
  await proxy.stop();
  await outcomes.stop();
  await database.stop();
}
process.exit(failed ? 1 : 0);
