import { describe, expect, it } from 'vitest';
import { errorOf } from '../support/errors.js';
import { Microversion, requestedMicroversion } from '../../shared/api/microversion.js';

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

  it('compares numerically, not as text', () => {
    expect(Microversion.parse('1.10').isAtLeast('1.9')).toBe(true);
    expect(Microversion.parse('1.9').isAtLeast('1.10')).toBe(false);
  });
});
