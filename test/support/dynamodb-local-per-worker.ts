/**
 * vitest's global setup: one DynamoDB Local per test worker, started once for
 * the whole run rather than once per test file (a JVM takes seconds to start
 * on a quiet machine, tens of seconds on a loaded one, and more to warm up).
 * Each test file works in tables of its own on its worker's
 * (test/support/tables.ts), so that no test sees another's data.
 */
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb-local.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One endpoint per worker, in the order of VITEST_POOL_ID (1 to maxWorkers). */
    dynamoDbLocalEndpoints: string[];
  }
}

export default async function startDynamoDbLocalPerWorker(project: TestProject): Promise<() => Promise<void>> {
  const databases = await Promise.all(Array.from({ length: project.config.maxWorkers }, () => startDynamoDbLocal()));
  project.provide(
    'dynamoDbLocalEndpoints',
    databases.map((database) => database.endpoint),
  );
  return async () => {
    await Promise.all(databases.map((database) => database.stop()));
  };
}
