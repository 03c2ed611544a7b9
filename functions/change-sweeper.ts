/**
 * The scheduled change sweeper (not an API route): finishes every multi-step
 * change whose writer died, rolling a committed one forward and any other
 * back (shared/storage/journal.ts, docs/design/multi-step-changes.md), and
 * removes the search entries of deleted providers that their requests left
 * (shared/storage/providers.ts providerChangePlan), and finishes the use
 * counts that provider changes moved outside their commits
 * (shared/storage/count-changes.ts). Requests finish what they meet
 * themselves; this covers what nobody reads.
 */
import { logger } from '../shared/http/logger.js';
import { sweepChanges } from '../shared/storage/journal.js';
import { sweepEntryCleanups } from '../shared/storage/providers.js';
import { sweepCountChanges } from '../shared/storage/count-changes.js';

export const handler = async (): Promise<{ finished: number; entryCleanups: number; countChanges: number }> => {
  const finished = await sweepChanges();
  if (finished > 0) logger.warn('finished changes whose writers had died', { finished });
  const entryCleanups = await sweepEntryCleanups();
  // A deletion past 792 entries leaves them to this sweep by design: information, not a warning.
  if (entryCleanups > 0) logger.info('removed the search entries of deleted providers', { entryCleanups });
  const countChanges = await sweepCountChanges();
  // Provider changes leave the counts they lower to this sweep by design: information, not a warning.
  if (countChanges > 0) logger.info('finished use-count changes', { countChanges });
  return { finished, entryCleanups, countChanges };
};
