/**
 * The history function (not an API route): fed by the table's change
 * stream, it turns each committed change of a consumer into an allocation
 * event (shared/storage/history/stream.ts, docs/operators/history.md). The stack's
 * event source lets only consumer items' records through; locally
 * local/change-stream.ts reads DynamoDB Local's stream and calls this the
 * same way.
 *
 * A failed batch throws: the stream gives the same batch again, and the
 * events already written are written again under the same keys, so none is
 * lost or doubled, and a consumer's events stay in its stream order.
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { logger } from '../shared/http/logger.js';
import { recordAllocationEvents } from '../shared/storage/history/stream.js';

export const handler = async (event: DynamoDBStreamEvent): Promise<{ events: number }> => {
  const events = await recordAllocationEvents(event.Records);
  logger.debug('recorded allocation events', { records: event.Records.length, events });
  return { events };
};
