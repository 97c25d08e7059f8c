import type { Candle } from '../market/candle';
import { toUnitsNumber } from '../market/decimal';
import { findGapsInTimes, type Gap } from '../market/gaps';
import { INTERVAL_MS, type Interval } from '../market/intervals';
import { type Dec, dec } from '../trading/decimal';
import type { PairFilters } from '../trading/quantity';

/**
 * The market of one backtest session (ARCHITECTURE §9): for each pair the candles at the session's interval up to
 * its end, held as columns — open times and prices in integer 1e-8 units (typed arrays, which the stepping loop
 * reads and which worker threads share without copying) — with candle objects made on demand, only for what a
 * decision or a response shows (issue 24: no candle object per candle of a window). Visibility is the rule of the
 * whole sandbox: at virtual time T only candles with `openTime + interval ≤ T` (closed by T) exist; the current
 * price of a pair is the close of its last closed candle, forward-filled across gaps.
 */
export interface SeriesData {
  /** Open times (ms), ascending. Its length is the number of candles. */
  openTime: Float64Array;
  /** Prices in integer 1e-8 units (safe integers), one per candle. */
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
  /** Candle `i` as a candle object (made on each call; equal to the stored candle). */
  candleAt(i: number): Candle;
  /** Base volume of candle `i`, 8-decimal text (the print a resting order's fill takes its share of). */
  volumeAt(i: number): string;
  /**
   * Quote volume of candle `i` in 1e-16 USDT: its quote volume (units × 1e8) when the source carried it, else
   * volume units × close units (the hourly files lack Binance's column 8).
   */
  quoteUnitsAt(i: number): bigint;
}

export interface PairSeries extends SeriesData {
  symbol: string;
  /** The pair's filters as the wallet decider reads them (always `active` in a backtest: it traded then). */
  filters: PairFilters;
  /**
   * Number of candles of the session's whole window (history included), as `BacktestStarted` records it. With a
   * {@link MarketWindow} the arrays hold only the resident part of them: index with `openTime.length`.
   */
  length: number;
  /** Open time (ms) of the window's first and last candle; undefined without candles. */
  firstOpenTime: number | undefined;
  lastOpenTime: number | undefined;
  /** Candles missing between the window's first and last candle, at the session's interval. */
  gaps: readonly Gap[];
  /**
   * The pair's part of a market read in chunks ({@link MarketWindow}): its arrays hold one chunk of its window and
   * move on their own, so a step walks and reads only the pairs it needs (issue 24). Absent: the whole window.
   */
  window?: PairWindow;
}

/**
 * The resident chunk of one pair of a chunked market (issue 24, `docs/architecture.md`, "Backtests"): its arrays
 * (and every index into them) belong to one position; a read at virtual time `at` first makes sure it covers `at`
 * ({@link seriesAt}), and a loop holding indices across steps re-reads them when `generation` changes.
 */
export interface PairWindow {
  /** Changes whenever the pair's arrays change: indices into them are valid for one generation. */
  readonly generation: number;
  /** Every candle with open time ≥ this (ms) up to the window's end is in the arrays; before it at most one. */
  readonly completeFrom: number;
  /** True when the arrays serve every read at any virtual time in [from, to] (ms). */
  covers(from: number, to: number): boolean;
  /**
   * Makes the arrays those serving virtual time `at` and the interval after it. False when they cannot be had
   * synchronously (a worker thread asks for them, then tries again); the arrays are then unchanged.
   */
  moveTo(at: number): boolean;
  /**
   * True when a single read at `at` is better served by one candle from the store than by reading the chunk: the
   * chunk is not at hand and has been read this way only a few times (after that, reading the chunk is cheaper).
   */
  prefersPointRead(at: number): boolean;
}

/**
 * The candles a session market holds at a time (issue 24 item 3, `docs/architecture.md`, "Backtests"): a chunk of
 * the window around the virtual clock per pair ({@link PairWindow}, each pair moving on its own) instead of the
 * whole window. These members act on every pair at once (a read of every pair at one time: {@link positionAt}).
 */
