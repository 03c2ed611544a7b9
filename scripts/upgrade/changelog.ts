/**
 * Reads CHANGELOG.md's releases (newest first): `## VERSION …` headings, each
 * with a `- Commit: SHA` line (an entry not released yet has none) and a
 * `- Storage format: N …` line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Release {
  version: string;
  /** Absent while the entry is not released yet. */
  commit?: string;
  storageFormat?: number;
}

/** Every release the changelog records, in its order (newest first). */
export function readChangelog(text: string): Release[] {
  return text
    .split(/^## /m)
    .slice(1)
    .map((section) => {
      const version = section.split(/\s/, 1)[0]!;
      const commit = /^- Commit: ([0-9a-f]{7,40})\b/m.exec(section)?.[1];
      const storageFormat = /^- Storage format: (\d+)\b/m.exec(section)?.[1];
      return { version, commit, storageFormat: storageFormat === undefined ? undefined : Number(storageFormat) };
    });
}

/** The release before `version`: the newest one recorded that is not `version` itself (which may not be released yet). */
export function previousRelease(releases: Release[], version: string): Release & { commit: string } {
  const previous = releases.find((release) => release.version !== version);
  if (previous === undefined) throw new Error(`CHANGELOG.md records no release other than ${version}`);
  if (previous.commit === undefined) throw new Error(`CHANGELOG.md: release ${previous.version} lacks its "- Commit: SHA" line`);
  return { ...previous, commit: previous.commit };
}

/** Orders dotted version numbers (1.10.0 after 1.9.0): negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const [left, right] = [a, b].map((version) => version.split('.').map(Number));
  for (let index = 0; index < Math.max(left!.length, right!.length); index++) {
    const difference = (left![index] ?? 0) - (right![index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** A checkout's version (its package.json) and the release before it (its CHANGELOG.md). */
export function checkoutReleases(root: string): { newVersion: string; release: Release & { commit: string } } {
  const newVersion = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  return { newVersion, release: previousRelease(readChangelog(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')), newVersion) };
}
