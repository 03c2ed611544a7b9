/**
 * `npm start`: the embedded default. Serves Placement on 127.0.0.1:${PORT:-8778}
 * backed by an in-memory DynamoDB Local (PLACEMENT_DATA_DIR keeps the data on
 * disk; PLACEMENT_DYNAMODB_ENDPOINT uses a DynamoDB that is already running).
 * Exits non-zero with a one-line message when the configuration is unusable.
 */
import type { LocalService } from './service.js';

const port = Number(process.env.PORT ?? 8778);
let service: LocalService;
try {
  // Imported here so that a configuration error the handlers raise as they load (policy file, auth) is reported plainly.
  const { startLocalService } = await import('./service.js');
  service = await startLocalService({ port, dataDirectory: process.env.PLACEMENT_DATA_DIR || undefined });
} catch (error) {
  console.error(`placement: cannot start: ${(error as Error).message}`);
  process.exit(1);
}
console.log(`Placement listening on ${service.url} (DynamoDB at ${service.dynamoDbEndpoint})`);
if (service.setAsideQueueUrl) console.log(`History records set aside go to the queue ${service.setAsideQueueUrl}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
