/**
 * What the tests ask of the table's entries (shared/storage/entries/): the
 * verify over the whole table, as `placement-admin upgrade verify` runs it
 * a part at a time, read from the test's process.
 */
import { verifyEntries, type Disagreement } from '../../shared/storage/entries/verify.js';

export interface EntriesVerdict {
  providers: number;
  entries: number;
  pending: number;
  disagreements: Disagreement[];
}

/** Every disagreement between the entries and the providers of the table PLACEMENT_TABLE_NAME names. */
export async function verifyAllEntries(): Promise<EntriesVerdict> {
  const verdict: EntriesVerdict = { providers: 0, entries: 0, pending: 0, disagreements: [] };
  let page = await verifyEntries(undefined);
  for (;;) {
    verdict.providers += page.providers;
    verdict.entries += page.entries;
    verdict.pending += page.pending;
    verdict.disagreements.push(...page.disagreements);
    if (page.next === undefined) return verdict;
    page = await verifyEntries(page.next);
  }
}
