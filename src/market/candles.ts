import { type Candle, lowerBound } from '../../domain/market/candle';
import { type Gap, groupGaps, type SharedGap } from '../../domain/market/gaps';
import { INTERVAL_MS, INTERVALS, type Interval } from '../../domain/market/intervals';
import { CandleStore } from './candle-store';
import type { CandleColumns } from './store/block-codec';
import type { ColumnStore } from './store/column-store';
import { type ColumnRun, lowerBoundTime, runsColumns } from './store/columns';
import { candleAt, candlesFromColumns, columnsFromCandles } from './store/convert';

/**
 * Every candle the venue knows, from two layers (issue 24 item 2; `docs/market-data.md`, "The candle store"):
 * - the **column store** on disk (`store/column-store.ts`): every imported file, years of minutes for hundreds of
 *   pairs, read by range;
 * - the **live layer** in memory (`candle-store.ts`): minutes recorded from the live feed (`binance`, `synthetic`)
 *   and their REST backfill — a day or so per pair.
 * A read asks both and merges by open time (the store's candle wins where both have one, which happens only when
 * the same minute was both imported and recorded). Callers never see the layers.
 */
export class MarketCandles {
  readonly live = new CandleStore();

  constructor(readonly store: ColumnStore) {}

  /** Increases whenever stored candles change (response caches key on it). */
  get version(): number {
    return this.store.version * 1_000_000 + this.live.version;
  }

  /** Pairs with candles, sorted. */
  symbols(): string[] {
    return [...new Set([...this.store.symbols(), ...this.live.symbols()])].sort();
  }

  /** True when `symbol` has candles. */
  has(symbol: string): boolean {
    return this.live.has(symbol) || this.store.nativeIntervals(symbol).length > 0;
  }

  /** Intervals stored natively for `symbol`, finest first. */
  nativeIntervals(symbol: string): Interval[] {
    const both = new Set([...this.store.nativeIntervals(symbol), ...this.live.nativeIntervals(symbol)]);
    return INTERVALS.filter((i) => both.has(i));
  }

  /** Intervals `symbol` can be served in: its native ones and every coarser one. */
  intervalsAvailable(symbol: string): Interval[] {
    const native = this.nativeIntervals(symbol);
    if (native.length === 0) return [];
    const finest = INTERVAL_MS[native[0]!];
    return INTERVALS.filter((i) => INTERVAL_MS[i] >= finest);
  }

  /** Earliest open time and latest end (ms) over native data (of one pair, or all), or undefined. */
  range(symbol?: string): { earliest: number; latest: number } | undefined {
    const a = this.store.range(symbol);
    const b = this.live.range(symbol);
    if (!a || !b) return a ?? b;
    return { earliest: Math.min(a.earliest, b.earliest), latest: Math.max(a.latest, b.latest) };
  }

  /** First and last open time and count of the served series of `symbol` at `interval`. */
  seriesRange(
    symbol: string,
    interval: Interval,
  ): { first: number; last: number; count: number } | undefined {
    const stored = this.store.seriesRange(symbol, interval);
    const live = this.live.series(symbol, interval);
    if (live.length === 0) return stored;
    const first = live[0]!.openTime;
    const last = live[live.length - 1]!.openTime;
    if (!stored) return { first, last, count: live.length };
    const extra = live.filter((c) => c.openTime < stored.first || c.openTime > stored.last).length;
    return {
      first: Math.min(first, stored.first),
      last: Math.max(last, stored.last),
      count: stored.count + extra,
    };
  }

  /** First and last open time of the native series of `symbol` at `interval` (both layers). */
  nativeRange(symbol: string, interval: Interval): { first: number; last: number } | undefined {
    const stored = this.store.nativeRange(symbol, interval);
    const live = this.live.nativeSeries(symbol, interval);
    if (live.length === 0) return stored;
    const first = live[0]!.openTime;
    const last = live[live.length - 1]!.openTime;
    return stored
      ? { first: Math.min(first, stored.first), last: Math.max(last, stored.last) }
      : { first, last };
  }

