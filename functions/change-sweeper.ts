/**
 * The scheduled change sweeper (not an API route): finishes every multi-step
 * change whose writer died, rolling a committed one forward and any other
 * back (shared/storage/journal.ts, docs/design/multi-step-changes.md).
 * Requests finish what they meet themselves; this covers what nobody reads.
 */
import { logger } from '../shared/http/logger.js';
import { sweepChanges } from '../shared/storage/journal.js';

export const handler = async (): Promise<{ finished: number }> => {
  const finished = await sweepChanges();
  if (finished > 0) logger.warn('finished changes whose writers had died', { finished });
  return { finished };
};
