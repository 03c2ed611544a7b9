import { describe, expect, it } from 'vitest';
import {
  distinct,
  filterTraits,
  isCustomName,
  isValidCustomName,
  latestChange,
  likePrefixMatcher,
  orderResourceClasses,
  parseAssociated,
  parseTraitNameFilter,
  sameNames,
  unknownNames,
} from '../../../shared/domain/catalog-names.js';
import { errorOf } from '../../support/errors.js';
import { STANDARD_RESOURCE_CLASSES } from '../../../shared/domain/standard-catalog.js';

describe('custom names', () => {
  it('accepts CUSTOM_ followed by upper-case letters, digits and underscores', () => {
    expect(isValidCustomName('CUSTOM_TRAIT_1')).toBe(true);
    expect(isValidCustomName('CUSTOM__')).toBe(true);
  });

  it('rejects names outside the custom namespace or with other characters', () => {
    expect(isValidCustomName('TRAIT_X')).toBe(false);
    expect(isValidCustomName('CUSTOM_')).toBe(false);
    expect(isValidCustomName('CUSTOM_ABC:1')).toBe(false);
    expect(isValidCustomName('CUSTOM_lower')).toBe(false);
    expect(isValidCustomName('custom_ABC')).toBe(false);
    expect(isValidCustomName('CUSTOM_A\n')).toBe(false);
    expect(isValidCustomName('')).toBe(false);
  });

  it('allows at most 255 characters', () => {
    expect(isValidCustomName(`CUSTOM_${'A'.repeat(248)}`)).toBe(true);
    expect(isValidCustomName(`CUSTOM_${'A'.repeat(249)}`)).toBe(false);
  });

  it('tells custom names by their prefix', () => {
    expect(isCustomName('CUSTOM_X')).toBe(true);
    expect(isCustomName('HW_CPU_X86_SSE')).toBe(false);
  });
});

describe('parseTraitNameFilter', () => {
  it('splits in: on commas', () => {
    expect(parseTraitNameFilter('in:CUSTOM_A,CUSTOM_B')).toEqual({ nameIn: ['CUSTOM_A', 'CUSTOM_B'] });
  });

  it('keeps everything after the first colon of startswith:', () => {
    expect(parseTraitNameFilter('startswith:CUSTOM_A:B')).toEqual({ prefix: 'CUSTOM_A:B' });
    expect(parseTraitNameFilter('startswith:')).toEqual({ prefix: '' });
  });

  it('ignores an unknown operator', () => {
    expect(parseTraitNameFilter('foo:bar')).toEqual({});
  });

  it('refuses a value without an operator', () => {
    const error = errorOf(() => parseTraitNameFilter('in_abc'));
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      'Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "in_abc"',
    );
  });
});

describe('parseAssociated', () => {
  it('reads true and false in any case', () => {
    expect(parseAssociated('true')).toBe(true);
    expect(parseAssociated('TRUE')).toBe(true);
    expect(parseAssociated('False')).toBe(false);
  });

  it('refuses anything else', () => {
    const error = errorOf(() => parseAssociated('xyz'));
    expect(error.status).toBe(400);
    expect(error.message).toBe('The query parameter "associated" only accepts "true" or "false"');
  });
});

