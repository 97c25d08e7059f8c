import type { Candle } from '../market/candle';
import { toUnitsNumber } from '../market/decimal';
import { INTERVAL_MS, type Interval } from '../market/intervals';
import { type Dec, dec } from '../trading/decimal';
import type { PairFilters } from '../trading/quantity';

/**
 * The market of one backtest session, in memory (ARCHITECTURE §9: candles loaded at start): for each pair the
 * candles at the session's interval up to its end, with their prices also as integer 1e-8 units in typed arrays
 * for the stepping loop. Visibility is the rule of the whole sandbox: at virtual time T only candles with
 * `openTime + interval ≤ T` (closed by T) exist; the current price of a pair is the close of its last closed
 * candle, forward-filled across gaps.
 */
export interface PairSeries {
  symbol: string;
  /** The pair's filters as the wallet decider reads them (always `active` in a backtest: it traded then). */
  filters: PairFilters;
  candles: readonly Candle[];
  openTime: Float64Array;
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
  /** Lazily built prefix sums of quote volume (units × 1e8, bigint) for the 24h window. */
  quotePrefix?: bigint[];
}

export interface SessionMarket {
  interval: Interval;
  intervalMs: number;
  /** Sorted by symbol: the order pairs are processed in within a step. */
  series: PairSeries[];
  bySymbol: ReadonlyMap<string, PairSeries>;
}

/** Integer 1e-8 units of a normalized 8-decimal string (fast path), else of any decimal string. */
export const unitsOf = (value: string): number => {
  const dot = value.length - 9;
  if (dot > 0 && value.charCodeAt(dot) === 46) {
    const n = Number(value.slice(0, dot) + value.slice(dot + 1));
    if (Number.isSafeInteger(n)) return n;
  }
  return toUnitsNumber(value);
};

/** A pair's prices already in integer 1e-8 units, one per candle (what the candle store holds): no parsing. */
export interface SeriesUnits {
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
}

/**
 * Builds a session market from each pair's filters and candles (sorted by open time, at `interval`). `units`, when
 * given, are the candles' prices in 1e-8 units (they must equal the candles' strings); otherwise they are parsed.
 */
export const buildSessionMarket = (
  interval: Interval,
  pairs: readonly { filters: PairFilters; candles: readonly Candle[]; units?: SeriesUnits }[],
): SessionMarket => {
  const series = pairs
    .map(({ filters, candles, units }): PairSeries => {
      if (units) {
        return {
          symbol: filters.symbol,
          filters: { ...filters, status: 'active' },
          candles,
          openTime: Float64Array.from(candles, (c) => c.openTime),
          ...units,
        };
      }
      const n = candles.length;
      const s: PairSeries = {
        symbol: filters.symbol,
        filters: { ...filters, status: 'active' },
        candles,
        openTime: new Float64Array(n),
        open: new Float64Array(n),
        high: new Float64Array(n),
        low: new Float64Array(n),
        close: new Float64Array(n),
      };
      for (let i = 0; i < n; i++) {
        const c = candles[i]!;
        s.openTime[i] = c.openTime;
        s.open[i] = unitsOf(c.open);
        s.high[i] = unitsOf(c.high);
        s.low[i] = unitsOf(c.low);
        s.close[i] = unitsOf(c.close);
      }
      return s;
    })
    .sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  return {
    interval,
    intervalMs: INTERVAL_MS[interval],
    series,
    bySymbol: new Map(series.map((s) => [s.symbol, s])),
  };
};

/** Index of the first candle with open time ≥ `time`. */
const lowerBound = (times: Float64Array, time: number): number => {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/** Number of candles of `s` closed by `at` (= index of the first candle not yet closed). */
export const closedCount = (s: PairSeries, intervalMs: number, at: number): number =>
  lowerBound(s.openTime, at - intervalMs + 1);

/** Index of the last candle of `s` closed by `at`, or −1 before its first. */
export const lastClosedIndex = (s: PairSeries, intervalMs: number, at: number): number =>
  closedCount(s, intervalMs, at) - 1;

/** The last candle of `s` closed by `at` (the forward-filled current candle), or undefined. */
export const lastClosed = (market: SessionMarket, symbol: string, at: number): Candle | undefined => {
  const s = market.bySymbol.get(symbol);
  if (!s) return undefined;
  const i = lastClosedIndex(s, market.intervalMs, at);
  return i >= 0 ? s.candles[i] : undefined;
};

/** Candles of `symbol` closed by `at` with open time in [from, to] (inclusive), oldest first. */
export const closedCandlesBetween = (
  market: SessionMarket,
  symbol: string,
  at: number,
  from: number,
  to: number,
): readonly Candle[] => {
  const s = market.bySymbol.get(symbol);
  if (!s) return [];
  const hi = Math.min(closedCount(s, market.intervalMs, at), lowerBound(s.openTime, to + 1));
  const lo = lowerBound(s.openTime, from);
  return lo < hi ? s.candles.slice(lo, hi) : [];
};

const DAY_MS = 86_400_000;
const UNIT = 100_000_000n;

const quoteUnits = (c: Candle): bigint => {
  // Quote volume when the source carried it; else base volume × close (the hourly files lack column 8).
  if (c.quoteVolume !== null) return BigInt(c.quoteVolume.replace('.', '')) * UNIT;
  return BigInt(c.volume.replace('.', '')) * BigInt(unitsOf(c.close));
};

/**
 * 24h quote volume (USDT) of `symbol` at `at`: Σ over the candles closed in (at − 24h, at] of the quote volume,
 * or volume × close when a candle has none. The slippage model's denominator in a backtest; undefined without
 * a candle in the window.
 */
export const quoteVolume24h = (market: SessionMarket, symbol: string, at: number): Dec | undefined => {
  const s = market.bySymbol.get(symbol);
  if (!s) return undefined;
  if (!s.quotePrefix) {
    const prefix: bigint[] = new Array(s.candles.length + 1);
    prefix[0] = 0n;
    for (let i = 0; i < s.candles.length; i++) prefix[i + 1] = prefix[i]! + quoteUnits(s.candles[i]!);
    s.quotePrefix = prefix;
  }
  const hi = closedCount(s, market.intervalMs, at);
  const lo = closedCount(s, market.intervalMs, at - DAY_MS);
  if (hi <= lo) return undefined;
  const sum = s.quotePrefix[hi]! - s.quotePrefix[lo]!;
  // units² (1e-16) → USDT with 8 places, rounded down.
  return dec((sum / UNIT).toString()).div(100_000_000);
};