export interface MarketWindow {
  /** Changes whenever any pair's arrays change. */
  readonly generation: number;
  /** True when every pair's arrays serve every read at any virtual time in [from, to] (ms). */
  covers(from: number, to: number): boolean;
  /** Moves every pair to virtual time `at` (see {@link PairWindow.moveTo}); false when one could not be had. */
  moveTo(at: number): boolean;
  /** True when {@link MarketWindow.history} can read the candle store (on the request thread, not a worker's). */
  readonly readsStore: boolean;
  /**
   * Candles of `symbol` with open time in [from, to] (inclusive; `to` already bounded by the virtual time), read
   * from the candle store: what `closedCandlesBetween` answers for history before `completeFrom`.
   */
  history(symbol: string, from: number, to: number, page?: { limit: number; newest: boolean }): Candle[];
}

export interface SessionMarket {
  interval: Interval;
  intervalMs: number;
  /** Sorted by symbol: the order pairs are processed in within a step. */
  series: PairSeries[];
  bySymbol: ReadonlyMap<string, PairSeries>;
  /** The resident chunk, when the series hold only part of the window (absent: the whole window is held). */
  window?: MarketWindow;
}

/**
 * Makes every pair's arrays of `market` serve reads at virtual time `at` (a no-op without a window or when they
 * already do): for reads of every pair at once (the prices of a battle, the final prices). Throws when a chunk is
 * not at hand (only a worker thread's market can lack one, and its stepping loop fetches chunks before it reads).
 */
export const positionAt = (market: SessionMarket, at: number): void => {
  for (const s of market.series) seriesAt(s, at);
};

/**
 * Makes one pair's arrays serve reads at virtual time `at` (see {@link positionAt}). Every read of a pair at a
 * virtual time goes through it, so sessions sharing one market at different clocks each read their own candles,
 * and a read of one pair moves only that pair's chunk.
 */
export const seriesAt = (s: PairSeries, at: number): void => {
  const w = s.window;
  if (!w || w.covers(at, at)) return;
  if (!w.moveTo(at)) throw new Error(`the ${s.symbol} candles of virtual time ${at} are not resident`);
};

/**
 * A generator that makes every pair of `market` resident at `at`, pausing (yielding) while a worker thread fetches
 * a chunk it lacks: what a stepping loop runs before it reads every pair (the final prices of a completing session).
 */