describe('likePrefixMatcher (SQL LIKE prefix%)', () => {
  it('matches a plain prefix regardless of ASCII case', () => {
    const match = likePrefixMatcher('custom_tr');
    expect(match('CUSTOM_TRAIT_1')).toBe(true);
    expect(match('CUSTOM_OTHER')).toBe(false);
  });

  it('treats _ as any one character and % as any run', () => {
    expect(likePrefixMatcher('HW_CPU_X86_SS_E3')('HW_CPU_X86_SSSE3')).toBe(true);
    expect(likePrefixMatcher('CUSTOM%2')('CUSTOM_TRAIT_2')).toBe(true);
    expect(likePrefixMatcher('CUSTOM%3')('CUSTOM_TRAIT_2')).toBe(false);
    expect(likePrefixMatcher('CUSTOMXZZ')('CUSTOM_ZZ')).toBe(false);
  });

  it('takes regular-expression characters literally', () => {
    expect(likePrefixMatcher('A.B')('AXB')).toBe(false);
    expect(likePrefixMatcher('A.B')('A.BC')).toBe(true);
    expect(likePrefixMatcher('(-[')('(-[X')).toBe(true);
  });

  it('matches everything with an empty prefix', () => {
    expect(likePrefixMatcher('')('ANY')).toBe(true);
  });

  it('agrees with a regular expression on every small pattern and name', () => {
    // The regular expression is right but backtracks exponentially on many "%"; small inputs keep it quick.
    const asRegex = (prefix: string) =>
      new RegExp(`^${[...prefix].map((c) => (c === '%' ? '[\\s\\S]*' : c === '_' ? '[\\s\\S]' : `[${c.toLowerCase()}${c.toUpperCase()}]`)).join('')}`, 'u');
    const words = (alphabet: string, length: number): string[] =>
      length === 0
        ? ['']
        : [
            ...words(alphabet, length - 1),
            ...words(alphabet, length - 1)
              .filter((w) => w.length === length - 1)
              .flatMap((w) => [...alphabet].map((c) => w + c)),
          ];
    const patterns = [...new Set(words('A%_', 5))];
    const names = [...new Set(words('Aab', 5))];
    const disagreements = patterns.flatMap((pattern) => {
      const expected = asRegex(pattern);
      const match = likePrefixMatcher(pattern);
      return names.filter((name) => match(name) !== expected.test(name)).map((name) => `${pattern} ${name}`);
    });
    expect(disagreements).toEqual([]);
  });

  it('answers patterns of many % and _ at once', () => {
    const name = 'HW_CPU_X86_AVX512VPCLMULQDQ'.repeat(9).slice(0, 255);
    const started = performance.now();
    expect(likePrefixMatcher(`${'%'.repeat(5000)}!`)(name)).toBe(false);
    expect(likePrefixMatcher('%_'.repeat(120) + 'Z')(name)).toBe(false);
    expect(likePrefixMatcher('_%'.repeat(3000))(name)).toBe(false);
    expect(likePrefixMatcher('%Q'.repeat(10))(name)).toBe(true);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('matches nothing with more fixed characters than a name may have', () => {
    expect(likePrefixMatcher('A'.repeat(256))('A'.repeat(300))).toBe(false);
    expect(likePrefixMatcher(`${'A'.repeat(255)}%`)('A'.repeat(255))).toBe(true);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(likePrefixMatcher('_X')('\u{1F600}X')).toBe(true);
  });
});

describe('filterTraits', () => {
  const entries = ['CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2', 'CUSTOM_ANOTHER_TRAIT', 'HW_CPU_X86_SSE'].map((name) => ({ name }));
  const used = new Set(['CUSTOM_TRAIT_1', 'HW_CPU_X86_SSE']);
  const names = (filter: Parameters<typeof filterTraits>[1]) => filterTraits(entries, filter, used).map((entry) => entry.name);

  it('returns everything without filters', () => {
    expect(names({})).toEqual(entries.map((entry) => entry.name));
  });

  it('filters by exact names', () => {
    expect(names({ nameIn: ['CUSTOM_TRAIT_2', 'HW_CPU_X86_SSE', 'NOPE', 'custom_trait_1'] })).toEqual(['CUSTOM_TRAIT_2', 'HW_CPU_X86_SSE']);
    expect(names({ nameIn: [''] })).toEqual([]);
  });

  it('filters by prefix', () => {
    expect(names({ prefix: 'CUSTOM_TRAIT' })).toEqual(['CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2']);
  });

  it('filters by association', () => {
    expect(names({ associated: true })).toEqual(['CUSTOM_TRAIT_1', 'HW_CPU_X86_SSE']);
    expect(names({ associated: false })).toEqual(['CUSTOM_TRAIT_2', 'CUSTOM_ANOTHER_TRAIT']);
  });

  it('combines filters', () => {
    expect(names({ prefix: 'CUSTOM_', associated: false })).toEqual(['CUSTOM_TRAIT_2', 'CUSTOM_ANOTHER_TRAIT']);
  });
});

describe('name set helpers', () => {
  it('lists the unknown names once, in request order', () => {
    expect(unknownNames(['B', 'A', 'B', 'C'], new Set(['A']))).toEqual(['B', 'C']);
    expect(unknownNames([], new Set())).toEqual([]);
  });

  it('drops repeats keeping first occurrences', () => {
    expect(distinct(['B', 'A', 'B'])).toEqual(['B', 'A']);
  });

  it('compares name sets ignoring order and repeats', () => {
    expect(sameNames(['A', 'B'], ['B', 'A', 'A'])).toBe(true);
    expect(sameNames(['A'], ['A', 'B'])).toBe(false);
    expect(sameNames([], [])).toBe(true);
  });
});

describe('orderResourceClasses', () => {
  it('puts standard classes in os-resource-classes order, then custom classes oldest first', () => {
    const entries = [
      { name: 'CUSTOM_B', createdAt: '2024-01-02T00:00:00.000Z' },
      { name: 'DISK_GB', createdAt: '2024-01-01T00:00:00.000Z' },
      { name: 'CUSTOM_A', createdAt: '2024-01-03T00:00:00.000Z' },
      { name: 'VCPU', createdAt: '2024-01-01T00:00:00.000Z' },
    ];
    expect(orderResourceClasses(entries).map((entry) => entry.name)).toEqual(['VCPU', 'DISK_GB', 'CUSTOM_B', 'CUSTOM_A']);
    expect(STANDARD_RESOURCE_CLASSES.indexOf('VCPU')).toBeLessThan(STANDARD_RESOURCE_CLASSES.indexOf('DISK_GB'));
  });

  it('does not reorder its input', () => {
    const entries = [
      { name: 'CUSTOM_X', createdAt: '2024-01-01T00:00:00.000Z' },
      { name: 'VCPU', createdAt: '2024-01-01T00:00:00.000Z' },
    ];
    orderResourceClasses(entries);
    expect(entries[0]!.name).toBe('CUSTOM_X');
  });
});

describe('latestChange', () => {
  it('takes the latest update, falling back to creation', () => {
    const latest = latestChange([
      { createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-03-01T00:00:00.000Z' },
      { createdAt: '2024-04-01T00:00:00.000Z', updatedAt: null },
      { createdAt: '2024-02-01T00:00:00.000Z' },
    ]);
    expect(latest?.toISOString()).toBe('2024-04-01T00:00:00.000Z');
  });

  it('is undefined without entries', () => {
    expect(latestChange([])).toBeUndefined();
  });
});
