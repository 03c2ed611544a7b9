import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../../local/dynamodb-local.js';
import { Router, startProxy, type Proxy } from '../../../scripts/upgrade/proxy.js';

/** A backend that answers with its name, the Host header it saw and the status the path asks for (/status/503). */
async function backend(name: string): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const status = Number(/^\/status\/(\d+)$/.exec(request.url ?? '')?.[1] ?? 200);
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ name, host: request.headers.host, method: request.method, body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('the routing of the mixed-version proxy', () => {
  it('picks the same backends for the same seed, each of them', () => {
    const choices = (seed: number) => {
      const router = new Router(seed);
      router.route([
        { name: 'release', url: 'http://127.0.0.1:1' },
        { name: 'new', url: 'http://127.0.0.1:2' },
      ]);
      return Array.from({ length: 200 }, () => router.choose().name);
    };
    expect(choices(7)).toEqual(choices(7));
    expect(choices(7)).not.toEqual(choices(8));
    expect(new Set(choices(7))).toEqual(new Set(['release', 'new']));
  });

  it('counts what each backend served and its 5xx, and starts afresh after taking the tallies', () => {
    const router = new Router(1);
    const release = { name: 'release', url: 'http://127.0.0.1:1' };
    router.record(release, 200);
    router.record(release, 503);
    router.record({ name: 'new', url: 'http://127.0.0.1:2' }, 404);
    expect(router.takeTallies()).toEqual(
      new Map([
        ['release', { served: 2, serverErrors: 1 }],
        ['new', { served: 1, serverErrors: 0 }],
      ]),
    );
    expect(router.takeTallies().size).toBe(0);
  });
});

describe('the mixed-version proxy', () => {
  const servers: Server[] = [];
  let proxy: Proxy;
  let router: Router;
  const urls: Record<string, string> = {};

  beforeAll(async () => {
    for (const name of ['release', 'new']) {
      const { url, server } = await backend(name);
      urls[name] = url;
      servers.push(server);
    }
    router = new Router(20261126);
    proxy = await startProxy(router, await freeLoopbackPort());
  });
  afterAll(async () => {
    await proxy.stop();
    for (const server of servers) server.close();
  });

  it('sends each request to one of the backends with its method, body and Host header, and counts who served it', async () => {
    router.route([
      { name: 'release', url: urls.release! },
      { name: 'new', url: urls.new! },
    ]);
    const seen: string[] = [];
    for (let index = 0; index < 40; index++) {
      const answer = await fetch(`${proxy.url}/resource_providers`, { method: 'POST', body: `{"n": ${index}}` });
      const body = (await answer.json()) as { name: string; host: string; method: string; body: string };
      expect(body).toMatchObject({ host: new URL(proxy.url).host, method: 'POST', body: `{"n": ${index}}` });
      seen.push(body.name);
    }
    const tallies = router.takeTallies();
    expect(tallies.get('release')!.served + tallies.get('new')!.served).toBe(40);
    expect(tallies.get('release')!.served).toBe(seen.filter((name) => name === 'release').length);
    expect(tallies.get('new')!.served).toBeGreaterThan(0);
  });

  it("counts a backend's 5xx, and a backend it cannot reach as a 502 of that backend", async () => {
    router.route([{ name: 'new', url: urls.new! }]);
    expect((await fetch(`${proxy.url}/status/503`)).status).toBe(503);
    expect((await fetch(`${proxy.url}/status/404`)).status).toBe(404);
    router.route([{ name: 'release', url: `http://127.0.0.1:${await freeLoopbackPort()}` }]);
    const unreachable = await fetch(`${proxy.url}/`);
    expect(unreachable.status).toBe(502);
    expect(await unreachable.text()).toMatch(/^proxy: release at/);
    expect(router.takeTallies()).toEqual(
      new Map([
        ['new', { served: 2, serverErrors: 1 }],
        ['release', { served: 1, serverErrors: 1 }],
      ]),
    );
  });
});
