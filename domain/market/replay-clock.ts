/**
 * The `files` source's replay clock (ARCHITECTURE §7: candles "time-shifted to now"). The historical data
 * window `[start, start + length)` is replayed at real speed, over and over: wall time `w` maps to replayed
 * time `start + ((w − start) mod length)`. `start` is the UTC midnight at or before the first candle and
 * `length` a whole number of days covering the last candle, so the shift between wall and replayed time is
 * always a whole number of days: replayed hours and days begin exactly when wall-clock hours and days do, and
 * the mapping is the same after a restart (no state). When the window wraps, prices jump from the end of the
 * data back to its start.
 */
export interface ReplayWindow {
  /** First replayed instant (ms, UTC midnight). */
  start: number;
  /** Window length (ms, whole days). */
  length: number;
}

const DAY = 86_400_000;

/** The replay window covering data from `firstOpen` (ms) to `lastEnd` (ms, exclusive end of the last candle). */
export const replayWindow = (firstOpen: number, lastEnd: number): ReplayWindow => {
  const start = Math.floor(firstOpen / DAY) * DAY;
  const end = Math.ceil(lastEnd / DAY) * DAY;
  return { start, length: Math.max(DAY, end - start) };
};

/** Replayed time (ms) at wall time `wallMs`. */
export const replayTime = (window: ReplayWindow, wallMs: number): number => {
  const offset = (((wallMs - window.start) % window.length) + window.length) % window.length;
  return window.start + offset;
};

/** The constant `wall − replayed` (ms) at wall time `wallMs`: a whole number of days. */
export const replayShift = (window: ReplayWindow, wallMs: number): number =>
  wallMs - replayTime(window, wallMs);
