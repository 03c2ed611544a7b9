/**
 * The requests sent without the SDK (shared/storage/dynamodb.ts) keep the
 * SDK client's contract: reads retried past DynamoDB's passing faults to the
 * same answer, given up after PLACEMENT_DYNAMODB_MAX_ATTEMPTS attempts as a
 * 503, an attempt whose answer never comes cut off at
 * PLACEMENT_DYNAMODB_TIMEOUT_MS, and the keys a batch read leaves unprocessed
 * asked for again; every operation's answer and error as the SDK's document
 * client gives them; one idempotency token per transaction, the same on
 * every resend of it.
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { PlacementClient } from '../../../admin/placement-client.js';
import { useServiceBehindFaultProxy } from '../../support/fault-proxy-service.js';

const MAX_ATTEMPTS = 3;
const TIMEOUT_MS = 1500;
const { service, proxy } = useServiceBehindFaultProxy(
  { seed: 41 },
  { PLACEMENT_DYNAMODB_MAX_ATTEMPTS: String(MAX_ATTEMPTS), PLACEMENT_DYNAMODB_TIMEOUT_MS: String(TIMEOUT_MS) },
);

const placement = () => new PlacementClient(service.url, { token: 'admin', version: '1.28' });
const isOperation = (name: string) => (operation: string) => operation === name;

/** A consumer holding 2 VCPU and 1024 MB on each of `count` new nodes. */
async function consumerOnNodes(count = 1): Promise<{ nodes: string[]; consumer: string }> {
  const nodes = Array.from({ length: count }, () => randomUUID());
  const consumer = randomUUID();
  for (const node of nodes) {
    expect((await placement().post('/resource_providers', { uuid: node, name: `node-${node}` })).status).toBe(200);
    const inventories = { VCPU: { total: 8 }, MEMORY_MB: { total: 8192 } };
    expect((await placement().put(`/resource_providers/${node}/inventories`, { resource_provider_generation: 0, inventories })).status).toBe(200);
  }
  const allocations = Object.fromEntries(nodes.map((node) => [node, { resources: { VCPU: 2, MEMORY_MB: 1024 } }]));
  expect((await placement().put(`/allocations/${consumer}`, { allocations, project_id: 'p', user_id: 'u', consumer_generation: null })).status).toBe(204);
  return { nodes, consumer };
}

describe('reads sent without the SDK', () => {
  it('are retried past throttling, a server error and a reset connection, to the answer without faults', async () => {
    const {
      nodes: [node],
      consumer,
    } = await consumerOnNodes();
    const expected = await placement().get(`/allocations/${consumer}`);
    const before = proxy().requests().GetItem ?? 0;
    const faulted = proxy().faultsInTurn(isOperation('GetItem'), ['throttle', 'serverError']);
    const answer = await placement().get(`/allocations/${consumer}`);
    await faulted;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(expected.body);
    expect(answer.body.allocations[node!].resources).toEqual({ VCPU: 2, MEMORY_MB: 1024 });
    // Two attempts failed, the third answered: a retry, not a different read.
    expect((proxy().requests().GetItem ?? 0) - before).toBe(3);

    const reset = proxy().faultsInTurn(isOperation('GetItem'), ['reset']);
    expect((await placement().get(`/allocations/${consumer}`)).body).toEqual(expected.body);
    await reset;
  }, 60_000);

  it('give up after PLACEMENT_DYNAMODB_MAX_ATTEMPTS attempts with a 503', async () => {
    const { consumer } = await consumerOnNodes();
    const before = proxy().requests().GetItem ?? 0;
    proxy().setRates({ serverError: 1 }, ['GetItem']);
    try {
      const answer = await placement().get(`/allocations/${consumer}`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('1');
    } finally {
      proxy().setRates({});
    }
    expect((proxy().requests().GetItem ?? 0) - before).toBe(MAX_ATTEMPTS);
  }, 60_000);

  it('cut off an attempt whose answer never comes at PLACEMENT_DYNAMODB_TIMEOUT_MS and try again', async () => {
    const { consumer } = await consumerOnNodes();
    const held = proxy().holdNext(isOperation('GetItem'));
    const started = performance.now();
    const answer = await placement().get(`/allocations/${consumer}`);
    await held;
    expect(answer.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS * 3);
  }, 60_000);

  it('ask again for the keys a batch read left unprocessed', async () => {
    const { nodes, consumer } = await consumerOnNodes(4);
    const before = proxy().injected().unprocessed;
    const faulted = proxy().faultsInTurn(isOperation('BatchGetItem'), ['unprocessed']);
    const answer = await placement().get(`/allocations/${consumer}`);
    await faulted;
    expect(proxy().injected().unprocessed - before).toBe(1);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.allocations).sort()).toEqual([...nodes].sort());
  }, 60_000);
});

