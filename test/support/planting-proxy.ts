/**
 * An HTTP proxy in front of a Placement service for the differential
 * tester's self-test. It changes the service's answers in two ways:
 * - variations the API allows (every list and object in another order, the
 *   JSON laid out differently, headers reordered, dates moved, request ids
 *   replaced), which the tester must ignore;
 * - planted differences (one field, one status, one header of the first
 *   answer to a chosen request), which it must report.
 */
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';

export interface Plant {
  /** Which answer to change: the first whose request and status match. */
  method: string;
  path: RegExp;
  status: number;
  change: 'field' | 'status' | 'header';
}

export interface PlantingProxy {
  url: string;
  /** The requests whose answers were changed, one per plant, in the order they happened. */
  planted: { plant: Plant; method: string; path: string }[];
  stop(): Promise<void>;
}

/** Every array reversed, every object's keys reversed: the same value in another order. */
function reorder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorder).reverse();
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .map(([key, item]) => [key, reorder(item)])
        .reverse(),
    );
  }
  return value;
}

/** One field changed: the first number found gets one more, else the first string a suffix. */
function changeOneField(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const entries = Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof item === 'number') {
      (value as Record<string, unknown>)[key] = item + 1;
      return true;
    }
  }
  for (const [key, item] of entries) {
    if (typeof item === 'string') {
      (value as Record<string, unknown>)[key] = `${item}-planted`;
      return true;
    }
  }
  return entries.some(([, item]) => changeOneField(item));
}

export async function startPlantingProxy(target: string, plants: Plant[]): Promise<PlantingProxy> {
  const upstream = new URL(target);
  const pending = [...plants];
  const planted: PlantingProxy['planted'] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: incoming.method,
          path: incoming.url,
          // The proxy rewrites bodies: it asks for them as they are, whatever its client accepts.
          headers: { ...incoming.headers, 'accept-encoding': 'identity' },
        },
        (answer: IncomingMessage) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            let status = answer.statusCode ?? 500;
            const headers: [string, string][] = [];
            for (let n = 0; n < answer.rawHeaders.length; n += 2) headers.push([answer.rawHeaders[n], answer.rawHeaders[n + 1]]);
            let text = Buffer.concat(body).toString('utf8');
            const isJson = headers.some(([name, value]) => name.toLowerCase() === 'content-type' && value.startsWith('application/json'));
            let json: unknown = undefined;
            if (isJson && text !== '') json = reorder(JSON.parse(text));
            const index = pending.findIndex((plant) => plant.method === incoming.method && plant.path.test(incoming.url ?? '') && plant.status === status);
            if (index >= 0) {
              const [plant] = pending.splice(index, 1);
              planted.push({ plant, method: incoming.method ?? '', path: incoming.url ?? '' });
              if (plant.change === 'status') status = status === 200 ? 202 : status + 1;
              if (plant.change === 'field' && !changeOneField(json)) throw new Error(`nothing to change in ${text}`);
              if (plant.change === 'header') headers.push(['x-planted', 'yes']);
            }
            if (json !== undefined) text = JSON.stringify(json, null, 3);
            const varied = headers
              .filter(([name]) => !['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'date'].includes(name.toLowerCase()))
              .map(([name, value]): [string, string] => {
                const lower = name.toLowerCase();
                // Another date, another request id, another case of header names: all allowed.
                if (lower === 'last-modified') return [name.toUpperCase(), new Date(Date.parse(value) - 3_600_000).toUTCString()];
                if (lower === 'x-openstack-request-id') return [name, `req-${randomUUID()}`];
                return [name.toUpperCase(), value];
              })
              .reverse();
            const bytes = Buffer.from(
              text.replace(/req-[0-9a-f-]{36}/g, () => `req-${randomUUID()}`),
              'utf8',
            );
            outgoing.writeHead(status, [...varied.flat(), 'content-length', String(bytes.length), 'date', new Date(0).toUTCString()]);
            outgoing.end(bytes);
          });
        },
      );
      forward.on('error', (error) => {
        outgoing.writeHead(502);
        outgoing.end(String(error));
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    planted,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
