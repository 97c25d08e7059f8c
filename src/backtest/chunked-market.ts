import type { MarketWindow, PairSeries, SessionMarket } from '../../domain/backtest/market';
import type { Candle } from '../../domain/market/candle';
import type { Gap } from '../../domain/market/gaps';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import type { PairFilters } from '../../domain/trading/quantity';
import { type SharedSeriesColumns, seriesOfShared } from './shared-series';

/** The history a read at a virtual time may need before it: the 24 hours of `quoteVolume24h` and one interval. */
const DAY_MS = 86_400_000;

/**
 * What a chunked session market knows of one pair without holding its candles (sorted by symbol, as the series):
 * its filters and its whole window's count, first and last open time and gaps (as `BacktestStarted` and the start
 * response report them).
 */
export interface ChunkedPair {
  filters: PairFilters;
  length: number;
  firstOpenTime: number | undefined;
  lastOpenTime: number | undefined;
  gaps: Gap[];
}

/**
 * The open-time range `[from, to)` (ms) of chunk `c` of a session window (issue 24 item 3): chunk `c` serves every
 * read at a virtual time in `[c × span, (c + 1) × span + interval]` — the candles closed by then (open time below
 * `(c + 1) × span + interval`), the 24 hours before its start (the 24h quote volume, the ticker) — and is read
 * with the last candle before `from` (the forward-filled price across a gap). Chunks are numbered from the epoch,
 * so sessions over the same pairs, interval and end share them whatever their start. `end`: the session's end; no
 * candle closing after it is read.
 */
export const chunkRange = (
  c: number,
  spanCandles: number,
  interval: Interval,
  end: number,
): { from: number; to: number } => {
  const ms = INTERVAL_MS[interval];
  const span = spanCandles * ms;
  return { from: c * span - DAY_MS - ms, to: Math.min((c + 1) * span + ms, end - ms + 1) };
};

/** The most candles a chunk of `spanCandles` holds per pair at `interval` (ahead, the day before, 3 more). */
export const chunkCandlesBound = (spanCandles: number, interval: Interval): number =>
  spanCandles + Math.ceil(DAY_MS / INTERVAL_MS[interval]) + 3;

/** How a chunked market gets its chunks and its history (the request thread's candle store, or a worker's cache). */
export interface ChunkSource {
  /** Chunk `c`'s columns of the `i`-th pair (pairs sorted by symbol); undefined when not at hand synchronously. */
  chunk(c: number, i: number): SharedSeriesColumns | undefined;
  /** True when chunk `c` of the `i`-th pair is at hand without reading the store. */
  held?(c: number, i: number): boolean;
  /**
   * True when the `i`-th pair's last candle closed by virtual time `at` is at hand without reading the store (a
   * stepping thread read it at a batch's end): a point read of it costs nothing, so it is not counted against the
   * chunk (`prefersPointRead`).
   */
  pointAtHand?(at: number, i: number): boolean;
  /** Candles of `symbol` with open time in [from, to] (see `MarketWindow.history`); absent off the request thread. */
  history?(symbol: string, from: number, to: number, page?: { limit: number; newest: boolean }): Candle[];
}

const EMPTY = new Float64Array(0);

/** Single reads of a pair at one chunk answered from the store before the chunk itself is read (see `prefersPointRead`). */
const POINT_READS_PER_CHUNK = 16;

const notResident = () => {
  throw new Error('no chunk of the session window is resident');
};

/**
 * A session market that holds one chunk of its window at a time per pair (issue 24 item 3; `docs/architecture.md`,
 * "Backtests"): each series' arrays are the current chunk's shared columns of that pair, replaced when a read or a
 * step of that pair moves past it (`PairWindow`); a pair nothing reads is never read from the store. Memory is at
 * most one chunk per pair per market, whatever the window's length. `pairs` sorted by symbol; `spanCandles` candles
 * of `interval` per chunk ahead of its start.
 */
export const chunkedMarket = (
  interval: Interval,
  pairs: readonly ChunkedPair[],
  spanCandles: number,
  source: ChunkSource,
): SessionMarket => {
  const ms = INTERVAL_MS[interval];
  const span = spanCandles * ms;
  let generation = 0;
  const series: PairSeries[] = pairs.map((p, i) => {
    let current: number | undefined;
    let pairGeneration = 0;
    let pointReadChunk: number | undefined;
    let pointReads = 0;
    const s: PairSeries = {
      symbol: p.filters.symbol,
      filters: { ...p.filters, status: 'active' },
      length: p.length,
      firstOpenTime: p.firstOpenTime,
      lastOpenTime: p.lastOpenTime,
      gaps: p.gaps,
      openTime: EMPTY,
      open: EMPTY,
      high: EMPTY,
      low: EMPTY,
      close: EMPTY,
      candleAt: notResident,
      volumeAt: notResident,
      quoteUnitsAt: notResident,
      window: {
        get generation() {
          return pairGeneration;
        },
        get completeFrom() {
          return current === undefined ? Number.POSITIVE_INFINITY : current * span - DAY_MS - ms;
        },
        covers: (from, to) =>
          current !== undefined && from >= current * span && to <= (current + 1) * span + ms,
        moveTo(at) {
          const c = Math.floor(at / span);
          if (c === current) return true;
          const columns = source.chunk(c, i);
          if (!columns) return false;
          const data = seriesOfShared(columns);
          s.openTime = data.openTime;
          s.open = data.open;
          s.high = data.high;
          s.low = data.low;
          s.close = data.close;
          s.candleAt = data.candleAt;
          s.volumeAt = data.volumeAt;
          s.quoteUnitsAt = data.quoteUnitsAt;
          current = c;
          pairGeneration++;
          generation++;
          return true;
        },
        prefersPointRead(at) {
          const c = Math.floor(at / span);
          if (source.held?.(c, i)) return false;
          if (source.pointAtHand?.(at, i)) return true;
          if (pointReadChunk !== c) {
            pointReadChunk = c;
            pointReads = 0;
          }
          // Sessions sharing the market each answer a batch here (a point read each); one stepping a step at a
          // time reads the same chunk over and over: after a few point reads, the chunk is the cheaper answer.
          return ++pointReads <= POINT_READS_PER_CHUNK;
        },
      },
    };
    return s;
  });
  const window: MarketWindow = {
    get generation() {
      return generation;
    },
    covers: (from, to) => series.every((s) => s.window!.covers(from, to)),
    moveTo(at) {
      let all = true;
      for (const s of series) if (!s.window!.moveTo(at)) all = false;
      return all;
    },
    readsStore: source.history !== undefined,
    history(symbol, from, to, page) {
      if (!source.history) throw new Error('the candle store is not readable on this thread');
      return source.history(symbol, from, to, page);
    },
  };
  return {
    interval,
    intervalMs: ms,
    series,
    bySymbol: new Map(series.map((s) => [s.symbol, s])),
    window,
  };
};
