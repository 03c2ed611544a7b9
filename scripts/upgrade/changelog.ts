/**
 * Reads CHANGELOG.md's releases (newest first): `## VERSION` headings, each
 * with a `- Commit: SHA` line and a `- Storage format: N` line.
 */

export interface Release {
  version: string;
  commit: string;
  storageFormat: number;
}

/** Every release the changelog records, in its order (newest first); a release without its commit is an error. */
export function readChangelog(text: string): Release[] {
  const releases: Release[] = [];
  const sections = text.split(/^## /m).slice(1);
  for (const section of sections) {
    const version = section.slice(0, section.indexOf('\n')).trim();
    const commit = /^- Commit: ([0-9a-f]{7,40})\s*$/m.exec(section)?.[1];
    const storageFormat = /^- Storage format: (\d+)\s*$/m.exec(section)?.[1];
    if (commit === undefined || storageFormat === undefined) {
      throw new Error(`CHANGELOG.md: release ${version} lacks its "- Commit: SHA" or "- Storage format: N" line`);
    }
    releases.push({ version, commit, storageFormat: Number(storageFormat) });
  }
  return releases;
}

/** The release before `version`: the newest one recorded that is not `version` itself (which may not be released yet). */
export function previousRelease(releases: Release[], version: string): Release {
  const previous = releases.find((release) => release.version !== version);
  if (previous === undefined) throw new Error(`CHANGELOG.md records no release other than ${version}`);
  return previous;
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
