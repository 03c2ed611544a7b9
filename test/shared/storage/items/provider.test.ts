import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../shared/domain/model.js';
import { ItemTooLarge, MAX_ITEM_BYTES } from '../../../../shared/storage/items/fields.js';
import {
  decodeProvider,
  decodeProviderCapacity,
  decodeSearchProvider,
  encodeProvider,
  PROVIDER_TYPE,
  providerKey,
  shardOf,
} from '../../../../shared/storage/items/provider.js';

const provider: Provider = {
  uuid: 'a0000000-0000-4000-8000-000000000001',
  name: 'compute-1',
  generation: 7,
  parentUuid: null,
  rootUuid: 'a0000000-0000-4000-8000-000000000001',
  inventories: { VCPU: { total: 16, reserved: 2, min_unit: 1, max_unit: 16, step_size: 1, allocation_ratio: 4 } },
  usages: { VCPU: 10 },
  traits: ['HW_CPU_X86_AVX2', 'CUSTOM_GOLD'],
  aggregates: ['b0000000-0000-4000-8000-000000000002'],
  children: ['c0000000-0000-4000-8000-000000000003', 'c0000000-0000-4000-8000-000000000004'],
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
};

describe('the provider item', () => {
  it('decodes what it encodes, with its keys, tag and free capacity', () => {
    const item = encodeProvider(provider);
    expect(item).toMatchObject({
      ...providerKey(provider.uuid),
      type: PROVIDER_TYPE,
      spk: shardOf(provider.rootUuid),
      ssk: `${provider.rootUuid}#${provider.uuid}`,
    });
    expect(item.free).toEqual({ VCPU: 46 });
    expect(decodeProvider(item)).toEqual(provider);
    expect(decodeSearchProvider(item)).toEqual({
      uuid: provider.uuid,
      parentUuid: null,
      rootUuid: provider.rootUuid,
      inventories: provider.inventories,
      usages: provider.usages,
      traits: provider.traits,
      aggregates: provider.aggregates,
      children: provider.children,
    });
    expect(decodeProviderCapacity(item)).toEqual({ uuid: provider.uuid, name: provider.name, inventories: provider.inventories, usages: provider.usages });
  });

  it('keys a provider by its uuid in lower case', () => {
    expect(providerKey(provider.uuid.toUpperCase())).toEqual(providerKey(provider.uuid));
  });

  it('leaves out an empty children set, which DynamoDB cannot store', () => {
    expect(encodeProvider({ ...provider, children: [] }).children).toBeUndefined();
  });

  it('refuses a provider past the size one record may hold', () => {
    const aggregates = Array.from({ length: MAX_ITEM_BYTES / 36 }, (_, n) => `b0000000-0000-4000-8000-${String(n).padStart(12, '0')}`);
    expect(() => encodeProvider({ ...provider, aggregates })).toThrow(ItemTooLarge);
    expect(() => encodeProvider({ ...provider, aggregates: aggregates.slice(0, 8000) })).not.toThrow();
  });
});