  /** Native candles of `symbol` at `interval` with open time in [start, end) (both layers). */
  nativeColumns(symbol: string, interval: Interval, start: number, end: number): CandleColumns {
    const stored = this.store.readNative(symbol, interval, start, end);
    const list = this.live.nativeSeries(symbol, interval);
    const from = lowerBound(list, start);
    const to = lowerBound(list, end);
    return from < to ? mergeLayers(stored, list.slice(from, to), INTERVAL_MS[interval]) : stored;
  }

  /** The last native candle with open time < `time`, or undefined. */
  nativeBefore(symbol: string, interval: Interval, time: number): Candle | undefined {
    const stored = this.store.newest(symbol, interval, time - 1, 1, 'native');
    const a = stored.length ? candleAt(stored, 0) : undefined;
    const list = this.live.nativeSeries(symbol, interval);
    const i = lowerBound(list, time) - 1;
    const b = i >= 0 ? list[i] : undefined;
    if (!a || !b) return a ?? b;
    return b.openTime > a.openTime ? b : a;
  }

  /**
   * Gaps of the served series of `symbol` at `interval` known without reading candles (the store's manifest, see
   * `ColumnStore.servedGaps`); undefined when they need a read (an aggregated interval, or live candles).
   */
  servedGaps(symbol: string, interval: Interval): Gap[] | undefined {
    return this.live.has(symbol) ? undefined : this.store.servedGaps(symbol, interval);
  }

  /** The open time of the last served candle with open time ≤ `at` (ms; both layers), or undefined when none. */
  lastOpenTime(symbol: string, interval: Interval, at: number): number | undefined {
    return this.live.has(symbol)
      ? this.queryColumns(symbol, interval, { end: at, limit: 1 }).openTime[0]
      : this.store.lastOpenTime(symbol, interval, at);
  }

  /** Served candles of `symbol` at `interval` opening in [start, end). */
  count(symbol: string, interval: Interval, start: number, end: number): number {
    return this.live.has(symbol)
      ? this.columns(symbol, interval, start, end).length
      : this.store.count(symbol, interval, start, end);
  }

  /** Served candles with open time in [start, end) as columns (both layers merged). */
  columns(symbol: string, interval: Interval, start: number, end: number): CandleColumns {
    const stored = this.store.read(symbol, interval, start, end);
    if (!this.live.has(symbol)) return stored;
    const list = this.live.series(symbol, interval);
    const from = lowerBound(list, start);
    const to = lowerBound(list, end);
    if (from >= to) return stored;
    return mergeLayers(stored, list.slice(from, to), INTERVAL_MS[interval]);
  }

  /**
   * Candles at `interval` with open time in `[start, end]` (inclusive, ms), oldest first, at most `limit` (spec
   * `/market/candles`): with `start`, the first `limit` from it; otherwise the last `limit` up to `end` (or the
   * newest). Reads only the months and blocks it needs.
   */
  query(
    symbol: string,
    interval: Interval,
    range: { start?: number | undefined; end?: number | undefined; limit: number },
  ): Candle[] {
    const fromStore = candlesFromColumns(
      runsColumns(this.storedRuns(symbol, interval, range), INTERVAL_MS[interval]),
    );
    if (!this.live.has(symbol)) return fromStore;
    const live = this.live.query(symbol, interval, range);
    if (live.length === 0) return fromStore;
    const merged = new Map<number, Candle>();
    for (const c of live) merged.set(c.openTime, c);
    for (const c of fromStore) merged.set(c.openTime, c);
    const sorted = [...merged.values()].sort((a, b) => a.openTime - b.openTime);
    const { start, limit } = range;
    return start === undefined ? sorted.slice(Math.max(0, sorted.length - limit)) : sorted.slice(0, limit);
  }

  /**
   * {@link query} as columns: straight from the store (no candle objects) when the pair has no live minutes, which
   * is every pair of an imported data set; merged through candle objects otherwise.
   */
  queryColumns(
    symbol: string,
    interval: Interval,
    range: { start?: number | undefined; end?: number | undefined; limit: number },
  ): CandleColumns {
    return runsColumns(this.queryRuns(symbol, interval, range), INTERVAL_MS[interval]);
  }

