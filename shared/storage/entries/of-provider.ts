/** Every entry a provider in a given state has in a table at storage format 3: what the build writes and the verify expects. */
import type { Provider } from '../../domain/model.js';
import { SHARING_TRAIT } from '../../domain/standard-catalog.js';
import type { Item, Key } from '../items/fields.js';
import { capacityEntryKey, encodeCapacityEntry } from '../items/capacity-entry.js';
import { encodeSearchEntry } from '../items/search-entry.js';
import { capacityEntriesOf } from './capacity-entries.js';
import { searchEntriesOf } from './search-entries.js';

export interface ProviderEntry {
  /** What it says of the provider, to name it in a disagreement: `capacity VCPU`, `trait HW_CPU_X86_AVX2`, `aggregate <uuid>`, `sharing marker`. */
  subject: string;
  key: Key;
  item: Item;
  /** Whether it came with format 3 (capacity and trait holder entries), which the build writes for the providers already there. */
  sinceFormat3: boolean;
  /** Whether the stored item must be this very one (a capacity entry's min_unit and step_size); else its presence says it all (a search entry may carry a hold). */
  whole: boolean;
}

export function entriesOfProvider(provider: Provider): ProviderEntry[] {
  const sharing = provider.traits.includes(SHARING_TRAIT);
  const search = searchEntriesOf(provider.uuid, { aggregates: provider.aggregates, traits: provider.traits, sharing, marker: sharing }).map(
    ({ aggregate, trait, key }): ProviderEntry => ({
      subject:
        trait !== undefined
          ? `trait ${trait}`
          : aggregate === undefined
            ? 'sharing marker'
            : `${key.pk.startsWith('SHARING') ? 'sharing in aggregate' : 'aggregate'} ${aggregate}`,
      key,
      item: encodeSearchEntry(key, provider.uuid),
      sinceFormat3: trait !== undefined,
      whole: false,
    }),
  );
  const capacity = capacityEntriesOf(provider).map((entry): ProviderEntry => ({
    subject: `capacity ${entry.resourceClass}`,
    key: capacityEntryKey(entry),
    item: encodeCapacityEntry(entry),
    sinceFormat3: true,
    whole: true,
  }));
  return [...capacity, ...search];
}
