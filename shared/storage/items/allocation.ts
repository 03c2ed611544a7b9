/**
 * The allocation item: what one consumer holds on one provider, in the
 * provider's partition, so that a provider and all its allocations are one
 * query (GET /resource_providers/{uuid}/allocations).
 *
 *   pk RP#<provider uuid>   sk ALLOC#<consumer uuid>
 *
 * Storage format 1 (release 1.0.0) repeats the consumer's uuid in an
 * attribute; from format 2 the sort key alone holds it (uuids are keyed in
 * lower case, as they are stored): every read of a provider's allocations,
 * nova's most frequent, reads fewer bytes. Both are read.
 */
import type { Resources } from '../../domain/model.js';
import { foldUuidCase } from '../../domain/uuid.js';
import { numberMapField, optionalStringField, stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';
import { providerPartition } from './provider.js';

export const ALLOCATION_TYPE = 'allocation';
const ALLOCATION_PREFIX = 'ALLOC#';
export const AllocationAttribute = { consumerUuid: 'consumerUuid', resources: 'resources' } as const;

export const allocationKey = (providerUuid: string, consumerUuid: string): Key => ({
  pk: providerPartition(providerUuid),
  sk: `${ALLOCATION_PREFIX}${foldUuidCase(consumerUuid)}`,
});

export interface Allocation {
  consumerUuid: string;
  resources: Resources;
}

/** The item in storage format `format` (storage-format.ts: the format the table is at). */
export const encodeAllocation = (providerUuid: string, allocation: Allocation, format: number): Item => ({
  ...allocationKey(providerUuid, allocation.consumerUuid),
  [TYPE_ATTRIBUTE]: ALLOCATION_TYPE,
  ...(format < 2 ? { [AllocationAttribute.consumerUuid]: allocation.consumerUuid } : {}),
  [AllocationAttribute.resources]: allocation.resources,
});

export const decodeAllocation = (item: Item): Allocation => ({
  consumerUuid: optionalStringField(item, AllocationAttribute.consumerUuid) ?? stringField(item, 'sk').slice(ALLOCATION_PREFIX.length),
  resources: numberMapField(item, AllocationAttribute.resources),
});

/** Whether an item of a provider's partition is one of its allocations. */
export const isAllocationItem = (item: Item): boolean => stringField(item, 'sk').startsWith(ALLOCATION_PREFIX);
