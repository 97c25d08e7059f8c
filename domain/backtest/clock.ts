import { INTERVAL_MS, type Interval } from '../market/intervals';

/**
 * The virtual clock of a backtest (ARCHITECTURE §9). Step k (0-based: step 0 is the start) puts virtual time at
 * `start + k × interval`; a session has `floor((end − start) / interval)` steps after the start, and is complete
 * when step = total steps. Times are epoch milliseconds UTC.
 */

/** Steps of a session from `start` to `end` (ms) at `interval`: floor((end − start) / interval), never negative. */
export const totalSteps = (start: number, end: number, interval: Interval): number =>
  Math.max(0, Math.floor((end - start) / INTERVAL_MS[interval]));

/** Virtual time (ms) at step `k`: start + k × interval. */
export const virtualTimeAt = (start: number, interval: Interval, k: number): number =>
  start + k * INTERVAL_MS[interval];

/** Progress in percent, 2 decimal places (a number, like the spec's `progress_pct`). */
export const progressPct = (step: number, total: number): number =>
  total <= 0 ? 100 : Math.round((step / total) * 10_000) / 100;

/** The largest `steps` of one `step/batch` call (ARCHITECTURE §14b). */
export const MAX_BATCH_STEPS = 100_000;
