/**
 * A request sent by hand to an AWS JSON service (shared/aws/json-requests.ts),
 * against a loopback stand-in that keeps each request as it arrived: signed
 * as AWS would check it (test/support/sigv4.ts, an implementation of our
 * own), a failed answer named and retried as the SDK would, and the caller's
 * signal ending the whole of it. DynamoDB's requests through it are tested in
 * test/shared/storage/dynamodb*.test.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JsonService } from '../../../shared/aws/json-requests.js';
import { parseAuthorization, signatureOf, type ReceivedRequest } from '../../support/sigv4.js';

const SECRET = 'stand-in-secret-key';
const received: ReceivedRequest[] = [];
/** How the stand-in answers each request, in turn; past the list, the last one. */
let answers: ((response: ServerResponse) => void)[] = [];

const reply = (status: number, document: object) => (response: ServerResponse) =>
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(document));
const never = () => undefined;

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const headers: [string, string][] = [];
    for (let index = 0; index < request.rawHeaders.length; index += 2) headers.push([request.rawHeaders[index]!, request.rawHeaders[index + 1]!]);
    received.push({ method: request.method!, target: request.url!, headers, body: Buffer.concat(chunks) });
    (answers[received.length - 1] ?? answers.at(-1)!)(response);
  });
});

let url: URL;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  received.length = 0;
});

const secretsManager = (maxAttempts = 3, attemptTimeoutMs = 5_000) =>
  new JsonService({
    signingName: 'secretsmanager',
    targetPrefix: 'secretsmanager',
    jsonVersion: '1.1',
    locate: async () => ({ url, region: 'eu-west-1', credentials: { accessKeyId: 'AKIDSTANDIN', secretAccessKey: SECRET, sessionToken: 'a-session' } }),
    maxAttempts: () => maxAttempts,
    attemptTimeoutMs: () => attemptTimeoutMs,
  });

const header = (request: ReceivedRequest, name: string) => request.headers.find(([received]) => received.toLowerCase() === name)?.[1];

