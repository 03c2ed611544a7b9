/**
 * Which of some traits any provider holds, from format 3's trait holder
 * entries (items/search-entry.ts) rather than from every provider: GET
 * /traits?associated=. An entry can outlive its holding for a while (a
 * deleted provider's entries wait for the sweeper's cleanup), so a trait
 * counts as held only once a provider its entries name is read holding it;
 * a trait with no entry is held by nobody. Reads a query per trait and the
 * traits of the first few holders of each held one: in proportion to the
 * catalog, not to the region.
 */
import { eachConcurrently } from './commit/journal.js';
import { decodeSearchEntry, traitPartition } from './items/search-entry.js';
import { providerKey, ProviderAttribute } from './items/provider.js';
import { stringListField, type Item } from './items/fields.js';
import { batchGet, projectionOf, queryPage } from './reads.js';

/** Holders read at a time while looking for one that still holds the trait (the first nearly always does). */
const HOLDERS_PAGE = 4;

const TRAITS_ONLY = projectionOf([ProviderAttribute.uuid, ProviderAttribute.traits]);

async function isHeld(trait: string): Promise<boolean> {
  let start: Item | undefined;
  do {
    const page = await queryPage(
      { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': traitPartition(trait) }, Limit: HOLDERS_PAGE },
      start,
    );
    const holders = page.items.map(decodeSearchEntry);
    if (holders.length > 0) {
      // Strongly consistent: the entry and the holding were committed together, and an eventual read could miss the holding.
      const providers = await batchGet(holders.map(providerKey), { projection: TRAITS_ONLY });
      if (providers.some((provider) => stringListField(provider, ProviderAttribute.traits).includes(trait))) return true;
    }
    start = page.next;
  } while (start !== undefined);
  return false;
}

/** The traits among `traits` that some provider holds; only once the table's entries are built (storage-format.ts). */
export async function traitsHeld(traits: readonly string[]): Promise<Set<string>> {
  const held = new Set<string>();
  await eachConcurrently(traits, async (trait) => {
    if (await isHeld(trait)) held.add(trait);
  });
  return held;
}
