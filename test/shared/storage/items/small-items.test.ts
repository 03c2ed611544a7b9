import { describe, expect, it } from 'vitest';
import { ALLOCATION_TYPE, allocationKey, decodeAllocation, encodeAllocation, isAllocationItem } from '../../../../shared/storage/items/allocation.js';
import { CATALOG_ENTRY_TYPE, decodeCatalogEntry, encodeCatalogEntry, TRAITS_PK, type CatalogEntry } from '../../../../shared/storage/items/catalog-entry.js';
import {
  CATALOG_USE_COUNT_TYPE,
  decodeUseCount,
  encodeUseCount,
  shardForProvider,
  USE_COUNT_SHARDS,
  useCountKey,
  useCountKeys,
} from '../../../../shared/storage/items/catalog-use-count.js';
import { decodeProviderName, encodeProviderName, PROVIDER_NAME_TYPE, providerNameKey } from '../../../../shared/storage/items/provider-name.js';
import { decodeEntryCleanup, encodeEntryCleanup, ENTRY_CLEANUP_TYPE, entryCleanupKey } from '../../../../shared/storage/items/entry-cleanup.js';
import {
  aggregateMemberKey,
  decodeSearchEntry,
  encodeSearchEntry,
  SEARCH_ENTRY_TYPE,
  sharingInAggregateKey,
  traitHolderKey,
} from '../../../../shared/storage/items/search-entry.js';
import {
  CAPACITY_ENTRY_TYPE,
  CAPACITY_SHARDS,
  capacityEntryKey,
  capacityPartitions,
  capacityShardOf,
  capacitySortFrom,
  decodeCapacityEntry,
  encodeCapacityEntry,
  roomKey,
} from '../../../../shared/storage/items/capacity-entry.js';

import { addToHourTotals, decodeHourTotals, hourTotalsAttribute, hourTotalsKey } from '../../../../shared/storage/items/hour-totals.js';
import {
  decodeHourTotalsStart,
  encodeHourTotalsStart,
  HOUR_TOTALS_START_TYPE,
  hourTotalsStartKey,
} from '../../../../shared/storage/items/hour-totals-start.js';

const uuid = 'a0000000-0000-4000-8000-000000000001';

