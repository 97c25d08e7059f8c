import { combineSources, type SourceSeries } from '../../domain/market/aggregate';
import { type Candle, lowerBound, sameCandle } from '../../domain/market/candle';
import { findGaps, type Gap, groupGaps, type SharedGap } from '../../domain/market/gaps';
import { INTERVAL_MS, INTERVALS, type Interval } from '../../domain/market/intervals';

/**
 * The in-memory candle index (ARCHITECTURE §7): every stored (native) series per symbol and interval, and the
 * served series of each interval built from them — native candles plus aggregations of finer sources (see
 * `combineSources`). The database is the durable append-only store; this index answers every candle query
 * without a round trip. Served series are built lazily and cached until the symbol's native data changes.
 */
export class CandleStore {
  private readonly native = new Map<string, Map<Interval, Candle[]>>();
  private readonly served = new Map<string, Map<Interval, Candle[]>>();
  private gapCache: SharedGap[] | undefined;
  private changes = 0;

  /** Increases whenever stored candles change (cache keys of candle responses include it). */
  get version(): number {
    return this.changes;
  }

  /**
   * Candles of `incoming` (sorted, all of `interval`) that conflict with stored ones: same open time,
   * different values. Nothing is changed. Used to reject a file before merging any of it.
   */
  conflicts(
    symbol: string,
    interval: Interval,
    incoming: readonly Candle[],
  ): { index: number; stored: Candle }[] {
    const existing = this.native.get(symbol)?.get(interval);
    if (!existing || existing.length === 0) return [];
    const out: { index: number; stored: Candle }[] = [];
    incoming.forEach((c, index) => {
      const at = lowerBound(existing, c.openTime);
      const stored = existing[at];
      if (stored && stored.openTime === c.openTime && !sameCandle(stored, c)) out.push({ index, stored });
    });
    return out;
  }

  /**
   * Adds native candles (sorted by open time). Append-only: a candle whose open time is already stored is
   * kept as stored (call {@link conflicts} first to detect disagreements). Resolves to the candles that were
   * new.
   */
  merge(symbol: string, interval: Interval, incoming: readonly Candle[]): Candle[] {
    if (incoming.length === 0) return [];
    let bySymbol = this.native.get(symbol);
    if (!bySymbol) {
      bySymbol = new Map();
      this.native.set(symbol, bySymbol);
    }
    const existing = bySymbol.get(interval) ?? [];
    const added: Candle[] = [];
    const last = existing[existing.length - 1];
    if (!last || incoming[0]!.openTime > last.openTime) {
      // Fast path: a new series or an append at the end.
      for (const c of incoming) {
        const prev = added[added.length - 1] ?? last;
        if (!prev || c.openTime > prev.openTime) added.push(c);
      }
      bySymbol.set(interval, existing.length ? existing.concat(added) : added.slice());
    } else {
      const times = new Set(existing.map((c) => c.openTime));
      for (const c of incoming) {
        if (!times.has(c.openTime)) {
          times.add(c.openTime);
          added.push(c);
        }
      }
      if (added.length)
        bySymbol.set(
          interval,
          [...existing, ...added].sort((a, b) => a.openTime - b.openTime),
        );
    }
    if (added.length) {
      this.changes++;
      this.served.delete(symbol);
      this.gapCache = undefined;
    }
    return added;
  }

  /** Symbols with any candle, sorted. */
  symbols(): string[] {
    return [...this.native.keys()].sort();
  }

  /** True when `symbol` has candles. */
  has(symbol: string): boolean {
    return this.native.has(symbol);
  }

  /** The intervals stored natively for `symbol`. */
  nativeIntervals(symbol: string): Interval[] {
    const m = this.native.get(symbol);
    return m ? INTERVALS.filter((i) => (m.get(i)?.length ?? 0) > 0) : [];
  }

  /** The native candles of one series (sorted; do not mutate). */
  nativeSeries(symbol: string, interval: Interval): readonly Candle[] {
    return this.native.get(symbol)?.get(interval) ?? [];
  }

  /** Intervals `symbol` can be served in: its native ones and every coarser one. */
  intervalsAvailable(symbol: string): Interval[] {
    const nativeIntervals = this.nativeIntervals(symbol);
    if (nativeIntervals.length === 0) return [];
    const finest = INTERVAL_MS[nativeIntervals[0]!];
    return INTERVALS.filter((i) => INTERVAL_MS[i] >= finest);
  }

