/**
 * vitest's setup file, run before each test file: the file talks to its
 * worker's DynamoDB Local (test/support/dynamodb-local-per-worker.ts) in a
 * table of its own, deleted after its last test, with every other table it
 * made (test/support/tables.ts).
 */
import { afterAll, inject } from 'vitest';
import { deleteTheFileTables, nameTheFileTable } from './tables.js';

const endpoints = inject('dynamoDbLocalEndpoints');
const endpoint = endpoints[(Number(process.env.VITEST_POOL_ID ?? 1) - 1) % endpoints.length]!;
process.env.PLACEMENT_DYNAMODB_ENDPOINT = endpoint;
nameTheFileTable();

afterAll(() => deleteTheFileTables(endpoint));
