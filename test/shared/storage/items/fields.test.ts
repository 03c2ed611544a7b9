import { describe, expect, it } from 'vitest';
import {
  MalformedItem,
  nullableStringField,
  numberField,
  numberMapField,
  numberMapsField,
  optionalStringField,
  stringField,
  stringListField,
  stringSetField,
} from '../../../../shared/storage/items/fields.js';

const item = {
  pk: 'rp#1',
  sk: 'rp',
  uuid: 'u1',
  generation: 3,
  parentUuid: null,
  traits: ['HW_CPU_X86_AVX2'],
  children: new Set(['c2', 'c1']),
  usages: { VCPU: 2 },
  allocations: { u1: { VCPU: 2, MEMORY_MB: 512 } },
};

describe('item fields', () => {
  it('reads each attribute as the writer stored it', () => {
    expect(stringField(item, 'uuid')).toBe('u1');
    expect(numberField(item, 'generation')).toBe(3);
    expect(nullableStringField(item, 'parentUuid')).toBeNull();
    expect(nullableStringField({ ...item, parentUuid: 'p' }, 'parentUuid')).toBe('p');
    expect(stringListField(item, 'traits')).toEqual(['HW_CPU_X86_AVX2']);
    expect(stringSetField(item, 'children')).toEqual(['c1', 'c2']);
    expect(numberMapField(item, 'usages')).toEqual({ VCPU: 2 });
    expect(numberMapsField(item, 'allocations')).toEqual({ u1: { VCPU: 2, MEMORY_MB: 512 } });
  });

  it('reads what the writer leaves out as empty', () => {
    expect(optionalStringField(item, 'consumerType')).toBeUndefined();
    expect(nullableStringField(item, 'missing')).toBeNull();
    expect(stringListField(item, 'aggregates')).toEqual([]);
    expect(stringSetField(item, 'missing')).toEqual([]);
    expect(numberMapField(item, 'missing')).toEqual({});
    expect(numberMapsField(item, 'missing')).toEqual({});
  });

  it('refuses an attribute of another type, naming the item and the attribute', () => {
    expect(() => stringField(item, 'generation')).toThrow(new MalformedItem('generation', 'a string', item));
    expect(() => stringField(item, 'generation')).toThrow('stored item "rp#1"/"rp": generation is not a string');
    expect(() => numberField({ ...item, generation: '3' }, 'generation')).toThrow(MalformedItem);
    expect(() => stringField(item, 'missing')).toThrow(MalformedItem);
    expect(() => stringListField({ ...item, traits: 'HW' }, 'traits')).toThrow(MalformedItem);
    expect(() => stringSetField({ ...item, children: ['c1'] }, 'children')).toThrow(MalformedItem);
    expect(() => numberMapField({ ...item, usages: { VCPU: '2' } }, 'usages')).toThrow(MalformedItem);
    expect(() => numberMapsField({ ...item, allocations: { u1: 2 } }, 'allocations')).toThrow(MalformedItem);
  });
});
