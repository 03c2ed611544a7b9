/**
 * A proxy between the service and DynamoDB (Local) that injects the faults
 * DynamoDB and the network between produce, each kind at its own rate, so
 * that tests and `npm run faults` can check what the service makes of them.
 * Test and tool code: the product never runs it.
 *
 * Kinds, each drawn per request among the requests it applies to:
 * - throttle: a 400 with DynamoDB's throttling body: for TransactWriteItems a
 *   TransactionCanceledException whose reason is ThrottlingError (how
 *   DynamoDB throttles a transaction), otherwise alternately
 *   ProvisionedThroughputExceededException and ThrottlingException;
 * - serverError: a 500 InternalServerError;
 * - reset: the connection is reset before the request is forwarded;
 * - slow: the answer comes `slowMs` × (0.5 to 1.5) late, held before
 *   forwarding or after, so it can outlast the client's timeout while the
 *   request is still applied;
 * - lostCommit (TransactWriteItems): forwarded, and when DynamoDB committed
 *   it, the connection is reset instead of answering;
 * - lostWrite (PutItem, UpdateItem, DeleteItem, BatchWriteItem): likewise for
 *   a single write or a batch of them (the steps of a multi-step change);
 * - transactionConflict (TransactWriteItems): cancelled, not forwarded, with
 *   the TransactionConflict reason real DynamoDB gives when another
 *   transaction holds one of its items (DynamoDB Local never does);
 * - reasonlessCancellation (TransactWriteItems): cancelled, not forwarded,
 *   with no CancellationReasons in the answer;
 * - unprocessed (BatchGetItem): half the keys are left out of the request and
 *   handed back as UnprocessedKeys, as DynamoDB does under load;
 * - staleIndex (Query on an index): answered as a lagging global secondary
 *   index would, each item on its own: compared with the answer to the same
 *   query from up to `indexLagMs` before, every item that changed since shows
 *   its earlier version, or is missing if it is new, or is still there if it
 *   was deleted, each with probability 1/2.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { buffer } from 'node:stream/consumers';
import type { Socket } from 'node:net';
import { seededRandom } from './seeded-random.js';

export const FAULT_KINDS = [
  'throttle',
  'serverError',
  'reset',
  'slow',
  'lostCommit',
  'lostWrite',
  'transactionConflict',
  'reasonlessCancellation',
  'unprocessed',
  'staleIndex',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type FaultRates = Partial<Record<FaultKind, number>>;

export type RequestMatcher = (operation: string, request: Record<string, unknown>) => boolean;

export interface FaultProxyOptions {
  /** DynamoDB's endpoint, e.g. http://127.0.0.1:8000. */
  target: string;
  /** Probability per request the kind applies to; absent kinds never happen. */
  rates?: FaultRates;
  /** Typical delay of a slow answer. */
  slowMs?: number;
  /** How far behind the table a stale index answer may be. */
  indexLagMs?: number;
  /** Seed of the fault draws, so that a run can be repeated. */
  seed?: number;
  port?: number;
}

export interface FaultProxy {
  url: string;
  /** Changes the rates from now on (e.g. none while a test sets up), for every operation or only those named. */
  setRates(rates: FaultRates, operations?: string[]): void;
  /** Faults injected so far, by kind. */
  injected(): Record<FaultKind, number>;
  /** Requests received so far, by DynamoDB operation. */
  requests(): Record<string, number>;
  /**
   * Holds the next request that `matches` (never forwarding it: it ends when
   * its connection does) and resolves once it arrived, so that a test can
   * kill the service at that exact step.
   */
  holdNext(matches: RequestMatcher): Promise<void>;
  /**
   * From the next request that `matches` on (that one included), `rates`
   * apply, as setRates would set them; resolves once it arrived. A test
   * makes DynamoDB fail from one exact step of a change on.
   */
  faultFrom(matches: RequestMatcher, rates: FaultRates, operations?: string[]): Promise<void>;
  /**
   * The next requests that `matches` get these faults, one each in turn,
   * whatever the rates; resolves once the last of them arrived. A test
   * gives one exact sequence of faults (an answer lost, then its resend
   * conflicting).
   */
  faultsInTurn(matches: RequestMatcher, kinds: FaultKind[]): Promise<void>;
  stop(): Promise<void>;
}