  /** The full served series of `symbol` at `interval` (sorted; do not mutate). */
  series(symbol: string, interval: Interval): readonly Candle[] {
    let cache = this.served.get(symbol);
    if (!cache) {
      cache = new Map();
      this.served.set(symbol, cache);
    }
    let list = cache.get(interval);
    if (!list) {
      const sources: SourceSeries[] = [];
      for (const [i, candles] of this.native.get(symbol) ?? []) sources.push({ interval: i, candles });
      list = combineSources(sources, interval);
      cache.set(interval, list);
    }
    return list;
  }

  /** Builds every served series now, so first queries are as fast as later ones. */
  warm(): void {
    for (const symbol of this.native.keys()) {
      for (const interval of INTERVALS) this.series(symbol, interval);
    }
    this.gaps();
  }

  /** {@link warm} one series at a time, yielding to the event loop in between (start-up without a pause). */
  async warmInBackground(): Promise<void> {
    this.gaps();
    for (const symbol of [...this.native.keys()]) {
      for (const interval of INTERVALS) {
        await new Promise((resolve) => setImmediate(resolve));
        this.series(symbol, interval);
      }
    }
  }

  /**
   * Candles of `symbol` at `interval` with open time in `[start, end]` (inclusive, ms), oldest first, at most
   * `limit` (spec `/market/candles`). With `start`, the first `limit` from it; otherwise the last `limit`
   * up to `end` (or the newest).
   */
  query(
    symbol: string,
    interval: Interval,
    range: { start?: number | undefined; end?: number | undefined; limit: number },
  ): Candle[] {
    const list = this.series(symbol, interval);
    const from = range.start === undefined ? 0 : lowerBound(list, range.start);
    const to = range.end === undefined ? list.length : lowerBound(list, range.end + 1);
    if (from >= to) return [];
    return range.start === undefined
      ? list.slice(Math.max(from, to - range.limit), to)
      : list.slice(from, Math.min(to, from + range.limit));
  }

  /**
   * Candles that have closed by time `at` (ms): open time ≥ `from` and `openTime + interval ≤ at`, oldest
   * first (ARCHITECTURE §9: no look-ahead in backtests).
   */
  closedCandles(symbol: string, interval: Interval, from: number, at: number): Candle[] {
    const list = this.series(symbol, interval);
    const lo = lowerBound(list, from);
    const hi = lowerBound(list, at - INTERVAL_MS[interval] + 1);
    return lo < hi ? list.slice(lo, hi) : [];
  }

  /** The last candle closed by `at` (ms), for a forward-filled price at a virtual time; or `undefined`. */
  lastClosed(symbol: string, interval: Interval, at: number): Candle | undefined {
    const list = this.series(symbol, interval);
    const hi = lowerBound(list, at - INTERVAL_MS[interval] + 1);
    return hi > 0 ? list[hi - 1] : undefined;
  }

  /** Earliest open time and latest end (`openTime + interval`, ms) over native data, or undefined when empty. */
  range(symbol?: string): { earliest: number; latest: number } | undefined {
    let earliest = Number.POSITIVE_INFINITY;
    let latest = Number.NEGATIVE_INFINITY;
    const symbols = symbol ? [symbol] : [...this.native.keys()];
    for (const s of symbols) {
      for (const [interval, candles] of this.native.get(s) ?? []) {
        const first = candles[0];
        const last = candles[candles.length - 1];
        if (!first || !last) continue;
        earliest = Math.min(earliest, first.openTime);
        latest = Math.max(latest, last.openTime + INTERVAL_MS[interval]);
      }
    }
    return Number.isFinite(earliest) ? { earliest, latest } : undefined;
  }

  /** Gaps of every native series, shared gaps merged (see `groupGaps`). */
  gaps(): SharedGap[] {
    if (!this.gapCache) {
      const perSeries = new Map<string, Gap[]>();
      for (const [symbol, byInterval] of this.native) {
        const all: Gap[] = [];
        for (const [interval, candles] of byInterval) all.push(...findGaps(candles, interval));
        if (all.length) perSeries.set(symbol, all);
      }
      this.gapCache = groupGaps(perSeries);
    }
    return this.gapCache;
  }

  /** Number of native candles stored. */
  size(): number {
    let n = 0;
    for (const m of this.native.values()) for (const c of m.values()) n += c.length;
    return n;
  }
}
