import { describe, expect, it } from 'vitest';
import { parseTime } from '../../../shared/api/time.js';

describe('parseTime', () => {
  it.each([
    ['2026-11-26T17:00:00Z', '2026-11-26T17:00:00.000Z'],
    ['2026-11-26T18:00:00.5+01:00', '2026-11-26T17:00:00.500Z'],
    ['2026-11-26T17:00Z', '2026-11-26T17:00:00.000Z'],
    ['2026-11-26T12:00:00-0500', '2026-11-26T17:00:00.000Z'],
    ['2026-11-26T19:00:00+02', '2026-11-26T17:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2026-11-01T00:00:00-23:59', '2026-11-01T23:59:00.000Z'],
    ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseTime(text).time?.toISOString()).toBe(iso);
  });

  it.each([
    ['2026-13-01T00:00:00Z', 'no such date and time'],
    ['2026-00-10T00:00:00Z', 'no such date and time'],
    ['2026-11-31T00:00:00Z', 'no such date and time'],
    ['2026-02-29T00:00:00Z', 'no such date and time'],
    ['2026-11-01T25:00:00Z', 'no such date and time'],
    ['2026-11-01T00:00:60Z', 'no such date and time'],
    ['2026-11-01T00:00:00-25:00', 'offset is beyond ±23:59'],
    ['2026-11-01T00:00:00+01:60', 'offset is beyond ±23:59'],
    ['2026-11-01T00:00:00', 'not an ISO 8601 date and time with Z or an offset'],
    ['2026-11-01', 'not an ISO 8601 date and time with Z or an offset'],
    ['2026-11-01 00:00:00Z', 'not an ISO 8601 date and time with Z or an offset'],
    ['yesterday', 'not an ISO 8601 date and time with Z or an offset'],
    ['+275760-09-13T00:00:00Z', 'not an ISO 8601 date and time with Z or an offset'],
    ['-271821-04-20T00:00:00Z', 'not an ISO 8601 date and time with Z or an offset'],
    ['', 'not an ISO 8601 date and time with Z or an offset'],
    ['2026-11-01T00:00:00Z\u0000', 'not an ISO 8601 date and time with Z or an offset'],
    [`2026-11-01T00:00:00${'0'.repeat(10_000)}Z`, 'no such date and time'],
  ])('refuses %j: %s', (text, problem) => {
    expect(parseTime(text)).toEqual({ problem: expect.stringContaining(problem) });
  });
});
