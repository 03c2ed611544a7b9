import { describe, expect, it } from 'vitest';
import {
  CHANGE_TYPE,
  changeKey,
  decodeChangeHead,
  decodeStagedWrite,
  encodeChangeHead,
  encodeStagedWrite,
  STAGED_WRITE_TYPE,
  stagedWriteKey,
  type StagedWrite,
} from '../../../../shared/storage/items/change.js';
import { MalformedItem } from '../../../../shared/storage/items/fields.js';

describe('the items of a multi-step change', () => {
  it('round-trip a head, which starts pending', () => {
    const item = encodeChangeHead('c1', 1234, 600, 't0');
    expect(item).toMatchObject({ ...changeKey('c1'), type: CHANGE_TYPE });
    expect(decodeChangeHead(item)).toEqual({ id: 'c1', state: 'pending', leaseUntil: 1234, finished: false, createdAt: 't0' });
  });

  it('round-trip every kind of staged write, keyed by its target', () => {
    const target = { pk: 'RP#a', sk: 'PROVIDER' };
    const writes: StagedWrite[] = [
      { target, action: { kind: 'put', item: { pk: 'RP#a', sk: 'PROVIDER', type: 'provider', children: new Set(['x']) } } },
      { target, action: { kind: 'update', expression: 'ADD #n0 :v0', names: { '#n0': 'refs' }, values: { ':v0': 1 } } },
      { target, action: { kind: 'delete' } },
      { target, action: { kind: 'check' } },
    ];
    for (const write of writes) {
      const item = encodeStagedWrite('c1', write, 99);
      expect(item).toMatchObject({ ...stagedWriteKey('c1', target), type: STAGED_WRITE_TYPE, expiresAt: 99 });
      expect(decodeStagedWrite(item)).toEqual(write);
    }
    expect(stagedWriteKey('c1', target)).not.toEqual(stagedWriteKey('c1', { pk: 'RP#a', sk: 'ALLOC#b' }));
  });

  it('refuses a staged write of an unknown kind', () => {
    expect(() => decodeStagedWrite({ pk: 'CHANGE#c1', sk: 'x', kind: 'merge' })).toThrow(MalformedItem);
  });
});
