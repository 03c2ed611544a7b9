/**
 * The embedded default as `npm start` runs it, in this process: with no
 * DynamoDB given, the service starts a DynamoDB Local of its own (a table
 * with the change stream the history reads), and stops it with itself; with
 * no Java on the PATH it says what to install.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { client } from '../../admin/placement-client.js';
import { startDynamoDbLocal } from '../../local/dynamodb-local.js';

describe('the local service without a DynamoDB given', () => {
  let saved: NodeJS.ProcessEnv;
  beforeEach(() => {
    saved = { ...process.env };
    delete process.env.PLACEMENT_DYNAMODB_ENDPOINT;
    vi.resetModules();
  });
  afterEach(() => {
    process.env = saved;
  });

  it('starts a DynamoDB Local of its own, a table with the change stream the history reads, and stops it with itself', async () => {
    process.env.PLACEMENT_LOCAL_HISTORY_SECONDS = '1';
    const { startLocalService } = await import('../../local/service.js');
    const service = await startLocalService({ port: 0 });
    const endpoint = service.dynamoDbEndpoint;
    expect(endpoint).not.toBe(saved.PLACEMENT_DYNAMODB_ENDPOINT);
    expect((await client(service.url, { token: 'admin', version: '1.39' })('GET', '/resource_classes/VCPU')).status).toBe(200);
    const dynamo = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: process.env.PLACEMENT_TABLE_NAME }));
    expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    await service.stop();
    // Its database went with it, and so did the endpoint it had set for the process.
    await expect(fetch(endpoint)).rejects.toThrow();
    expect(process.env.PLACEMENT_DYNAMODB_ENDPOINT).toBeUndefined();
    dynamo.destroy();
  });

  it('says what to install when there is no Java', async () => {
    process.env.PATH = '/nonexistent';
    await expect(startDynamoDbLocal()).rejects.toThrow(
      /DynamoDB Local needs Java 17 or later, and there is no java on the PATH \(Debian: apt-get install openjdk-17-jre-headless\)/,
    );
  });
});
