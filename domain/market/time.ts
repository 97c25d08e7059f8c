/**
 * Timestamp formatting for market data (spec conventions: ISO 8601 in UTC; `/market/price` with microsecond
 * precision).
 */

/** ISO 8601 UTC with milliseconds, e.g. `2024-01-05T12:00:00.000Z`. */
export const isoMillis = (ms: number): string => new Date(Math.floor(ms)).toISOString();

/**
 * ISO 8601 UTC with microseconds, e.g. `2024-01-05T12:00:00.123456Z`. `ms` may carry a fraction (microseconds
 * below the millisecond); it is rounded to whole microseconds (a double holds about 0.25 µs at today's epoch).
 */
export const isoMicros = (ms: number): string => {
  const wholeMs = Math.floor(ms);
  const micros = Math.min(999, Math.round((ms - wholeMs) * 1000));
  return `${new Date(wholeMs).toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
};

const DATE = /^\s*(\d{4})-(\d{2})-(\d{2})/;

/** True when the leading `YYYY-MM-DD` of `text` names a real calendar day (month 1–12, day within the month). */
const realCalendarDay = (text: string): boolean => {
  const m = DATE.exec(text);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
};

/**
 * Parses an ISO 8601 timestamp to epoch ms; `undefined` when it is not a valid date. A value without a zone
 * designator is read as UTC (the spec's timestamps are UTC). A day that does not exist is refused rather than
 * left to `Date.parse`, which would roll `2022-02-30` over into `2022-03-02`.
 */
export const parseIsoTime = (value: string): number | undefined => {
  const text = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(text)) {
    return undefined;
  }
  if (!realCalendarDay(text)) return undefined;
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  const withTime = text.length === 10 ? `${text}T00:00:00` : text.replace(' ', 'T');
  const ms = Date.parse(hasZone ? withTime : `${withTime}Z`);
  return Number.isNaN(ms) ? undefined : ms;
};