export function* residentAt(market: SessionMarket, at: number): Generator<void, void, void> {
  for (const s of market.series) {
    const w = s.window;
    while (w && !w.covers(at, at) && !w.moveTo(at)) yield;
  }
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

const UNIT = 100_000_000n;

/**
 * Series data over candle objects already in memory (tests, benchmarks, sources without columns): the prices
 * parsed to units once; the objects themselves are what `candleAt` answers.
 */
export const seriesOfCandles = (candles: readonly Candle[]): SeriesData => {
  const n = candles.length;
  const data = {
    openTime: new Float64Array(n),
    open: new Float64Array(n),
    high: new Float64Array(n),
    low: new Float64Array(n),
    close: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    const c = candles[i]!;
    data.openTime[i] = c.openTime;
    data.open[i] = unitsOf(c.open);
    data.high[i] = unitsOf(c.high);
    data.low[i] = unitsOf(c.low);
    data.close[i] = unitsOf(c.close);
  }
  return {
    ...data,
    candleAt: (i) => candles[i]!,
    volumeAt: (i) => candles[i]!.volume,
    quoteUnitsAt: (i) => {
      const c = candles[i]!;
      if (c.quoteVolume !== null) return BigInt(c.quoteVolume.replace('.', '')) * UNIT;
      return BigInt(c.volume.replace('.', '')) * BigInt(data.close[i]!);
    },
  };
};

/**
 * Builds a session market from each pair's filters and its candles — as columns (`data`: what the market source
 * gives, no candle objects) or as candle objects (`candles`: tests and benchmarks) — sorted by open time, at
 * `interval`.
 */
export const buildSessionMarket = (
  interval: Interval,
  pairs: readonly (
    | { filters: PairFilters; data: SeriesData; candles?: undefined }
    | { filters: PairFilters; candles: readonly Candle[]; data?: undefined }
  )[],
): SessionMarket => {
  const series = pairs
    .map(({ filters, candles, data }): PairSeries => {
      const d = data ?? seriesOfCandles(candles!);
      const n = d.openTime.length;
      return {
        symbol: filters.symbol,
        filters: { ...filters, status: 'active' },
        length: n,
        firstOpenTime: n ? d.openTime[0] : undefined,
        lastOpenTime: n ? d.openTime[n - 1] : undefined,
        gaps: findGapsInTimes(d.openTime, interval),
        openTime: d.openTime,
        open: d.open,
        high: d.high,
        low: d.low,
        close: d.close,
        candleAt: d.candleAt,
        volumeAt: d.volumeAt,
        quoteUnitsAt: d.quoteUnitsAt,
      };
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
  if (s.window && !s.window.covers(at, at)) {
    // A pair not resident at `at` (a price of every pair in a step response): one candle from the store rather
    // than the pair's whole chunk. The same candle: the last one closed by `at` within the window.
    if (market.window?.readsStore && s.window.prefersPointRead(at)) {
      return market.window.history(symbol, 0, at - market.intervalMs, { limit: 1, newest: true })[0];
    }
    seriesAt(s, at);
  }
  const i = lastClosedIndex(s, market.intervalMs, at);
  return i >= 0 ? s.candleAt(i) : undefined;
};

/**
 * Candles of `symbol` closed by `at` with open time in [from, to] (inclusive), oldest first; with `page`, only the
 * first (`newest: false`) or last (`newest: true`) `page.limit` of them — the objects are made for those only.
 */
export const closedCandlesBetween = (
  market: SessionMarket,
  symbol: string,
  at: number,
  from: number,
  to: number,
  page?: { limit: number; newest: boolean },
): Candle[] => {
  const s = market.bySymbol.get(symbol);
  if (!s) return [];
  seriesAt(s, at);
  let hi = Math.min(closedCount(s, market.intervalMs, at), lowerBound(s.openTime, to + 1));
  let lo = lowerBound(s.openTime, from);
  const w = market.window;
  if (w && s.window && from < s.window.completeFrom) {
    // Older history than the resident chunk holds: read from the store, unless the newest page is resident.
    const complete = lowerBound(s.openTime, s.window.completeFrom);
    if (!(page?.newest && hi - complete >= page.limit)) {
      return w.history(symbol, from, Math.min(to, at - market.intervalMs), page);
    }
  }
  if (page && hi - lo > page.limit) {
    if (page.newest) lo = hi - Math.max(0, page.limit);
    else hi = lo + Math.max(0, page.limit);
  }
  const out: Candle[] = [];
  for (let i = lo; i < hi; i++) out.push(s.candleAt(i));
  return out;
};

const DAY_MS = 86_400_000;

/**
 * 24h quote volume (USDT) of `symbol` at `at`: Σ over the candles closed in (at − 24h, at] of the quote volume,
 * or volume × close when a candle has none. The slippage model's denominator in a backtest; undefined without
 * a candle in the window. Summed over the window when asked (at most a day of candles: 1,440 at 1m), so no
 * per-candle table is kept for the whole series.
 */
export const quoteVolume24h = (market: SessionMarket, symbol: string, at: number): Dec | undefined => {
  const s = market.bySymbol.get(symbol);
  if (!s) return undefined;
  seriesAt(s, at);
  const hi = closedCount(s, market.intervalMs, at);
  const lo = closedCount(s, market.intervalMs, at - DAY_MS);
  if (hi <= lo) return undefined;
  let sum = 0n;
  for (let i = lo; i < hi; i++) sum += s.quoteUnitsAt(i);
  // units² (1e-16) → USDT with 8 places, rounded down.
  return dec((sum / UNIT).toString()).div(100_000_000);
};
