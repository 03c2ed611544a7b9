/**
 * Which traits any provider holds (GET /traits?associated=), without
 * reading every provider. Every trait some provider holds names one
 * provider that held it on its catalog entry (items/catalog-entry.ts
 * `holder`): a change that gives a provider a trait first notes it there
 * (noteTraitHolders), before the holding is committed, and the entries'
 * build notes the holders it finds. So a trait whose entry names nobody is
 * held by nobody; one that names a provider still holding it is held; and
 * for the others (the provider named has let the trait go, or is gone),
 * format 3's trait holder entries say (items/search-entry.ts). Reads the
 * catalog and the providers named: in proportion to the traits held, not
 * to the region.
 */
import { tableName, updateItem, isConditionalCheckFailed } from './dynamodb.js';
import { recordConsumedCapacity, RETURN_CONSUMED_CAPACITY } from './consumed-capacity.js';
import { traits, type CatalogEntry } from './catalog.js';
import { eachConcurrently } from './commit/journal.js';
import { catalogEntryKey, CatalogEntryAttribute, TRAITS_PK } from './items/catalog-entry.js';
import { decodeSearchEntry, traitPartition } from './items/search-entry.js';
import { providerKey, ProviderAttribute } from './items/provider.js';
import { stringField, stringListField, type Item } from './items/fields.js';
import { batchGet, projectionOf, queryPage } from './reads.js';

/** Holders read at a time while looking for one that still holds the trait (the first nearly always does). */
const HOLDERS_PAGE = 4;

const TRAITS_ONLY = projectionOf([ProviderAttribute.uuid, ProviderAttribute.traits]);

/**
 * Names a holder (trait to provider uuid) on the catalog entry of each
 * trait whose entry names none yet. Called before a change that gives a
 * provider a trait commits, and by the entries' build for the holders it
 * finds: the entries naming a holder are then a superset of the traits
 * held. A trait whose entry is gone is passed over (the change that names
 * it fails on its own).
 */
export async function noteTraitHolders(holders: ReadonlyMap<string, string>): Promise<void> {
  if (holders.size === 0) return;
  const unnamed = (await traits.listNamed(holders.keys())).filter((entry) => entry.holder === undefined);
  await eachConcurrently(unnamed, async (entry) => {
    try {
      const output = await updateItem({
        TableName: tableName(),
        Key: catalogEntryKey(TRAITS_PK, entry.name),
        UpdateExpression: 'SET #holder = :uuid',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#holder)',
        ExpressionAttributeNames: { '#holder': CatalogEntryAttribute.holder },
        ExpressionAttributeValues: { ':uuid': holders.get(entry.name)! },
        ReturnConsumedCapacity: RETURN_CONSUMED_CAPACITY,
      });
      recordConsumedCapacity(output.ConsumedCapacity, 'write');
    } catch (error) {
      // Named meanwhile by another change, or deleted: either way nothing to note.
      if (!isConditionalCheckFailed(error)) throw error;
    }
  });
}

/** Whether a provider holds the trait, from its holder entries: an entry counts once its provider, read, holds it. */
async function heldByAnEntry(trait: string): Promise<boolean> {
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

/**
 * The traits among these catalog entries that some provider holds; only
 * once the table's entries are built (storage-format.ts), which the build
 * notes holders for.
 */
export async function traitsHeld(entries: readonly Pick<CatalogEntry, 'name' | 'holder'>[]): Promise<Set<string>> {
  const named = entries.filter((entry) => entry.holder !== undefined);
  const providers = await batchGet([...new Set(named.map((entry) => entry.holder!))].map(providerKey), { projection: TRAITS_ONLY });
  const holdings = new Map(providers.map((provider) => [stringField(provider, ProviderAttribute.uuid), stringListField(provider, ProviderAttribute.traits)]));
  const held = new Set(named.filter((entry) => holdings.get(entry.holder!)?.includes(entry.name)).map((entry) => entry.name));
  await eachConcurrently(
    named.filter((entry) => !held.has(entry.name)),
    async ({ name }) => {
      if (await heldByAnEntry(name)) held.add(name);
    },
  );
  return held;
}