describe('a request sent by hand to an AWS JSON service', () => {
  it('is one POST naming the operation, signed as AWS would check it, session token included', async () => {
    answers = [reply(200, { SecretString: 'x' })];
    const body = JSON.stringify({ SecretId: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:s' });
    expect(JSON.parse(await secretsManager().send('GetSecretValue', body))).toEqual({ SecretString: 'x' });

    expect(received).toHaveLength(1);
    const [request] = received as [ReceivedRequest];
    expect(request).toMatchObject({ method: 'POST', target: '/' });
    expect(request.body.toString()).toBe(body);
    expect(header(request, 'x-amz-target')).toBe('secretsmanager.GetSecretValue');
    expect(header(request, 'content-type')).toBe('application/x-amz-json-1.1');
    const authorization = parseAuthorization(header(request, 'authorization')!);
    expect(authorization).toMatchObject({ accessKeyId: 'AKIDSTANDIN', region: 'eu-west-1', service: 'secretsmanager' });
    expect(authorization.signedHeaders).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-target', 'content-type', 'x-amz-security-token']));
    expect(signatureOf(request, authorization, SECRET)).toBe(authorization.signature);
  });

  it('names a failed answer as the SDK does, retries what the SDK retries and nothing else', async () => {
    const failure = reply(500, { __type: 'com.amazonaws.secretsmanager#InternalServiceError', message: 'try again' });
    answers = [failure, failure, reply(200, {})];
    expect(await secretsManager().send('GetSecretValue', '{}')).toBe('{}');
    expect(received).toHaveLength(3);

    received.length = 0;
    answers = [reply(400, { __type: 'ResourceNotFoundException', Message: "Secrets Manager can't find the specified secret." })];
    const refused = await secretsManager()
      .send('GetSecretValue', '{}')
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({
      name: 'ResourceNotFoundException',
      message: "Secrets Manager can't find the specified secret.",
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    expect(received).toHaveLength(1);
  });

  it("keeps the members of a failed answer's body on the error, as the SDK's errors have them, read by the service's parser", async () => {
    const reasons = [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', Item: { pk: { S: 'a' } } }];
    answers = [
      reply(400, { __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', Message: 'Transaction cancelled', CancellationReasons: reasons }),
    ];
    const parsed: string[] = [];
    const service = new JsonService({
      signingName: 'dynamodb',
      targetPrefix: 'DynamoDB_20120810',
      jsonVersion: '1.0',
      locate: async () => ({ url, region: 'eu-west-1', credentials: { accessKeyId: 'AKIDSTANDIN', secretAccessKey: SECRET } }),
      maxAttempts: () => 3,
      attemptTimeoutMs: () => 5_000,
      parseJson: (text) => (parsed.push(text), JSON.parse(text)),
    });
    const cancelled = await service.send('TransactWriteItems', '{}').catch((error: unknown) => error);
    expect(cancelled).toBeInstanceOf(Error);
    expect(cancelled).toMatchObject({
      name: 'TransactionCanceledException',
      message: 'Transaction cancelled',
      Message: 'Transaction cancelled',
      CancellationReasons: reasons,
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    expect(parsed).toHaveLength(1);
    expect(received).toHaveLength(1);
  });

  /** x-amz-date's form: 20261207T193000Z. */
  const amzDate = (ms: number) => new Date(ms).toISOString().replace(/[-:]|\.\d{3}/g, '');
  const signedAt = (request: ReceivedRequest) =>
    Date.parse(header(request, 'x-amz-date')!.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
  /**
   * DynamoDB's answer from a clock `offsetMs` from ours: a signature more than 15 minutes from its time is refused
   * (400, its messages), any other request answered `{}`; its Date header on both.
   */
  const serviceClock = (offsetMs: number) => (response: ServerResponse) => {
    const now = Date.now() + offsetMs;
    const signed = signedAt(received.at(-1)!);
    const window = 15 * 60_000;
    const refused = (message: string) =>
      response
        .writeHead(400, { 'content-type': 'application/x-amz-json-1.0', date: new Date(now).toUTCString() })
        .end(JSON.stringify({ __type: 'com.amazon.coral.service#InvalidSignatureException', message }));
    if (signed < now - window) refused(`Signature expired: ${amzDate(signed)} is now earlier than ${amzDate(now - window)} (${amzDate(now)} - 15 min.)`);
    else if (signed > now + window)
      refused(`Signature not yet current: ${amzDate(signed)} is still later than ${amzDate(now + window)} (${amzDate(now)} + 15 min.)`);
    else response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', date: new Date(now).toUTCString() }).end('{}');
  };

  it("signs at the service's time once an answer's Date says the clock is off: one refused request, then none", async () => {
    for (const offsetMs of [20 * 60_000, -20 * 60_000]) {
      received.length = 0;
      answers = [serviceClock(offsetMs)];
      const service = secretsManager();
      expect(await service.send('GetSecretValue', '{}')).toBe('{}');
      expect(await service.send('GetSecretValue', '{}')).toBe('{}');
      // The first signed at our time, refused; the two after it at the service's, within the Date header's second.
      expect(received).toHaveLength(3);
      for (const request of received.slice(1)) expect(Math.abs(signedAt(request) - (Date.now() + offsetMs))).toBeLessThan(5_000);
      const authorization = parseAuthorization(header(received[2]!, 'authorization')!);
      expect(signatureOf(received[2]!, authorization, SECRET)).toBe(authorization.signature);
    }
  });

  it("takes the service's time from an answer that succeeds too, before its clock is off by enough to be refused", async () => {
    answers = [serviceClock(10 * 60_000)];
    const service = secretsManager();
    await service.send('GetSecretValue', '{}');
    await service.send('GetSecretValue', '{}');
    expect(received).toHaveLength(2);
    expect(Math.abs(signedAt(received[0]!) - Date.now())).toBeLessThan(5_000);
    expect(Math.abs(signedAt(received[1]!) - (Date.now() + 10 * 60_000))).toBeLessThan(5_000);
  });

  it('gives up when its signal ends, retries and waits included, with the reason the signal gives', async () => {
    answers = [never];
    const started = performance.now();
    const ended = await secretsManager(10, 60_000)
      .send('GetSecretValue', '{}', AbortSignal.timeout(300))
      .catch((error: unknown) => error);
    expect(ended).toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(received).toHaveLength(1);
  });
});
