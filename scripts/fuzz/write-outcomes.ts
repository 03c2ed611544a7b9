/**
 * A pass-through between the fault proxy and DynamoDB (Local) that tells
 * which of the writes the service sent DynamoDB applied (HTTP 200) and which
 * it refused (a failed condition, a cancelled transaction: nothing written).
 * The fault proxy counts what is sent; a 4xx may send a conditional write
 * that DynamoDB refuses (a duplicate name is found so), and only this tells
 * that from one that wrote.
 */
import { createServer, request as httpRequest } from 'node:http';
import { buffer } from 'node:stream/consumers';
import type { Socket } from 'node:net';

export const WRITE_OPERATIONS = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem'];

export interface WriteOutcomes {
  url: string;
  /** Writes DynamoDB refused, by operation (the proxy in front counts those sent: the rest were applied). */
  refused(): Record<string, number>;
  stop(): Promise<void>;
}

export async function startWriteOutcomes(target: string): Promise<WriteOutcomes> {
  const { hostname, port: targetPort } = new URL(target);
  const refused: Record<string, number> = {};
  const sockets = new Set<Socket>();
  const server = createServer((incoming, response) => {
    const operation =
      String(incoming.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    buffer(incoming)
      .then(
        (body) =>
          new Promise<void>((resolve, reject) => {
            const outgoing = httpRequest({ hostname, port: targetPort, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
              buffer(answer).then((data) => {
                if (WRITE_OPERATIONS.includes(operation) && answer.statusCode !== 200) refused[operation] = (refused[operation] ?? 0) + 1;
                response.writeHead(answer.statusCode ?? 500, answer.headers);
                response.end(data);
                resolve();
              }, reject);
            });
            outgoing.on('error', reject);
            outgoing.end(body);
          }),
      )
      .catch(() => incoming.socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    refused: () => ({ ...refused }),
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