describe('requests sent without the SDK', () => {
  /** The service's requests (signed by hand) and the SDK's document client, in the service's module graph. */
  async function clients() {
    const dynamodb = await import('../../../shared/storage/dynamodb.js');
    const { dynamo } = await import('../../../shared/storage/client.js');
    return { dynamodb, sdk: dynamo(), TableName: dynamodb.tableName() };
  }
  const failureOf = (request: Promise<unknown>) =>
    request.then(
      () => expect.unreachable('the request succeeded'),
      (error: unknown) => error as Error & Record<string, unknown>,
    );
  const itemKey = () => ({ pk: `CONTRACT#${randomUUID()}`, sk: 'ITEM' });
  /** Every kind of value DynamoDB stores, binary ones included. */
  const values = {
    text: 'é ✓',
    number: 12.5,
    big: 2 ** 40,
    yes: true,
    none: null,
    bytes: new Uint8Array([0, 1, 254, 255]),
    texts: new Set(['a', 'b']),
    numbers: new Set([1, 2]),
    blobs: new Set([new Uint8Array([1]), new Uint8Array([2, 3])]),
    list: [1, 'two', { three: 3 }],
    map: { nested: { deep: 'yes' }, gone: undefined },
  };

  it('give the answers the SDK gives, items converted as the document client converts them', async () => {
    const { dynamodb, sdk, TableName } = await clients();
    const [ours, theirs] = [itemKey(), itemKey()];
    await dynamodb.putItem({ TableName, Item: { ...ours, ...values } });
    await sdk.send(new PutCommand({ TableName, Item: { ...theirs, ...values } }));
    const read = async (key: Record<string, string>) => ({
      ours: (await dynamodb.getItem({ TableName, Key: key, ConsistentRead: true })).Item,
      theirs: (await sdk.send(new GetCommand({ TableName, Key: key, ConsistentRead: true }))).Item,
    });
    for (const key of [ours, theirs]) {
      const { ours: mine, theirs: sdks } = await read(key);
      expect(mine).toEqual(sdks);
      expect(mine).toMatchObject({ ...key, bytes: new Uint8Array([0, 1, 254, 255]), texts: new Set(['a', 'b']), map: { nested: { deep: 'yes' } } });
    }

    const update = (key: Record<string, string>) => ({
      TableName,
      Key: key,
      UpdateExpression: 'SET #n = #n + :one, #b = :b',
      ExpressionAttributeNames: { '#n': 'number', '#b': 'bytes' },
      ExpressionAttributeValues: { ':one': 1, ':b': new Uint8Array([7]) },
      ReturnValues: 'ALL_NEW' as const,
      ReturnConsumedCapacity: 'INDEXES' as const,
    });
    const updated = { ours: await dynamodb.updateItem(update(ours)), theirs: await sdk.send(new UpdateCommand(update(theirs))) };
    expect({ ...updated.ours.Attributes, pk: 'same' }).toEqual({ ...updated.theirs.Attributes, pk: 'same' });
    expect(updated.ours.ConsumedCapacity).toEqual(updated.theirs.ConsumedCapacity);

    const batch = (key: Record<string, string>) => ({
      RequestItems: { [TableName]: [{ PutRequest: { Item: { ...key, sk: 'OTHER', bytes: new Uint8Array([9]) } } }, { DeleteRequest: { Key: key } }] },
    });
    const written = { ours: await dynamodb.batchWriteItem(batch(ours)), theirs: await sdk.send(new BatchWriteCommand(batch(theirs))) };
    expect(written.ours.UnprocessedItems).toEqual(written.theirs.UnprocessedItems);
    const listed = async (key: Record<string, string>) =>
      dynamodb.query({ TableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': key.pk }, ConsistentRead: true });
    const queried = {
      ours: await listed(ours),
      theirs: await sdk.send(
        new QueryCommand({ TableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': theirs.pk }, ConsistentRead: true }),
      ),
    };
    expect(queried.ours.Items).toEqual([{ ...ours, sk: 'OTHER', bytes: new Uint8Array([9]) }]);
    expect(queried.ours.Count).toBe(queried.theirs.Count);

    const gone = {
      ours: await dynamodb.deleteItem({ TableName, Key: { ...ours, sk: 'OTHER' }, ReturnValues: 'ALL_OLD' }),
      theirs: await sdk.send(new DeleteCommand({ TableName, Key: { ...theirs, sk: 'OTHER' }, ReturnValues: 'ALL_OLD' })),
    };
    expect({ ...gone.ours.Attributes, pk: 'same' }).toEqual({ ...gone.theirs.Attributes, pk: 'same' });
  });

  it("fail as the SDK's errors do, with the members the storage code reads", async () => {
    const { dynamodb, sdk, TableName } = await clients();
    const [ours, theirs] = [itemKey(), itemKey()];
    for (const key of [ours, theirs]) await dynamodb.putItem({ TableName, Item: { ...key, bytes: new Uint8Array([5, 6]), fence: 'change' } });

    // A failed condition, with the item as it was (typed, as the SDK's error carries it: the document client converts no error).
    const conditional = (key: Record<string, string>) => ({
      TableName,
      Item: key,
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    });
    const failed = { ours: await failureOf(dynamodb.putItem(conditional(ours))), theirs: await failureOf(sdk.send(new PutCommand(conditional(theirs)))) };
    expect(dynamodb.isConditionalCheckFailed(failed.ours)).toBe(true);
    expect(dynamodb.isConditionalCheckFailed(failed.theirs)).toBe(true);
    expect(failed.ours).toMatchObject({ name: failed.theirs.name, message: failed.theirs.message, $fault: 'client', $metadata: { httpStatusCode: 400 } });
    expect({ ...failed.ours.Item!, pk: 'same' }).toEqual({ ...failed.theirs.Item!, pk: 'same' });
    expect(failed.ours.Item).toMatchObject({ bytes: { B: new Uint8Array([5, 6]) }, fence: { S: 'change' } });

    // A cancelled transaction: a reason per action, the failed condition's with its item.
    const transaction = (key: Record<string, string>) => ({
      TransactItems: [
        { Put: { TableName, Item: { ...key, sk: 'NEW' } } },
        {
          ConditionCheck: { TableName, Key: key, ConditionExpression: 'attribute_not_exists(fence)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const },
        },
      ],
    });
    const cancelled = {
      ours: await failureOf(dynamodb.transactWriteItems(transaction(ours))),
      theirs: await failureOf(sdk.send(new TransactWriteCommand(transaction(theirs)))),
    };
    expect(dynamodb.isTransactionCanceled(cancelled.ours)).toBe(true);
    expect(dynamodb.isTransactionCanceled(cancelled.theirs)).toBe(true);
    const reasons = (error: Error) =>
      (error as { CancellationReasons?: { Item?: Record<string, unknown> }[] }).CancellationReasons!.map((reason) => ({
        ...reason,
        Item: reason.Item && { ...reason.Item, pk: 'same' },
      }));
    expect(reasons(cancelled.ours)).toEqual(reasons(cancelled.theirs));
    expect(reasons(cancelled.ours)).toMatchObject([
      { Code: 'None' },
      { Code: 'ConditionalCheckFailed', Item: { fence: { S: 'change' }, bytes: { B: new Uint8Array([5, 6]) } } },
    ]);
    expect(cancelled.ours.message).toBe(cancelled.theirs.message);

    // Past DynamoDB's item size: ItemTooLarge (a 400), from both.
    const huge = (key: Record<string, string>) => ({ TableName, Item: { ...key, sk: 'HUGE', text: 'x'.repeat(410 * 1024) } });
    const tooLarge = { ours: await failureOf(dynamodb.putItem(huge(ours))), theirs: await failureOf(sdk.send(new PutCommand(huge(theirs)))) };
    expect(tooLarge.ours.name).toBe('ItemTooLarge');
    expect(tooLarge.theirs.name).toBe('ItemTooLarge');
  });

  it('send one idempotency token per transaction, the same on every resend of it, so that a commit whose answer was lost is not applied twice', async () => {
    const {
      nodes: [node],
      consumer,
    } = await consumerOnNodes();
    const tokens: unknown[] = [];
    const recordingTransactions = (operation: string, request: Record<string, unknown>) => {
      if (operation !== 'TransactWriteItems') return false;
      tokens.push(request.ClientRequestToken);
      return true;
    };
    const claim = (vcpus: number, generation: number) => ({
      allocations: { [node!]: { resources: { VCPU: vcpus } } },
      project_id: 'p',
      user_id: 'u',
      consumer_generation: generation,
    });

    // The commit lands and its answer is lost; the request's own retry meets a conflict, which the transaction's resend
    // (sendTransaction) follows after a 500. Applied twice, the claim would fail on the generation it moved: a 409.
    const faulted = proxy().faultsInTurn(recordingTransactions, ['lostCommit', 'transactionConflict', 'serverError']);
    expect((await placement().put(`/allocations/${consumer}`, claim(3, 1))).status).toBe(204);
    await faulted;
    expect(tokens).toHaveLength(3);
    expect(tokens[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(tokens)).toEqual(new Set([tokens[0]]));

    // The next transaction has a token of its own.
    const next = proxy().faultsInTurn(recordingTransactions, ['lostCommit']);
    expect((await placement().put(`/allocations/${consumer}`, claim(4, 2))).status).toBe(204);
    await next;
    expect(tokens).toHaveLength(4);
    expect(tokens[3]).not.toBe(tokens[0]);

    const held = await placement().get(`/allocations/${consumer}`);
    expect(held.body).toMatchObject({ consumer_generation: 3, allocations: { [node!]: { resources: { VCPU: 4 } } } });
    expect((await placement().get(`/resource_providers/${node}/usages`)).body.usages).toMatchObject({ VCPU: 4 });
  }, 60_000);
});
