import { describe, expect, it } from 'vitest';
import { Microversion } from '../../../shared/api/microversion.js';
import { QueryString } from '../../../shared/api/query-string.js';
import { parseMemberOf, parseRequiredTraits, parseResources, satisfies } from '../../../shared/domain/query-filters.js';

const v = (text: string) => Microversion.parse(text);
const q = (text: string) => QueryString.parse(text);
const AGG1 = '7a0b9e2c-6a43-4d9b-a4f8-7b1d0c6e9a11';
const AGG2 = '0d9f7c1e-3b2a-4e5f-9a8b-1c2d3e4f5a6b';

describe('parseResources', () => {
  it('parses class:amount pairs', () => {
    expect(parseResources('VCPU:2,MEMORY_MB:1024')).toEqual({ VCPU: 2, MEMORY_MB: 1024 });
  });
  it('rejects bad forms and amounts below one', () => {
    expect(() => parseResources('VCPU')).toThrow(/Badly formed resources parameter/);
    expect(() => parseResources('VCPU:x')).toThrow(/expected positive integer amount/);
    expect(() => parseResources('VCPU:0')).toThrow(/requires amount >= 1/);
  });
});

describe('parseRequiredTraits', () => {
  it('keeps only the last value before 1.39 and all of them after', () => {
    const query = q('required=A&required=B');
    expect(parseRequiredTraits(query, v('1.38'))).toEqual({ anyOf: [['B']], forbidden: [] });
    expect(parseRequiredTraits(query, v('1.39'))).toEqual({ anyOf: [['A'], ['B']], forbidden: [] });
  });
  it('accepts forbidden traits from 1.22 and any-of from 1.39', () => {
    expect(() => parseRequiredTraits(q('required=!A'), v('1.21'))).toThrow(/HW_CPU_X86_VMX,CUSTOM_MAGIC/);
    expect(parseRequiredTraits(q('required=A,!B'), v('1.22'))).toEqual({ anyOf: [['A']], forbidden: ['B'] });
    expect(() => parseRequiredTraits(q('required=in:A,B'), v('1.38'))).toThrow(/only supported since microversion 1.39/);
    expect(parseRequiredTraits(q('required=in:A,B'), v('1.39'))).toEqual({ anyOf: [['A', 'B']], forbidden: [] });
  });
});

describe('parseMemberOf', () => {
  it('needs 1.24 to repeat and 1.32 to forbid', () => {
    expect(() => parseMemberOf(q(`member_of=${AGG1}&member_of=${AGG2}`), v('1.23'))).toThrow(/Multiple member_of parameters/);
    expect(parseMemberOf(q(`member_of=${AGG1}&member_of=in:${AGG1},${AGG2}`), v('1.24'))).toEqual({
      anyOf: [[AGG1], [AGG1, AGG2]],
      forbidden: [],
    });
    expect(() => parseMemberOf(q(`member_of=!${AGG1}`), v('1.31'))).toThrow(/Forbidden member_of/);
    expect(parseMemberOf(q(`member_of=!in:${AGG1},${AGG2}`), v('1.32'))?.forbidden).toEqual([AGG1, AGG2]);
  });
  it('rejects values that are not uuids', () => {
    expect(() => parseMemberOf(q('member_of=nope'), v('1.3'))).toThrow(/valid UUID/);
  });
});

describe('satisfies', () => {
  it('applies all-of groups of any-of names and forbidden names', () => {
    const filter = { anyOf: [['A', 'B'], ['C']], forbidden: ['D'] };
    expect(satisfies(['B', 'C'], filter)).toBe(true);
    expect(satisfies(['A'], filter)).toBe(false);
    expect(satisfies(['A', 'C', 'D'], filter)).toBe(false);
  });
});
