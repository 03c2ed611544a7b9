/**
 * The scheduled change sweeper (not an API route): finishes every multi-step
 * change whose writer died, rolling a committed one forward and any other
 * back (shared/storage/journal.ts, docs/design/multi-step-changes.md), and
 * every deleted provider's entry cleanup its request left unfinished
 * (shared/storage/providers.ts). Requests finish what they meet themselves;
 * this covers what nobody reads.
 */
import { logger } from '../shared/http/logger.js';
import { sweepChanges } from '../shared/storage/journal.js';
import { sweepEntryCleanups } from '../shared/storage/providers.js';

export const handler = async (): Promise<{ finished: number; entryCleanups: number }> => {
  const finished = await sweepChanges();
  if (finished > 0) logger.warn('finished changes whose writers had died', { finished });
  const entryCleanups = await sweepEntryCleanups();
  if (entryCleanups > 0) logger.warn('finished the entry cleanups of deleted providers whose requests had died', { entryCleanups });
  return { finished, entryCleanups };
};
