import { describe, expect, it } from 'vitest';
import { errorOf } from '../../support/errors.js';
import { Microversion, requestedMicroversion } from '../../../shared/api/microversion.js';

describe('requestedMicroversion', () => {
  it('defaults to 1.0 without a placement entry', () => {
    expect(requestedMicroversion(undefined).toString()).toBe('1.0');
    expect(requestedMicroversion('compute 2.1').toString()).toBe('1.0');
  });

  it('reads the placement entry among several services, and latest', () => {
    expect(requestedMicroversion('compute 2.1, placement 1.14').toString()).toBe('1.14');
    expect(requestedMicroversion('placement latest').toString()).toBe('1.39');
  });

  it('rejects malformed versions with 400 and out-of-range ones with 406 naming the range', () => {
    const malformed = errorOf(() => requestedMicroversion('placement 1.2.3'));
    expect(malformed?.status).toBe(400);
    expect(malformed?.message).toContain('invalid version string: 1.2.3');

    const outOfRange = errorOf(() => requestedMicroversion('placement 1.40'));
    expect(outOfRange?.status).toBe(406);
    expect(outOfRange?.extra).toEqual({ max_version: '1.39', min_version: '1.0' });
  });

  it("reads numbers as upstream's microversion_parse does (Python's int()), exactly however long", () => {
    expect(requestedMicroversion('placement 01.039').toString()).toBe('1.39');
    expect(requestedMicroversion('placement 1. 39').toString()).toBe('1.39');
    for (const header of [`placement 1.${'9'.repeat(30)}`, 'placement -1.0', 'placement 1_0.1', 'placement 2.0']) {
      expect(errorOf(() => requestedMicroversion(header))?.status).toBe(406);
    }
    for (const header of [`placement 1.${'0'.repeat(4301)}`, 'placement 1e1', 'placement 1.3.9', 'placement 1', 'placement 1._3']) {
      expect(errorOf(() => requestedMicroversion(header))?.status).toBe(400);
    }
    expect(requestedMicroversion(`placement 1.${'0'.repeat(4290)}39`).toString()).toBe('1.39');
  });

  it('compares numerically, not as text', () => {
    expect(Microversion.parse('1.10').isAtLeast('1.9')).toBe(true);
    expect(Microversion.parse('1.9').isAtLeast('1.10')).toBe(false);
  });
});

describe('requestedMicroversion reads versions as upstream (microversion-parse, Python int())', () => {
  it('accepts leading zeros, signs and blanks, and takes the last placement entry', () => {
    expect(requestedMicroversion('placement 01.05').toString()).toBe('1.5');
    expect(requestedMicroversion('placement +1.0_7').toString()).toBe('1.7');
    expect(requestedMicroversion('placement 1.5, placement 1.7').toString()).toBe('1.7');
    expect(requestedMicroversion('placement').toString()).toBe('1.0');
  });

  it('answers 406 with the range for well-formed versions outside it, negative and huge ones included', () => {
    for (const text of ['-1.0', '1.040', '2.0', '1.99999999999999999999']) {
      const error = errorOf(() => requestedMicroversion(`placement ${text}`));
      expect(error?.status, text).toBe(406);
      expect(error?.message).toBe(`Invalid microversion: Unacceptable version header: ${text}`);
    }
  });

  it("answers 400 with Python's reason for malformed ones", () => {
    expect(errorOf(() => requestedMicroversion('placement 1.a'))?.message).toBe(
      "Invalid microversion: invalid version string: 1.a; invalid literal for int() with base 10: 'a'",
    );
    expect(errorOf(() => requestedMicroversion('placement 1'))?.message).toBe(
      "Invalid microversion: invalid version string: 1; Version.__new__() missing 1 required positional argument: 'minor'",
    );
    expect(errorOf(() => requestedMicroversion('placement 1._5'))?.status).toBe(400);
  });
});
