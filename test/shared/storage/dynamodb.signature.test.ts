/**
 * DynamoDB Local accepts any signature, so nothing else here would notice
 * the requests signed by hand (shared/storage/dynamodb.ts) signing a header
 * that Node then changes, or a canonical request AWS would refuse. Every
 * request the service sends is caught as it arrives on the wire, and its
 * signature computed again by an implementation of our own
 * (test/support/sigv4.ts), which AWS's published test vectors check first.
 */
import { createHash } from 'node:crypto';
import { createServer, request as forward, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlacementClient } from '../../../admin/placement-client.js';
import { useLocalService } from '../../support/local-service.js';
import { parseAuthorization, signatureOf, type ReceivedRequest } from '../../support/sigv4.js';

describe('the signature computed here', () => {
  // AWS's SigV4 test suite (get-vanilla, post-vanilla) and the signed GET of its S3 documentation's example.
  const suite = { accessKeyId: 'AKIDEXAMPLE', secret: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', date: '20150830', region: 'us-east-1', service: 'service' };
  const vanilla = (method: string): ReceivedRequest => ({
    method,
    target: '/',
    headers: [
      ['Host', 'example.amazonaws.com'],
      ['X-Amz-Date', '20150830T123600Z'],
    ],
    body: '',
  });
  it.each([
    ['get-vanilla', 'GET', '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31'],
    ['post-vanilla', 'POST', '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b'],
  ])("gives the test suite's %s signature", (_name, method, signature) => {
    const authorization = { ...suite, signedHeaders: ['host', 'x-amz-date'], signature };
    expect(signatureOf(vanilla(method), authorization, suite.secret)).toBe(signature);
  });

  it("gives the S3 documentation's example signature, with a header of extra spaces", () => {
    const request: ReceivedRequest = {
      method: 'GET',
      target: '/test.txt',
      headers: [
        ['Host', 'examplebucket.s3.amazonaws.com'],
        ['Range', 'bytes=0-9 '],
        ['x-amz-content-sha256', createHash('sha256').update('').digest('hex')],
        ['x-amz-date', '20130524T000000Z'],
      ],
      body: '',
    };
    const authorization = {
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      date: '20130524',
      region: 'us-east-1',
      service: 's3',
      signedHeaders: ['host', 'range', 'x-amz-content-sha256', 'x-amz-date'],
      signature: 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    };
    expect(signatureOf(request, authorization, 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')).toBe(authorization.signature);
  });
});

/** A proxy in front of DynamoDB Local that keeps each request as it arrived: head as received, body, then forwards it. */
function startWiretap(target: string): Promise<{ url: string; received: ReceivedRequest[]; server: Server }> {
  const received: ReceivedRequest[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers: [string, string][] = [];
      for (let index = 0; index < incoming.rawHeaders.length; index += 2) headers.push([incoming.rawHeaders[index]!, incoming.rawHeaders[index + 1]!]);
      const body = Buffer.concat(chunks);
      received.push({ method: incoming.method!, target: incoming.url!, headers, body });
      const onward = forward(`${target}${incoming.url}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      });
      onward.on('error', () => outgoing.destroy());
      onward.end(body);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, received, server })),
  );
}

describe('the requests the service sends, as they arrive', () => {
  let wiretap: Awaited<ReturnType<typeof startWiretap>>;
  const REGION = 'eu-west-1';
  const service = useLocalService(async () => {
    wiretap = await startWiretap(process.env.PLACEMENT_DYNAMODB_ENDPOINT!);
    return { PLACEMENT_DYNAMODB_ENDPOINT: wiretap.url, AWS_REGION: REGION };
  });
  afterAll(() => new Promise((resolve) => wiretap.server.close(resolve)));

  const header = (request: ReceivedRequest, name: string) => request.headers.find(([received]) => received.toLowerCase() === name)?.[1];
  const operation = (request: ReceivedRequest) => header(request, 'x-amz-target')?.replace(/^DynamoDB_20120810\./, '');

  beforeAll(async () => {
    // What nova's polls read: a provider (GetItem), a listing (Query), a consumer's allocations (BatchGetItem).
    const api = new PlacementClient(service.url, { version: '1.39' });
    const [provider, consumer] = [randomUUID(), randomUUID()];
    expect((await api.post('/resource_providers', { uuid: provider, name: `node-${provider}` })).status).toBe(200);
    expect(
      (await api.put(`/resource_providers/${provider}/inventories`, { resource_provider_generation: 0, inventories: { VCPU: { total: 8 } } })).status,
    ).toBe(200);
    const claim = {
      allocations: { [provider]: { resources: { VCPU: 1 } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: null,
      consumer_type: 'INSTANCE',
    };
    expect((await api.put(`/allocations/${consumer}`, claim)).status).toBe(204);
    expect((await api.get(`/resource_providers/${provider}`)).status).toBe(200);
    expect((await api.get('/resource_providers')).status).toBe(200);
    expect((await api.get(`/allocations/${consumer}`)).status).toBe(200);
  });

  it('signs every read it sends by hand as AWS would check it, headers as Node sent them', () => {
    const reads = wiretap.received.filter((request) => ['GetItem', 'BatchGetItem', 'Query'].includes(operation(request) ?? ''));
    expect(new Set(reads.map(operation))).toEqual(new Set(['GetItem', 'BatchGetItem', 'Query']));
    for (const read of reads) {
      const authorization = parseAuthorization(header(read, 'authorization')!);
      expect(authorization).toMatchObject({ region: REGION, service: 'dynamodb', date: header(read, 'x-amz-date')!.slice(0, 8) });
      // What names the table, the operation and the body must be signed, or AWS would take a request someone changed.
      expect(authorization.signedHeaders).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-target', 'content-type']));
      expect(Number(header(read, 'content-length'))).toBe(Buffer.byteLength(read.body));
      const claimedHash = header(read, 'x-amz-content-sha256');
      if (claimedHash !== undefined) expect(claimedHash).toBe(createHash('sha256').update(read.body).digest('hex'));
      // AWS refuses a request dated more than 5 minutes from its clock.
      const sentAt = Date.parse(header(read, 'x-amz-date')!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
      expect(Math.abs(Date.now() - sentAt)).toBeLessThan(5 * 60_000);
      // DynamoDB Local's credentials (shared/storage/dynamodb.ts): the secret is "local".
      expect(signatureOf(read, authorization, 'local'), `${operation(read)} ${authorization.signedHeaders.join(';')}`).toBe(authorization.signature);
    }
  });

  /** Every DynamoDB operation the service sends. */
  const OPERATIONS = ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];

  it('signs every request it sends as AWS would check it, each item request by hand and none through the SDK', async () => {
    // What the API's requests above may not have sent (the change sweeper's and the journal's writes), sent as the
    // storage modules send them, with binary values and sets (base64 in DynamoDB's JSON, bytes in the body's length).
    const dynamodb = await import('../../../shared/storage/dynamodb.js');
    const TableName = dynamodb.tableName();
    const key = { pk: `SIGNED#${randomUUID()}`, sk: 'ITEM' };
    await dynamodb.putItem({ TableName, Item: { ...key, bytes: new Uint8Array([0, 1, 254, 255]), names: new Set(['a', 'b']) } });
    await dynamodb.updateItem({
      TableName,
      Key: key,
      UpdateExpression: 'SET #n = :n',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':n': 1 },
    });
    await dynamodb.batchWriteItem({ RequestItems: { [TableName]: [{ PutRequest: { Item: { ...key, sk: 'OTHER' } } }] } });
    await dynamodb.deleteItem({ TableName, Key: { ...key, sk: 'OTHER' } });
    await dynamodb.transactWriteItems({
      TransactItems: [
        { Delete: { TableName, Key: key, ConditionExpression: '#n = :n', ExpressionAttributeNames: { '#n': 'n' }, ExpressionAttributeValues: { ':n': 1 } } },
      ],
    });

    const items = wiretap.received.filter((request) => OPERATIONS.includes(operation(request) ?? ''));
    expect(new Set(items.map(operation))).toEqual(new Set(OPERATIONS));
    // The SDK names each of its requests with an invocation id: the service's item requests carry none.
    expect(items.filter((request) => header(request, 'amz-sdk-invocation-id') !== undefined).map(operation)).toEqual([]);
    // The table's own requests (the local runtime creates it through the SDK's client) are checked too.
    expect(wiretap.received.length).toBeGreaterThan(items.length);
    for (const request of wiretap.received) {
      const authorization = parseAuthorization(header(request, 'authorization')!);
      expect(authorization).toMatchObject({ region: REGION, service: 'dynamodb' });
      expect(Number(header(request, 'content-length'))).toBe(Buffer.byteLength(request.body));
      expect(signatureOf(request, authorization, 'local'), `${operation(request)} ${authorization.signedHeaders.join(';')}`).toBe(authorization.signature);
    }
  });
});
