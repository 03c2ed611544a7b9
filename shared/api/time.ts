/**
 * The one reader of the times a request or a placement-admin command takes
 * (`since`, `until`): ISO 8601 with a date, a time and an offset or Z, as
 * 2026-11-26T17:00:00Z or 2026-11-26T18:00:00.5+01:00.
 *
 * date-fns' parseISO reads it and checks each part against the calendar
 * (month 13, November 31st, February 29th of 2026, hour 25 and second 60
 * are no times). luxon checks as much and explains more, but it would add
 * 70 KB to every request-path bundle where date-fns' parser adds 3 (the
 * bundles' size target, docs/operators/deploy.md). What date-fns leaves to
 * its caller is checked here: an offset must be given (a time without one
 * would be read in the server's zone) and be one (up to 23:59 either way;
 * date-fns takes -25:00 for 25 hours).
 */
import { isValid, parseISO } from 'date-fns';

export type ParsedTime = { time: Date; problem?: undefined } | { time?: undefined; problem: string };

const EXAMPLE = 'e.g. 2026-11-26T17:00:00Z';
/**
 * A date of a four-digit year (ISO 8601's expanded years, ±YYYYYY, are for those who agree on them, and reach past
 * what a JavaScript Date holds), `T`, a time, and the offset: Z, or ±hh with :mm or mm.
 */
const SHAPE = /^\d{4}[^T]*T[^T]+?(?:Z|[+-](\d{2})(?::?(\d{2}))?)$/;

export function parseTime(text: string): ParsedTime {
  const shape = SHAPE.exec(text);
  if (shape === null) return { problem: `not an ISO 8601 date and time with Z or an offset (${EXAMPLE})` };
  const [, hours, minutes] = shape;
  if (Number(hours ?? 0) > 23 || Number(minutes ?? 0) > 59) return { problem: `its offset is beyond ±23:59 (${EXAMPLE})` };
  const time = parseISO(text);
  if (!isValid(time)) return { problem: `no such date and time (${EXAMPLE})` };
  return { time };
}
