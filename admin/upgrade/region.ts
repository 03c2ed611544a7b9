/**
 * What `placement-admin upgrade check` knows of a region in the middle of an
 * upgrade, and the next safe step (docs/operators/upgrade.md): the table's
 * storage format, the release each part of the region runs, the formats
 * each of those releases reads, and the multi-step changes in flight.
 */

/** GET /upgrade's answer (release 1.1.0 on). */
export interface UpgradeStatus {
  release: string;
  storage_format: { table: number; known: number[]; newest: number; finalized_at: string | null; finalized_by: string | null };
  /** The build of format 3's entries (release 1.2.0 on). */
  entries?: EntriesStatus;
  changes_in_flight: number;
}

export interface EntriesStatus {
  state: 'waiting' | 'building' | 'built';
  waiting_seconds: number | null;
  waiting_for: string | null;
  shards: number;
  shards_done: number;
  providers: number;
  entries: number;
  write_units: number;
}

/** One part of the region: a URL that answered, or a function of the stack. */
export interface Runner {
  /** A URL or a function name. */
  name: string;
  /** The release it runs; '1.0.0' for one that predates releases (no GET /upgrade, no PLACEMENT_RELEASE). */
  release: string;
  /** The formats its release reads, where it said (1.0.0: format 1 only). */
  known: number[];
  /** A function the deploy is still updating: it may serve either release. */
  updating?: boolean;
}

/** Release 1.0.0 knew no formats, and wrote and read format 1 only. */
export const FIRST_RELEASE: Omit<Runner, 'name'> = { release: '1.0.0', known: [1] };

export interface RegionState {
  /** The table's status, as the newest release that answered reports it. */
  status: UpgradeStatus;
  runners: Runner[];
}

export type NextStep =
  { kind: 'wait'; reason: string } | { kind: 'finalize'; to: number } | { kind: 'done'; reason: string } | { kind: 'refused'; reason: string };

const compareReleases = (a: string, b: string): number => {
  const [pa, pb] = [a, b].map((release) => release.split('.').map(Number));
  for (let index = 0; index < 3; index++) {
    const difference = (pa![index] ?? 0) - (pb![index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
};

/**
 * The next safe step: finalize only when every part of the region runs a
 * release that reads the format the finalize moves the table to.
 */
export function nextStep({ status, runners }: RegionState): NextStep {
  const { table, newest } = status.storage_format;
  const updating = runners.filter((runner) => runner.updating);
  if (updating.length > 0) return { kind: 'wait', reason: `${updating.length} function(s) are still being updated by the deploy: check again once it is done` };
  const unable = runners.filter((runner) => !runner.known.includes(table));
  if (unable.length > 0)
    return {
      kind: 'refused',
      reason: `${unable.map((runner) => `${runner.name} (release ${runner.release})`).join(', ')} cannot read storage format ${table}: deploy release ${status.release} or later there`,
    };
  if (table >= newest && (status.entries?.state ?? 'built') !== 'built') return { kind: 'finalize', to: newest };
  if (table >= newest) return { kind: 'done', reason: `the table is at storage format ${table}, the newest release ${status.release} writes` };
  const older = runners.filter((runner) => !runner.known.includes(newest));
  if (older.length > 0) {
    const releases = [...new Set(older.map((runner) => runner.release))].sort(compareReleases).join(', ');
    return {
      kind: 'wait',
      reason:
        `${older.length} of ${runners.length} still run release ${releases}, which cannot read storage format ${newest}: ` +
        'let the deploy finish (or finish it) and check again; rolling back is safe until the finalize',
    };
  }
  return { kind: 'finalize', to: newest };
}

/**
 * The formats a release reads, seen from `status` (the newest release that
 * answered): its own; release 1.0.0's; and for another release the rule
 * every release keeps, that it reads its own format and the one before, so
 * an older one does not read the format this one finalizes to.
 */
export function formatsOf(release: string, status: UpgradeStatus): number[] {
  if (release === status.release) return status.storage_format.known;
  if (release === FIRST_RELEASE.release) return FIRST_RELEASE.known;
  const newest = status.storage_format.newest;
  return compareReleases(release, status.release) < 0 ? status.storage_format.known.filter((format) => format < newest) : status.storage_format.known;
}
