/**
 * From which hour on every project's hour totals (hour-totals.ts) are
 * whole: the history function writes totals, but release 1.1.0's does not,
 * and one runs beside the other during a `cdk deploy` and after a rollback.
 * The history function moves this past the present hour whenever it finds
 * the history position last written by a release that keeps no totals
 * (events before then may lack theirs); a table whose history began with
 * totals starts at the epoch. Usage reads the hours before it from the
 * events. Absent until the history function first ran: no hour is whole.
 *
 *   pk HISTORY_STREAM   sk HOUR_TOTALS_START   start: ISO 8601
 */
import { stringField, TYPE_ATTRIBUTE, type Item, type Key } from './fields.js';

export const HOUR_TOTALS_START_TYPE = 'hourTotalsStart';

export const hourTotalsStartKey: Key = { pk: 'HISTORY_STREAM', sk: 'HOUR_TOTALS_START' };

export const HOUR_TOTALS_START_ATTRIBUTE = 'start';

export const encodeHourTotalsStart = (start: number): Item => ({
  ...hourTotalsStartKey,
  [TYPE_ATTRIBUTE]: HOUR_TOTALS_START_TYPE,
  [HOUR_TOTALS_START_ATTRIBUTE]: new Date(start).toISOString(),
});

/** The hour from which totals are whole, in ms since the epoch. */
export const decodeHourTotalsStart = (item: Item): number => Date.parse(stringField(item, HOUR_TOTALS_START_ATTRIBUTE));
