/**
 * The whole service on one machine: DynamoDB Local (or an existing endpoint),
 * the table, and the HTTP server in front of the Lambda handlers. Used by
 * `npm start`, the integration tests and the benchmarks.
 */
import { createServer, type Server } from 'node:http';
import { readPolicyFilesWith } from '../shared/auth/policy-file.js';
import { parsePolicyFile } from '../shared/auth/policy-yaml.js';
import { clientErrorHandler, inProcessDispatch, requestListener, type HandlerModules } from './api-gateway-adapter.js';
import { prepareTable } from './create-table.js';
import { startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';
import { handler as sweeper } from '../functions/change-sweeper.js';
import { readHistoryStream } from './change-stream.js';
import { startLocalQueues } from './sqs-queues.js';
import { config } from '../shared/config.js';
import { logger } from '../shared/http/logger.js';
import { CHECKOUT_RELEASE } from '../shared/release.js';

export interface LocalServiceOptions {
  port: number;
  host?: string;
  /** Keep DynamoDB Local's data in this directory instead of in memory. */
  dataDirectory?: string;
  /** Wraps the handlers the server calls (the cost report meters the CPU time of each invocation, as Lambda bills it). */
  wrapHandlers?: (handlers: HandlerModules) => HandlerModules;
}

export interface LocalService {
  url: string;
  dynamoDbEndpoint: string;
  /** Where the history sets aside the change stream's records it cannot take (SQS's protocol; while the history is read). */
  setAsideQueueUrl?: string;
  stop(): Promise<void>;
}

export async function startLocalService(options: LocalServiceOptions): Promise<LocalService> {
  // Operators' policy files are YAML here (in Lambda the stack ships them as JSON, the policyFile context): the reader
  // is handed over before the handlers load, since they read the policy as they load (a broken file stops the start).
  readPolicyFilesWith(parsePolicyFile);
  // What the stack sets on each function: the release this checkout is. The logger may have loaded before it was set.
  process.env.PLACEMENT_RELEASE ||= CHECKOUT_RELEASE;
  // Local requests run under no function timeout; a finalize to a new storage format waits this long for them (the stack
  // sets its functions' longest timeout): a minute, where Lambda's longest would make trying an upgrade locally take 15.
  process.env.PLACEMENT_LONGEST_REQUEST_SECONDS ||= '60';
  logger.appendPersistentKeys({ release: config.release });
  const { handlers } = await import('../functions/index.js');
  let database: DynamoDbLocal | undefined;
  if (!process.env.PLACEMENT_DYNAMODB_ENDPOINT) {
    database = await startDynamoDbLocal({ dataDirectory: options.dataDirectory });
    process.env.PLACEMENT_DYNAMODB_ENDPOINT = database.endpoint;
  }
  const endpoint = process.env.PLACEMENT_DYNAMODB_ENDPOINT;
  // The endpoint of a database this service started goes with it, so that a service started after it starts its own.
  const stopDatabase = async () => {
    if (database === undefined) return;
    delete process.env.PLACEMENT_DYNAMODB_ENDPOINT;
    await database.stop();
  };
  try {
    await prepareTable();
    // What a previous process left half done is finished now, then every config.localSweepSeconds (as the stack's scheduled
    // sweeper does); a failed sweep waits for the next. 0: never, for tests that sweep themselves and count what they finish.
    const sweep = () => void sweeper().catch(() => undefined);
    const sweeping = config.localSweepSeconds > 0 ? setInterval(sweep, config.localSweepSeconds * 1000).unref() : undefined;
    if (sweeping) sweep();
    const dispatch = inProcessDispatch(options.wrapHandlers?.(handlers) ?? handlers);
    const listener = requestListener(dispatch);
    // The listener answers every error itself: its promise never rejects.
    const server: Server = createServer((request, response) => void listener(request, response));
    server.on('clientError', clientErrorHandler(dispatch));
    server.keepAliveTimeout = 65_000;
    const host = options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, host, resolve);
    });
    const { port } = server.address() as { port: number };
    // The allocation history: DynamoDB Local's change stream read into the history function, as the stack's event source
    // does, with a stand-in for its on-failure queue.
    const queues = config.localHistorySeconds > 0 ? await startLocalQueues() : undefined;
    const setAsideQueueUrl = queues?.queueUrl('placement-history-set-aside');
    const history = queues ? readHistoryStream(endpoint, { setAsideQueueUrl }) : undefined;
    return {
      url: `http://${host}:${port}`,
      dynamoDbEndpoint: endpoint,
      setAsideQueueUrl,
      stop: async () => {
        clearInterval(sweeping);
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await history?.stop();
        await queues?.stop();
        await stopDatabase();
      },
    };
  } catch (error) {
    await stopDatabase();
    throw error;
  }
}
