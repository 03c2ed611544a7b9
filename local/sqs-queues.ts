/**
 * The local stand-in for Amazon SQS, for what the stack uses a queue for:
 * the allocation history's set-aside records (the change stream's on-failure
 * destination, infra/constructs/allocation-history.ts). Nothing here runs
 * SQS, so this answers the part of its JSON protocol that the event source's
 * emulation and `placement-admin history-set-aside` send, as AWS documents
 * it: SendMessage, ReceiveMessage (with its visibility timeout) and
 * GetQueueAttributes, the bodies' MD5 digests (the SDK checks them), and
 * QueueDoesNotExist for a queue it does not hold. Messages are kept in
 * memory, as long as the process runs.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const ACCOUNT_ID = '000000000000';

interface Message {
  id: string;
  body: string;
  sentAt: number;
  receives: number;
  /** Hidden from ReceiveMessage until then (milliseconds since the epoch). */
  invisibleUntil: number;
}

export interface LocalQueues {
  /** The URL of a queue by name, created on first use (as CloudFormation would have made it). */
  queueUrl(name: string): string;
  stop(): Promise<void>;
}

const md5 = (text: string): string => createHash('md5').update(text, 'utf8').digest('hex');

class QueueError extends Error {
  constructor(
    readonly type: string,
    readonly queryCode: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startLocalQueues(): Promise<LocalQueues> {
  const queues = new Map<string, Message[]>();

  const queueOf = (url: unknown): Message[] => {
    const name = typeof url === 'string' ? url.split('/').at(-1) : undefined;
    const queue = name === undefined ? undefined : queues.get(name);
    if (queue === undefined) throw new QueueError('QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue', 'The specified queue does not exist.');
    return queue;
  };

  const operations: Record<string, (input: Record<string, unknown>) => unknown> = {
    SendMessage: (input) => {
      const body = String(input.MessageBody ?? '');
      const message = { id: randomUUID(), body, sentAt: Date.now(), receives: 0, invisibleUntil: 0 };
      queueOf(input.QueueUrl).push(message);
      return { MessageId: message.id, MD5OfMessageBody: md5(body) };
    },
    ReceiveMessage: (input) => {
      const now = Date.now();
      const wanted = Number(input.MaxNumberOfMessages ?? 1);
      const hiddenFor = Number(input.VisibilityTimeout ?? 30) * 1000;
      const visible = queueOf(input.QueueUrl)
        .filter((message) => message.invisibleUntil <= now)
        .slice(0, wanted);
      for (const message of visible) {
        message.receives++;
        message.invisibleUntil = now + hiddenFor;
      }
      return {
        Messages: visible.map((message) => ({
          MessageId: message.id,
          ReceiptHandle: `${message.id}#${message.receives}`,
          MD5OfBody: md5(message.body),
          Body: message.body,
          Attributes: { SentTimestamp: String(message.sentAt), ApproximateReceiveCount: String(message.receives) },
        })),
      };
    },
    GetQueueAttributes: (input) => {
      const now = Date.now();
      const queue = queueOf(input.QueueUrl);
      const visible = queue.filter((message) => message.invisibleUntil <= now).length;
      return { Attributes: { ApproximateNumberOfMessages: String(visible), ApproximateNumberOfMessagesNotVisible: String(queue.length - visible) } };
    },
  };

  const answer = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID(), ...headers });
    response.end(JSON.stringify(body));
  };

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('AmazonSQS.') ? operations[target.slice('AmazonSQS.'.length)] : undefined;
    try {
      if (operation === undefined)
        throw new QueueError('InvalidAction', 'AWS.SimpleQueueService.InvalidAction', `${target} is not an action this stand-in answers`);
      answer(response, 200, operation(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>));
    } catch (error) {
      if (!(error instanceof QueueError)) throw error;
      answer(response, 400, { __type: `com.amazonaws.sqs#${error.type}`, message: error.message }, { 'x-amzn-query-error': `${error.queryCode};Sender` });
    }
  };

  const server = createServer((request, response) => {
    serve(request, response).catch((error: Error) => answer(response, 500, { __type: 'com.amazonaws.sqs#InternalError', message: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    queueUrl: (name) => {
      if (!queues.has(name)) queues.set(name, []);
      return `${origin}/${ACCOUNT_ID}/${name}`;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