describe('the small item models', () => {
  it('round-trip an allocation in its provider partition, in either storage format', () => {
    for (const format of [1, 2]) {
      const item = encodeAllocation(uuid, { consumerUuid: 'd1', resources: { VCPU: 1 } }, format);
      expect(item).toMatchObject({ ...allocationKey(uuid, 'd1'), type: ALLOCATION_TYPE });
      expect(isAllocationItem(item)).toBe(true);
      expect(decodeAllocation(item)).toEqual({ consumerUuid: 'd1', resources: { VCPU: 1 } });
    }
  });

  it("writes the consumer's uuid as release 1.0.0 reads it in format 1 only", () => {
    expect(encodeAllocation(uuid, { consumerUuid: 'd1', resources: { VCPU: 1 } }, 1)).toHaveProperty('consumerUuid', 'd1');
    expect(encodeAllocation(uuid, { consumerUuid: 'd1', resources: { VCPU: 1 } }, 2)).not.toHaveProperty('consumerUuid');
  });

  it('round-trip an entry cleanup, keyed by the provider and the deletion, traits left out when none (as release 1.1.0 wrote it)', () => {
    const cleanup = {
      key: entryCleanupKey(uuid, 'deletion-1'),
      uuid,
      aggregates: ['g1', 'g2'],
      traits: [],
      sharing: true,
      marker: true,
      due: 1_700_000_000_000,
    };
    const item = encodeEntryCleanup(cleanup);
    expect(item).toMatchObject({ pk: 'ENTRY_CLEANUPS', sk: `${uuid}#deletion-1`, type: ENTRY_CLEANUP_TYPE });
    expect(item).not.toHaveProperty('traits');
    expect(decodeEntryCleanup(item)).toEqual(cleanup);
    const withTraits = { ...cleanup, traits: ['HW_CPU_X86_AVX2'] };
    expect(decodeEntryCleanup(encodeEntryCleanup(withTraits))).toEqual(withTraits);
  });

  it('round-trip a capacity entry, its room first in the sort key so that "at least n" is a key condition', () => {
    const entry = { resourceClass: 'VCPU', uuid, room: 16, minUnit: 1, stepSize: 1 };
    const item = encodeCapacityEntry(entry);
    expect(item).toEqual({ pk: `CAPACITY#VCPU#${capacityShardOf(uuid)}`, sk: `0000000016#${uuid}`, type: CAPACITY_ENTRY_TYPE });
    expect(decodeCapacityEntry(item, 'VCPU')).toEqual(entry);
    const stepped = { ...entry, resourceClass: 'CUSTOM_GPU', room: roomKey(2147483647, 2147483647), minUnit: 2, stepSize: 2 };
    expect(decodeCapacityEntry(encodeCapacityEntry(stepped), 'CUSTOM_GPU')).toEqual(stepped);
    // Sort keys order as the amounts do: 16 is at and after "16" and "9", before "17".
    const sk = capacityEntryKey(entry).sk;
    expect([sk >= capacitySortFrom(16), sk >= capacitySortFrom(9), sk >= capacitySortFrom(17)]).toEqual([true, true, false]);
    expect(capacityPartitions('VCPU')).toHaveLength(CAPACITY_SHARDS);
    const shards = new Set(Array.from({ length: 200 }, (_, n) => capacityShardOf(`a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`)));
    expect(shards.size).toBe(CAPACITY_SHARDS);
  });

  it('keys room exactly up to 16, then rounded up to 1/16 of its power of two: never below it, within 1/16 above', () => {
    const unbounded = 2 ** 31;
    expect([0, 1, 15, 16, 17, 18, 31, 32, 33, 1000, 61440].map((most) => roomKey(most, unbounded))).toEqual([0, 1, 15, 16, 17, 18, 31, 32, 34, 1024, 61440]);
    expect(roomKey(2147483647, unbounded)).toBe(2 ** 31);
    for (let most = 0; most < 100_000; most += 37) {
      const key = roomKey(most, unbounded);
      expect(key).toBeGreaterThanOrEqual(most);
      expect(key - most).toBeLessThanOrEqual(most / 16);
    }
  });

  it("keys room no higher than the provider's whole size: an empty host of 389,120 MB is keyed 389,120, not 393,216", () => {
    expect(roomKey(389_120, 389_120)).toBe(389_120);
    expect(roomKey(385_024, 389_120)).toBe(389_120);
    expect(roomKey(376_832, 389_120)).toBe(376_832);
    expect(roomKey(380_000, 2147483647)).toBe(393_216);
    for (let most = 0; most <= 50_000; most += 37) expect(roomKey(most, 50_000)).toBeGreaterThanOrEqual(most);
  });

  it('round-trip a provider name', () => {
    const item = encodeProviderName('compute-1', uuid);
    expect(item).toMatchObject({ ...providerNameKey('compute-1'), type: PROVIDER_NAME_TYPE });
    expect(decodeProviderName(item)).toBe(uuid);
    expect(providerNameKey('n'.repeat(3000)).pk).toMatch(/^RPNAME@[0-9a-f]{64}$/);
  });

  it('round-trip a search entry under each of its keys', () => {
    for (const key of [aggregateMemberKey('agg', uuid), sharingInAggregateKey('agg', uuid), traitHolderKey('HW_CPU_X86_AVX2', uuid)]) {
      const item = encodeSearchEntry(key, uuid);
      expect(item).toMatchObject({ ...key, type: SEARCH_ENTRY_TYPE });
      expect(decodeSearchEntry(item)).toBe(uuid);
    }
  });

  it('round-trip a catalog entry, legacy count included, and leave absent counts out', () => {
    const entry: CatalogEntry = { name: 'CUSTOM_GOLD', standard: false, useCountShards: 16, legacyRefs: 0, createdAt: 't0', updatedAt: 't1' };
    const item = encodeCatalogEntry(TRAITS_PK, entry);
    expect(item).toMatchObject({ pk: TRAITS_PK, sk: 'CUSTOM_GOLD', type: CATALOG_ENTRY_TYPE });
    expect(item.refs).toBeUndefined();
    expect(decodeCatalogEntry(item)).toEqual(entry);
    const legacy = { pk: TRAITS_PK, sk: 'CUSTOM_OLD', name: 'CUSTOM_OLD', standard: false, refs: 3, createdAt: 't0', updatedAt: 't1' };
    expect(decodeCatalogEntry(legacy)).toEqual({ name: 'CUSTOM_OLD', standard: false, useCountShards: 0, legacyRefs: 3, createdAt: 't0', updatedAt: 't1' });
  });

  it('round-trip a use-count shard, one shard per provider always', () => {
    const key = useCountKey(TRAITS_PK, 'CUSTOM_GOLD', 3);
    expect(key).toEqual({ pk: 'TRAITS_USES#CUSTOM_GOLD', sk: 'SHARD#3' });
    expect(decodeUseCount(encodeUseCount(key, 5))).toBe(5);
    expect(encodeUseCount(key, 5).type).toBe(CATALOG_USE_COUNT_TYPE);
    expect(useCountKeys(TRAITS_PK, 'CUSTOM_GOLD')).toHaveLength(USE_COUNT_SHARDS);
    expect(shardForProvider(uuid)).toBe(shardForProvider(uuid));
    const shards = new Set(Array.from({ length: 200 }, (_, n) => shardForProvider(`a0000000-0000-4000-8000-${String(n).padStart(12, '0')}`)));
    expect(shards.size).toBe(USE_COUNT_SHARDS);
  });

  it("keys a project's and a user's hour totals, the user's so that no project id can pose as it, and adds to them one attribute per class and sum", () => {
    const hour = Date.UTC(2026, 11, 8, 1);
    const totals = { hour, change: { VCPU: -2 }, deferred: { VCPU: -0.5, MEMORY_MB: 256 } };
    expect(hourTotalsKey({ projectId: 'p1' }, hour)).toEqual({ pk: 'HOURS#PROJECT#p1', sk: '2026-12-08T01:00:00.000Z' });
    expect(hourTotalsKey({ projectId: 'p1', userId: 'u1' }, hour)).toEqual({ pk: 'HOURS#USER#["p1","u1"]', sk: '2026-12-08T01:00:00.000Z' });
    const { Update: update } = addToHourTotals('t', { projectId: 'p1', userId: 'u1' }, totals, 1_000);
    expect(update!.Key).toEqual(hourTotalsKey({ projectId: 'p1', userId: 'u1' }, hour));
    const added = Object.fromEntries(
      (update!.UpdateExpression as string)
        .split(' ADD ')[1]!
        .split(', ')
        .map((pair) => pair.split(' ') as [string, string])
        .map(([name, value]) => [update!.ExpressionAttributeNames![name]!, update!.ExpressionAttributeValues![value]]),
    );
    expect(added).toEqual({ 'change#VCPU': -2, 'deferred#VCPU': -0.5, 'deferred#MEMORY_MB': 256 });
    // The item as those additions leave it.
    const item = { ...hourTotalsKey({ projectId: 'p1' }, hour), type: 'hourTotals', expiresAt: 1_000, ...added };
    expect(decodeHourTotals(item)).toEqual(totals);
    expect(hourTotalsAttribute('change', 'CUSTOM_A')).toBe('change#CUSTOM_A');
  });

  it('round-trip the start of the hour totals', () => {
    const item = encodeHourTotalsStart(Date.UTC(2026, 11, 8, 2));
    expect(item).toEqual({ ...hourTotalsStartKey, type: HOUR_TOTALS_START_TYPE, start: '2026-12-08T02:00:00.000Z' });
    expect(decodeHourTotalsStart(item)).toBe(Date.UTC(2026, 11, 8, 2));
  });
});
