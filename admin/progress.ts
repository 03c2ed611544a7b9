/**
 * Progress of a long tool run on stderr (stdout may carry the tool's data):
 * on a terminal one bar per phase redrawn in place, with counts and an
 * estimate of the time left; elsewhere (a log, CI) a plain line every few
 * seconds and one when the phase ends.
 */
import { SingleBar } from 'cli-progress';

export interface Phase {
  /** One more item done. */
  tick(count?: number): void;
  /** The phase is over; prints its closing line. */
  done(): void;
}

export type ProgressReporter = (name: string, total: number) => Phase;

const PLAIN_EVERY_MS = 5000;

/** Phases drawn on `stream` (stderr by default); `quiet` reports nothing. */
export function progressReporter({ quiet = false, stream = process.stderr }: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): ProgressReporter {
  return (name, total) => {
    if (quiet) return { tick() {}, done() {} };
    const terminal = stream.isTTY === true;
    const bar = new SingleBar({
      stream,
      format: terminal
        ? `${name.padEnd(28)} [{bar}] {value}/{total} {percentage}% | {duration_formatted} elapsed, ETA {eta_formatted}`
        : `${name}: {value}/{total} ({percentage}%), {duration_formatted} elapsed, ETA {eta_formatted}`,
      noTTYOutput: true,
      notTTYSchedule: PLAIN_EVERY_MS,
      etaBuffer: 200,
      hideCursor: terminal,
      barsize: 30,
    });
    bar.start(total, 0);
    return {
      tick: (count = 1) => bar.increment(count),
      done: () => bar.stop(),
    };
  };
}