interface Forwarded {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const JSON_TYPE = 'application/x-amz-json-1.0';

/** The error documents DynamoDB sends. */
const errorBodies = {
  provisionedThroughput: {
    __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
  throttling: { __type: 'com.amazon.coral.availability#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
  internal: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' },
};

const THROTTLED = {
  Code: 'ThrottlingError',
  Message: 'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly.',
};
const CONFLICT = { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' };

/** A transaction cancelled for `reason`, given on its first item. */
function transactionCancelled(itemCount: number, reason: { Code: string; Message: string }) {
  const reasons = Array.from({ length: Math.max(itemCount, 1) }, (_, n) => (n === 0 ? reason : { Code: 'None' }));
  return {
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
    CancellationReasons: reasons,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  const random = seededRandom(options.seed ?? 1).next;
  const slowMs = options.slowMs ?? 1000;
  const indexLagMs = options.indexLagMs ?? 1000;
  let rates: FaultRates = { ...options.rates };
  let faultyOperations: Set<string> | undefined;
  const injected = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  const requests: Record<string, number> = {};
  /** An index query's body to the first answer within the current lag window. */
  const indexAnswers = new Map<string, { at: number; answer: Forwarded }>();
  const sockets = new Set<Socket>();
  let hold: { matches: RequestMatcher; arrived: () => void } | undefined;
  let trigger: { matches: RequestMatcher; arrived: () => void; rates: FaultRates; operations?: string[] } | undefined;
  let inTurn: { matches: RequestMatcher; kinds: FaultKind[]; arrived: () => void } | undefined;
  const setRates = (next: FaultRates, operations?: string[]) => {
    rates = { ...next };
    faultyOperations = operations && new Set(operations);
  };

  function forward(incoming: IncomingMessage, body: Buffer): Promise<Forwarded> {
    return new Promise((resolve, reject) => {
      const headers = { ...incoming.headers, 'content-length': String(body.length) };
      const outgoing = httpRequest({ hostname: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers }, (answer) => {
        buffer(answer).then((data) => resolve({ status: answer.statusCode ?? 500, headers: answer.headers, body: data }), reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  function send(response: ServerResponse, answer: Forwarded): void {
    if (response.destroyed) return;
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    response.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) });
    response.end(answer.body);
  }

  const error = (status: number, document: unknown): Forwarded => ({
    status,
    headers: { 'content-type': JSON_TYPE, 'x-amzn-requestid': `fault-${Date.now()}-${Math.floor(random() * 1e9)}` },
    body: Buffer.from(JSON.stringify(document)),
  });

  function applicable(operation: string, request: Record<string, unknown>): FaultKind[] {
    const kinds: FaultKind[] = ['throttle', 'serverError', 'reset', 'slow'];
    if (operation === 'TransactWriteItems') kinds.push('lostCommit', 'transactionConflict', 'reasonlessCancellation');
    if (['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'].includes(operation)) kinds.push('lostWrite');
    if (operation === 'BatchGetItem') kinds.push('unprocessed');
    if (operation === 'Query' && typeof request.IndexName === 'string') kinds.push('staleIndex');
    return kinds;
  }

  /** At most one fault per request: each applicable kind takes its rate's share of one draw. */
  function draw(kinds: FaultKind[]): FaultKind | undefined {
    const roll = random();
    let sum = 0;
    for (const kind of kinds) {
      sum += rates[kind] ?? 0;
      if (roll < sum) return kind;
    }
    return undefined;
  }

  const reset = (incoming: IncomingMessage): void => {
    incoming.socket.resetAndDestroy();
  };

  async function handle(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await buffer(incoming);
    const operation =
      String(incoming.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() || 'unknown';
    requests[operation] = (requests[operation] ?? 0) + 1;
    let request: Record<string, unknown> = {};
    try {
      request = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      // Not JSON: forwarded as it is, DynamoDB answers it.
    }
    if (hold?.matches(operation, request)) {
      const { arrived } = hold;
      hold = undefined;
      arrived();
      return;
    }
    if (trigger?.matches(operation, request)) {
      setRates(trigger.rates, trigger.operations);
      trigger.arrived();
      trigger = undefined;
    }
    let fault: FaultKind | undefined;
    if (inTurn?.matches(operation, request)) {
      fault = inTurn.kinds.shift();
      if (inTurn.kinds.length === 0) {
        inTurn.arrived();
        inTurn = undefined;
      }
    } else fault = faultyOperations && !faultyOperations.has(operation) ? undefined : draw(applicable(operation, request));
    // Counted as they are injected; lostCommit and staleIndex only when they changed the answer.
    const count = (kind: FaultKind) => (injected[kind] += 1);

    switch (fault) {
      case 'throttle': {
        count('throttle');
        if (operation === 'TransactWriteItems') {
          const items = Array.isArray(request.TransactItems) ? request.TransactItems.length : 1;
          return send(response, error(400, transactionCancelled(items, THROTTLED)));
        }
        return send(response, error(400, injected.throttle % 2 === 0 ? errorBodies.throttling : errorBodies.provisionedThroughput));
      }
      case 'serverError':
        count('serverError');
        return send(response, error(500, errorBodies.internal));
      case 'reset':
        count('reset');
        return reset(incoming);
      case 'slow': {
        count('slow');
        const delay = slowMs * (0.5 + random());
        if (random() < 0.5) {
          await sleep(delay);
          return send(response, await forward(incoming, body));
        }
        const answer = await forward(incoming, body);
        await sleep(delay);
        return send(response, answer);
      }
      case 'lostCommit':
      case 'lostWrite': {
        const answer = await forward(incoming, body);
        if (answer.status !== 200) return send(response, answer);
        count(fault);
        return reset(incoming);
      }
      case 'transactionConflict': {
        count('transactionConflict');
        const items = Array.isArray(request.TransactItems) ? request.TransactItems.length : 1;
        return send(response, error(400, transactionCancelled(items, CONFLICT)));
      }
      case 'reasonlessCancellation': {
        count('reasonlessCancellation');
        const { CancellationReasons: _reasons, ...cancelled } = transactionCancelled(1, CONFLICT);
        return send(response, error(400, cancelled));
      }
      case 'unprocessed':
        return send(response, await partialBatch(incoming, request, body, count));
      case 'staleIndex': {
        const key = body.toString('utf8');
        const earlier = indexAnswers.get(key);
        const answer = await forward(incoming, body);
        if (answer.status !== 200) return send(response, answer);
        if (earlier === undefined || Date.now() - earlier.at > indexLagMs) {
          indexAnswers.set(key, { at: Date.now(), answer });
          return send(response, answer);
        }
        const lagging = laggingAnswer(earlier.answer, answer);
        if (lagging !== answer) count('staleIndex');
        return send(response, lagging);
      }
      case undefined:
        return send(response, await forward(incoming, body));
    }
  }

  /** The current answer with every item that changed since the earlier one lagging behind with probability 1/2. */
  function laggingAnswer(earlier: Forwarded, current: Forwarded): Forwarded {
    type Document = { Items?: Record<string, { S?: string }>[] } & Record<string, unknown>;
    const before = JSON.parse(earlier.body.toString('utf8')) as Document;
    const now = JSON.parse(current.body.toString('utf8')) as Document;
    const itemKey = (item: Record<string, { S?: string }>) => `${item.pk?.S}\u0000${item.sk?.S}`;
    const old = new Map((before.Items ?? []).map((item) => [itemKey(item), item]));
    const items: Record<string, { S?: string }>[] = [];
    let lagged = false;
    for (const item of now.Items ?? []) {
      const previous = old.get(itemKey(item));
      old.delete(itemKey(item));
      const changed = previous === undefined || JSON.stringify(previous) !== JSON.stringify(item);
      if (changed && random() < 0.5) {
        lagged = true;
        if (previous !== undefined) items.push(previous);
      } else {
        items.push(item);
      }
    }
    for (const deleted of old.values()) {
      if (random() < 0.5) {
        lagged = true;
        items.push(deleted);
      }
    }
    if (!lagged) return current;
    const headers = { ...current.headers };
    delete headers['x-amz-crc32'];
    return { ...current, headers, body: Buffer.from(JSON.stringify({ ...now, Items: items, Count: items.length })) };
  }

  /** Forwards half of each table's keys and hands the rest back as unprocessed. */
  async function partialBatch(
    incoming: IncomingMessage,
    request: Record<string, unknown>,
    body: Buffer,
    count: (kind: FaultKind) => number,
  ): Promise<Forwarded> {
    const items = (request.RequestItems ?? {}) as Record<string, { Keys: unknown[] } & Record<string, unknown>>;
    const forwarded: typeof items = {};
    const held: typeof items = {};
    for (const [table, entry] of Object.entries(items)) {
      const half = Math.ceil(entry.Keys.length / 2);
      forwarded[table] = { ...entry, Keys: entry.Keys.slice(0, half) };
      if (entry.Keys.length > half) held[table] = { ...entry, Keys: entry.Keys.slice(half) };
    }
    if (Object.keys(held).length === 0) return forward(incoming, body);
    const answer = await forward(incoming, Buffer.from(JSON.stringify({ ...request, RequestItems: forwarded })));
    if (answer.status !== 200) return answer;
    count('unprocessed');
    const document = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
    const headers = { ...answer.headers };
    // The body changes, so DynamoDB's checksum of it no longer holds.
    delete headers['x-amz-crc32'];
    return { ...answer, headers, body: Buffer.from(JSON.stringify({ ...document, UnprocessedKeys: held })) };
  }

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch(() => incoming.socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    setRates,
    injected: () => ({ ...injected }),
    requests: () => ({ ...requests }),
    holdNext: (matches) => new Promise<void>((arrived) => (hold = { matches, arrived })),
    faultFrom: (matches, next, operations) => new Promise<void>((arrived) => (trigger = { matches, arrived, rates: next, operations })),
    faultsInTurn: (matches, kinds) => new Promise<void>((arrived) => (inTurn = { matches, kinds: [...kinds], arrived })),
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
