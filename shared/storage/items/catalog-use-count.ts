/**
 * Use-count shards of a custom resource class or trait: how many
 * inventories (classes) or providers (traits) use it, spread over
 * USE_COUNT_SHARDS items so that providers starting to use one name at the
 * same moment (a rack of Ironic nodes enrolled with one CUSTOM_BAREMETAL_*
 * class) write different items instead of all conflicting on one. A
 * provider always counts in the same shard (shardForProvider). The shards
 * exist exactly as long as their entry: an increment requires its shard, so
 * a name cannot start being used once it is deleted; a delete requires every
 * shard at 0.
 *
 *   pk <catalog>_USES#<name>   sk SHARD#<n>
 */
import { createHash } from 'node:crypto';
import { numberField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { clientPart } from './key-parts.js';

export const CATALOG_USE_COUNT_TYPE = 'catalogUseCount';
export const USE_COUNT_SHARDS = 16;
export const CatalogUseCountAttribute = { refs: 'refs' } as const;

export const useCountKey = (catalogPartition: string, name: string, shard: number): Key => ({
  pk: clientPart(`${catalogPartition}_USES`, name),
  sk: `SHARD#${shard}`,
});

export const useCountKeys = (catalogPartition: string, name: string, shards = USE_COUNT_SHARDS): Key[] =>
  Array.from({ length: shards }, (_, shard) => useCountKey(catalogPartition, name, shard));

export function shardForProvider(providerUuid: string, shards = USE_COUNT_SHARDS): number {
  return createHash('sha1').update(providerUuid).digest().readUInt16BE(0) % shards;
}

export const encodeUseCount = (key: Key, refs: number): Item => ({ ...key, [TYPE_ATTRIBUTE]: CATALOG_USE_COUNT_TYPE, [CatalogUseCountAttribute.refs]: refs });

export const decodeUseCount = (item: Item): number => numberField(item, CatalogUseCountAttribute.refs);
