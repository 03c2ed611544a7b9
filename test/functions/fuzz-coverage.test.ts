/**
 * The fuzzer's checks can fail (scripts/fuzz/property.ts): behind a proxy
 * that answers one route with a Placement 404 whatever is asked, the
 * coverage check names exactly that route, the answers counted under it;
 * and the state comparison that judges a 4xx which rolled back sees a
 * change. A few routes around a provider's traits, a small budget.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PlacementClient } from '../../admin/placement-client.js';
import { FIXTURE, readState, stateChanges } from '../../scripts/fuzz/fixture.js';
import { answeringRoute, FuzzSession } from '../../scripts/fuzz/property.js';
import { requestsFor } from '../../scripts/fuzz/requests.js';
import { ROUTES, routeKey } from '../../shared/http/routes.js';
import { useFuzzedService } from '../support/fuzz-service.js';

const BROKEN = 'GET /resource_providers/{uuid}/traits';
const CHECKED = [
  'GET /resource_providers/{uuid}',
  'GET /resource_providers/{uuid}/traits',
  'PUT /resource_providers/{uuid}/traits',
  'DELETE /resource_providers/{uuid}/traits',
  'GET /traits',
  'GET /traits/{name}',
];

const { service, proxy, outcomes } = useFuzzedService();

/** In front of the service: every request the router gives BROKEN is answered 404, as Placement answers one; the rest pass. */
let front: Server;
let frontUrl: string;
beforeAll(async () => {
  const { hostname, port } = new URL(service.url);
  front = createServer((incoming, answer) => {
    if (answeringRoute(incoming.method ?? 'GET', incoming.url ?? '/') === BROKEN) {
      incoming.resume();
      const body = JSON.stringify({
        errors: [{ status: 404, title: 'Not Found', detail: 'The resource could not be found.\n\n Not here.  ', request_id: 'req-0' }],
      });
      answer.writeHead(404, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      answer.end(body);
      return;
    }
    const outgoing = httpRequest({ hostname, port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (reply) => {
      answer.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(answer);
    });
    outgoing.on('error', () => answer.destroy());
    incoming.pipe(outgoing);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => front?.close(resolve));
});

let session: FuzzSession;
beforeAll(async () => {
  session = new FuzzSession(frontUrl, proxy(), outcomes(), { serviceUrl: service.url, routes: CHECKED });
  await session.start();
});

it(`names ${BROKEN}, which answers only 404, as the route that answered no clean request with a 2xx`, async () => {
  const requests = fc.oneof(...ROUTES.filter((route) => CHECKED.includes(routeKey(route))).map(requestsFor));
  await fc.assert(
    fc.asyncProperty(requests, async (request) => {
      await session.check(request);
    }),
    { seed: 46, numRuns: 150 },
  );
  const { tally } = session;
  console.log(`${tally.table()}\n\nNot covered: ${tally.routesNotCovered().join(', ')}`);
  expect(tally.routesNotCovered()).toEqual([BROKEN]);
  // Its answers are counted under it, clean ones among them: it was reached, and answered nothing but 404s.
  expect(tally.clean.get(BROKEN)!.requests).toBeGreaterThan(0);
  expect([...tally.byRoute.get(BROKEN)!.keys()]).toEqual(['4xx']);
});

it('the state comparison sees a change a request made', async () => {
  const api = new PlacementClient(service.url, { version: 'latest' });
  const before = await readState(api);
  expect(stateChanges(before, await readState(api))).toEqual([]);
  const path = `/resource_providers/${FIXTURE.empty}/traits`;
  const { generation } = (await api.get(`/resource_providers/${FIXTURE.empty}`)).body;
  expect((await api.put(path, { resource_provider_generation: generation, traits: [FIXTURE.customTrait] })).status).toBe(200);
  // Its traits, and its generation wherever it shows; nothing of another provider.
  const changed = stateChanges(before, await readState(api)).map((change) => change.slice(0, change.indexOf(': ')));
  expect(changed).toContain(path);
  expect(changed).toContain('/resource_providers');
  expect(changed.filter((where) => where.startsWith('/resource_providers/') && !where.startsWith(`/resource_providers/${FIXTURE.empty}/`))).toEqual([]);
});
