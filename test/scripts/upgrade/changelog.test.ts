import { describe, expect, it } from 'vitest';
import { compareVersions, previousRelease, readChangelog } from '../../../scripts/upgrade/changelog.js';

const CHANGELOG = `# Changelog

Newest first.

## 1.2.0 (unreleased: main)

- Commit: the main commit this entry lands with.
- Storage format: 2. Reads formats 1 and 2.

## 1.1.0

- Commit: 0123456789abcdef0123456789abcdef01234567
- Storage format: 2

Upgrade notes: finalize after every function runs 1.1.0.

## 1.0.0

- Commit: bbd7376046ba32133ce4aaa4fcc114432f5dd3a1
- Storage format: 1 (no format record in the table).
`;

describe('CHANGELOG.md', () => {
  it('lists each release with its commit and storage format, newest first', () => {
    expect(readChangelog(CHANGELOG)).toEqual([
      { version: '1.2.0', commit: undefined, storageFormat: 2 },
      { version: '1.1.0', commit: '0123456789abcdef0123456789abcdef01234567', storageFormat: 2 },
      { version: '1.0.0', commit: 'bbd7376046ba32133ce4aaa4fcc114432f5dd3a1', storageFormat: 1 },
    ]);
  });

  it('the previous release is the newest entry other than the running version, recorded or not yet', () => {
    const releases = readChangelog(CHANGELOG);
    expect(previousRelease(releases, '1.2.0')).toMatchObject({ version: '1.1.0', commit: '0123456789abcdef0123456789abcdef01234567' });
    expect(previousRelease(releases.slice(1), '1.1.0').version).toBe('1.0.0');
  });

  it('refuses a previous release without its commit, and a changelog with no earlier release', () => {
    expect(() => previousRelease(readChangelog(CHANGELOG), '1.3.0')).toThrow(/release 1.2.0 lacks its "- Commit: SHA" line/);
    expect(() => previousRelease(readChangelog(CHANGELOG).slice(2), '1.0.0')).toThrow(/no release other than 1.0.0/);
  });

  it('orders versions number by number', () => {
    expect(compareVersions('1.10.0', '1.9.0')).toBeGreaterThan(0);
    expect(compareVersions('0.1.0', '1.0.0')).toBeLessThan(0);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
  });
});
