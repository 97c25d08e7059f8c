import { compareNormalized } from './decimal';
import { INTERVAL_MS, type Interval } from './intervals';

/**
 * One OHLCV candle (spec "Market records: Candle"). Prices and volumes are normalized 8-decimal strings
 * (see `decimal.ts`), times are epoch milliseconds UTC. The candle covers `[openTime, openTime + interval)`;
 * Binance's `close_time` is `openTime + interval − 1`.
 */
export interface Candle {
  openTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
  /** Base-asset volume. */
  volume: string;
  /** Quote-asset (USDT) volume; `null` when the source did not carry Binance's column 8. */
  quoteVolume: string | null;
  /** Number of trades; `null` when the source did not carry Binance's column 9. */
  tradeCount: number | null;
}

/** Binance's `close_time` of a candle: the last millisecond it covers. */
export const closeTimeOf = (openTime: number, interval: Interval): number =>
  openTime + INTERVAL_MS[interval] - 1;

const ZERO = '0.00000000';
const nonPositive = (v: string) => v === ZERO || v.startsWith('-');
const firstNonPositive = (c: Candle): 'open' | 'high' | 'low' | 'close' | undefined =>
  nonPositive(c.open)
    ? 'open'
    : nonPositive(c.high)
      ? 'high'
      : nonPositive(c.low)
        ? 'low'
        : nonPositive(c.close)
          ? 'close'
          : undefined;

/**
 * The rule a candle breaks, or `undefined` when it is consistent: prices positive, volume not negative,
 * `low ≤ open, close ≤ high` (so also `high ≥ low`), open time aligned to the interval.
 */
export const candleProblem = (c: Candle, interval: Interval): string | undefined => {
  if (!Number.isSafeInteger(c.openTime) || c.openTime < 0) return 'open_time is not a valid epoch time';
  if (c.openTime % INTERVAL_MS[interval] !== 0) {
    return `open_time ${new Date(c.openTime).toISOString()} is not aligned to the ${interval} interval`;
  }
  const bad = firstNonPositive(c);
  if (bad) return `${bad} must be positive, got ${c[bad]}`;
  if (c.volume.startsWith('-')) return `volume must not be negative, got ${c.volume}`;
  if (c.quoteVolume?.startsWith('-')) return `quote_volume must not be negative, got ${c.quoteVolume}`;
  if (c.tradeCount !== null && (!Number.isSafeInteger(c.tradeCount) || c.tradeCount < 0)) {
    return `trade_count must be a non-negative integer, got ${c.tradeCount}`;
  }
  if (compareNormalized(c.high, c.low) < 0) return `high ${c.high} < low ${c.low}`;
  if (compareNormalized(c.open, c.low) < 0 || compareNormalized(c.open, c.high) > 0) {
    return `open ${c.open} outside [low ${c.low}, high ${c.high}]`;
  }
  if (compareNormalized(c.close, c.low) < 0 || compareNormalized(c.close, c.high) > 0) {
    return `close ${c.close} outside [low ${c.low}, high ${c.high}]`;
  }
  return undefined;
};

/** True when two candles carry the same values (used to tell a harmless re-import from a conflict). */
export const sameCandle = (a: Candle, b: Candle): boolean =>
  a.openTime === b.openTime &&
  a.open === b.open &&
  a.high === b.high &&
  a.low === b.low &&
  a.close === b.close &&
  a.volume === b.volume &&
  (a.quoteVolume === null || b.quoteVolume === null || a.quoteVolume === b.quoteVolume) &&
  (a.tradeCount === null || b.tradeCount === null || a.tradeCount === b.tradeCount);

/** Index of the first candle with `openTime >= time` in a sorted array (binary search). */
export const lowerBound = (candles: readonly Candle[], time: number): number => {
  let lo = 0;
  let hi = candles.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (candles[mid]!.openTime < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};
