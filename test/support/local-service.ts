/**
 * The whole local service (a table of its own on the worker's DynamoDB
 * Local, the handlers) for the tests of one file or describe block: started
 * before them, stopped after.
 *
 * `environment` runs first and returns variables for the service (undefined
 * unsets one); they are set before the handlers load, because the handlers
 * read their configuration as they load, and the environment is restored
 * afterwards.
 */
import { afterAll, beforeAll, vi } from 'vitest';
import type { LocalService } from '../../local/service.js';
import { client } from '../../admin/placement-client.js';
import { freshTableName } from './tables.js';

type Environment = Record<string, string | undefined>;

/** A bound for a hung request, as long as a test's: on a loaded machine a contended claim can take minutes. */
const REQUEST_TIMEOUT_MS = 600_000;

export interface ServiceUnderTest {
  readonly url: string;
  /** Where the history sets aside what it cannot take (with PLACEMENT_LOCAL_HISTORY_SECONDS above 0). */
  readonly setAsideQueueUrl: string | undefined;
  /** A client bound to the service once it runs; usable at module level. */
  client(defaults?: Parameters<typeof client>[1]): ReturnType<typeof client>;
}

export function useLocalService(environment?: () => Promise<Environment> | Environment): ServiceUnderTest {
  let service: LocalService | undefined;
  let saved: NodeJS.ProcessEnv | undefined;
  beforeAll(async () => {
    saved = { ...process.env };
    // Empty, as a service started on a DynamoDB Local of its own would find it (the tests' reads follow the variable).
    process.env.PLACEMENT_TABLE_NAME = freshTableName();
    if (environment) {
      for (const [name, value] of Object.entries(await environment())) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      // A fresh module graph, so that the handlers load with this configuration.
      vi.resetModules();
    }
    const { startLocalService } = await import('../../local/service.js');
    service = await startLocalService({ port: 0 });
  });
  afterAll(async () => {
    await service?.stop();
    process.env = saved!;
  });
  const url = () => {
    if (service === undefined) throw new Error('the local service is not running');
    return service.url;
  };
  return {
    get url() {
      return url();
    },
    get setAsideQueueUrl() {
      return service?.setAsideQueueUrl;
    },
    client:
      (defaults) =>
      (...request) =>
        client(url(), { timeoutMs: REQUEST_TIMEOUT_MS, ...defaults })(...request),
  };
}
