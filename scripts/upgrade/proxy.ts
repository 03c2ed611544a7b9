/**
 * The front door of a region in the middle of a deploy: each request goes, at
 * random (seeded), to one of the running versions. Counts what each served
 * and how many of those answers were 5xx.
 */
import { Agent, createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import { seededRandom } from '../lib/seeded-random.js';

export interface Backend {
  name: string;
  url: string;
}

export interface Tally {
  served: number;
  serverErrors: number;
}

/** Picks the backend of each request and keeps each backend's tally; the backends can change between runs. */
export class Router {
  private readonly random;
  private backends: Backend[] = [];
  readonly tallies = new Map<string, Tally>();

  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  /** From now on, requests go to these backends (one of them at random for each request). */
  route(backends: Backend[]): void {
    if (backends.length === 0) throw new Error('the proxy needs at least one backend');
    this.backends = backends;
  }

  choose(): Backend {
    return this.random.pick(this.backends);
  }

  record(backend: Backend, status: number): void {
    const tally = this.tallies.get(backend.name) ?? { served: 0, serverErrors: 0 };
    tally.served++;
    if (status >= 500) tally.serverErrors++;
    this.tallies.set(backend.name, tally);
  }

  /** The tallies so far, and a fresh start for the next run. */
  takeTallies(): Map<string, Tally> {
    const tallies = new Map(this.tallies);
    this.tallies.clear();
    return tallies;
  }
}

export interface Proxy {
  url: string;
  stop(): Promise<void>;
}

/** Serves on 127.0.0.1:`port` and passes each request, Host header included (the answers' links name the proxy), to the backend the router picks. */
export async function startProxy(router: Router, port: number): Promise<Proxy> {
  const agent = new Agent({ keepAlive: true });
  const relay = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const backend = router.choose();
    const upstream = forward(new URL(incoming.url ?? '/', backend.url), { method: incoming.method, headers: incoming.headers, agent }, (answer) => {
      router.record(backend, answer.statusCode ?? 502);
      outgoing.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(outgoing);
    });
    // A backend that cannot be reached is that backend's failure: 502, counted as its 5xx.
    upstream.on('error', (error) => {
      router.record(backend, 502);
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end(`proxy: ${backend.name} at ${backend.url}: ${error.message}`);
    });
    incoming.pipe(upstream);
  };
  const server = createServer(relay);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