  /**
   * {@link queryColumns} without copying: runs of the store's decoded blocks (shared with its cache: read only)
   * when the pair has no live minutes, one run of the merged candles otherwise. What `/market/candles` writes its
   * body from (`transient`: see `ColumnStore.readRuns`; the runs are then valid only until the next transient read).
   */
  queryRuns(
    symbol: string,
    interval: Interval,
    range: { start?: number | undefined; end?: number | undefined; limit: number },
    options: { transient?: boolean } = {},
  ): ColumnRun[] {
    if (!this.live.has(symbol)) return this.storedRuns(symbol, interval, range, options);
    const columns = columnsFromCandles(this.query(symbol, interval, range), INTERVAL_MS[interval]);
    return [{ columns, from: 0, to: columns.length }];
  }

  /**
   * The store's part of {@link query}: with `start`, the first `limit` candles from it (up to `end`); otherwise the
   * last `limit` up to `end`. Reads only the months and blocks it needs, blocks in order until it has `limit`.
   */
  private storedRuns(
    symbol: string,
    interval: Interval,
    range: { start?: number | undefined; end?: number | undefined; limit: number },
    options: { transient?: boolean } = {},
  ): ColumnRun[] {
    const { start, end, limit } = range;
    if (start === undefined) return this.store.newestRuns(symbol, interval, end, limit, 'served', options);
    return this.store.readRuns(
      symbol,
      interval,
      start,
      end === undefined ? Number.POSITIVE_INFINITY : end + 1,
      limit,
      options,
    );
  }

  /** Candles closed by `at` (open + interval ≤ at) with open time ≥ `from`, oldest first (no look-ahead). */
  closedCandles(symbol: string, interval: Interval, from: number, at: number): Candle[] {
    return candlesFromColumns(this.columns(symbol, interval, from, at - INTERVAL_MS[interval] + 1));
  }

  /** The last candle closed by `at` (ms), or undefined. */
  lastClosed(symbol: string, interval: Interval, at: number): Candle | undefined {
    return this.last(symbol, interval, at - INTERVAL_MS[interval]);
  }

  /** The last candle with open time ≤ `time` (any time when undefined), or undefined. */
  last(symbol: string, interval: Interval, time?: number): Candle | undefined {
    const stored = this.store.newest(symbol, interval, time, 1);
    const a = stored.length ? candleAt(stored, 0) : undefined;
    const b =
      time === undefined
        ? this.live.series(symbol, interval).at(-1)
        : this.live.lastClosed(symbol, interval, time + INTERVAL_MS[interval]);
    if (!a || !b) return a ?? b;
    return b.openTime > a.openTime ? b : a;
  }

  /** Gaps of every native series, shared gaps merged across pairs. */
  gaps(): SharedGap[] {
    const live = this.live.gaps();
    const stored = this.store.gaps();
    if (live.length === 0) return stored;
    const perSymbol = new Map<string, Gap[]>();
    for (const g of [...stored, ...live]) {
      for (const s of g.symbols) {
        const list = perSymbol.get(s) ?? [];
        list.push({ interval: g.interval, start: g.start, end: g.end, missingCandles: g.missingCandles });
        perSymbol.set(s, list);
      }
    }
    return groupGaps(perSymbol);
  }

  /**
   * Holes between the stored months of the series `symbol` is served in at `interval` (`ColumnStore.servedHoles`:
   * e.g. between a pair's aggregated minutes and its own later candles); the live layer's minutes are one series.
   */
  servedHoles(symbol: string, interval: Interval): Gap[] {
    return this.store.servedHoles(symbol, interval);
  }

  /** Native candles held (both layers). */
  size(): number {
    return this.store.size() + this.live.size();
  }

  /** Records live candles (in memory; the `binance` source also writes them to its table). */
  merge(symbol: string, interval: Interval, candles: readonly Candle[]): Candle[] {
    return this.live.merge(symbol, interval, candles);
  }
}

/** Stored columns with live candles added where the store has none at their open time. */
const mergeLayers = (stored: CandleColumns, live: readonly Candle[], intervalMs: number): CandleColumns => {
  const extra = live.filter((c) => {
    const i = lowerBoundTime(stored.openTime, c.openTime);
    return !(i < stored.length && stored.openTime[i] === c.openTime);
  });
  if (extra.length === 0) return stored;
  const all = [...candlesFromColumns(stored), ...extra].sort((a, b) => a.openTime - b.openTime);
  return columnsFromCandles(all, intervalMs);
};
