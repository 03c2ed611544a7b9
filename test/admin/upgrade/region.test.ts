import { describe, expect, it } from 'vitest';
import { FIRST_RELEASE, formatsOf, nextStep, type UpgradeStatus } from '../../../admin/upgrade/region.js';

const status = (table: number): UpgradeStatus => ({
  release: '1.1.0',
  storage_format: { table, known: [1, 2], newest: 2, finalized_at: null, finalized_by: null },
  changes_in_flight: 0,
});
const current = { name: 'http://new', release: '1.1.0', known: [1, 2] };
const first = { name: 'http://old', ...FIRST_RELEASE };

describe('the next safe step of an upgrade', () => {
  it('waits while a part of the region runs a release that cannot read the newest format', () => {
    expect(nextStep({ status: status(1), runners: [current, first] })).toEqual({
      kind: 'wait',
      reason: expect.stringMatching(/^1 of 2 still run release 1\.0\.0, which cannot read storage format 2/),
    });
  });

  it('waits while the deploy is still updating a function', () => {
    expect(nextStep({ status: status(1), runners: [{ ...current, updating: true }] }).kind).toBe('wait');
  });

  it('finalizes once every part reads the newest format, and then has nothing to do', () => {
    expect(nextStep({ status: status(1), runners: [current, current] })).toEqual({ kind: 'finalize', to: 2 });
    expect(nextStep({ status: status(2), runners: [current] }).kind).toBe('done');
  });

  it('says to act when a part cannot read the format the table is already at (a rollback past the finalize)', () => {
    expect(nextStep({ status: status(2), runners: [current, first] })).toEqual({
      kind: 'refused',
      reason: 'http://old (release 1.0.0) cannot read storage format 2: deploy release 1.1.0 or later there',
    });
  });

  it('takes an older release to read all but the newest format, and 1.0.0 format 1 only', () => {
    expect(formatsOf('1.1.0', status(1))).toEqual([1, 2]);
    expect(formatsOf('1.0.0', status(1))).toEqual([1]);
    expect(formatsOf('1.0.5', status(1))).toEqual([1]);
    expect(formatsOf('1.2.0', status(1))).toEqual([1, 2]);
  });

  describe('to format 3, whose finalize ends with the build of its entries', () => {
    const entries = (state: 'waiting' | 'building' | 'built') => ({
      state,
      waiting_seconds: null,
      waiting_for: null,
      shards: 8,
      shards_done: state === 'built' ? 8 : 3,
      providers: 0,
      entries: 0,
      write_units: 0,
    });
    const at = (table: number, state: 'waiting' | 'building' | 'built' = 'built'): UpgradeStatus => ({
      release: '1.2.0',
      storage_format: { table, known: [1, 2, 3], newest: 3, finalized_at: null, finalized_by: null },
      entries: entries(state),
      changes_in_flight: 0,
    });
    const newest = { name: 'http://newest', release: '1.2.0', known: [1, 2, 3] };
    const previous = { name: 'http://previous', release: '1.1.0', known: [1, 2] };

    it("waits while release 1.1.0 runs, which cannot read format 3, whether the table is at format 2 or still at 1.0.0's", () => {
      for (const table of [1, 2]) {
        expect(nextStep({ status: at(table), runners: [newest, previous] })).toEqual({
          kind: 'wait',
          reason: expect.stringMatching(/^1 of 2 still run release 1\.1\.0, which cannot read storage format 3/),
        });
        expect(nextStep({ status: at(table), runners: [newest] })).toEqual({ kind: 'finalize', to: 3 });
      }
    });

    it('finalizes again (goes on with the build) until the entries are built, then has nothing to do', () => {
      expect(nextStep({ status: at(3, 'waiting'), runners: [newest] })).toEqual({ kind: 'finalize', to: 3 });
      expect(nextStep({ status: at(3, 'building'), runners: [newest] })).toEqual({ kind: 'finalize', to: 3 });
      expect(nextStep({ status: at(3, 'built'), runners: [newest] }).kind).toBe('done');
    });
  });
});
