import type { Candle } from './candle';
import { INTERVAL_MS, type Interval } from './intervals';
import { isoMillis } from './time';

/**
 * Missing candles inside a stored series (spec `/market/data-range`: `data_gaps`; ARCHITECTURE §7). A gap is
 * a run of consecutive missing open times between two stored candles of the same symbol and interval; the
 * time before a series' first candle or after its last is not a gap.
 */
export interface Gap {
  interval: Interval;
  /** Open time (ms) of the first missing candle. */
  start: number;
  /** Open time (ms) of the next stored candle: the gap is `[start, end)`. */
  end: number;
  missingCandles: number;
}

/** Gaps of one series (`candles` sorted by open time, all of `interval`). */
export const findGaps = (candles: readonly Candle[], interval: Interval): Gap[] =>
  findGapsInTimes(
    candles.map((c) => c.openTime),
    interval,
  );

/** Gaps of one series given by its open times (ms, ascending, all of `interval`): a backtest's typed column. */
export const findGapsInTimes = (openTimes: ArrayLike<number>, interval: Interval): Gap[] => {
  const ms = INTERVAL_MS[interval];
  const gaps: Gap[] = [];
  for (let i = 1; i < openTimes.length; i++) {
    const prev = openTimes[i - 1]!;
    const next = openTimes[i]!;
    if (next - prev > ms) {
      gaps.push({
        interval,
        start: prev + ms,
        end: next,
        missingCandles: Math.round((next - prev) / ms) - 1,
      });
    }
  }
  return gaps;
};

/** A gap shared by one or more symbols: the shape `data_gaps` entries take on the wire. */
export interface SharedGap extends Gap {
  symbols: string[];
}

/**
 * The gaps of `symbols` that overlap `[from, to)` (ms), each narrowed to those symbols (issue 24, item 6: a
 * backtest says which of its pairs miss which candles). `gaps` as {@link groupGaps} sorts them.
 */
export const gapsWithin = (
  gaps: readonly SharedGap[],
  symbols: readonly string[],
  from: number,
  to: number,
): SharedGap[] => {
  const wanted = new Set(symbols);
  const out: SharedGap[] = [];
  for (const g of gaps) {
    if (g.end <= from || g.start >= to) continue;
    const hit = g.symbols.filter((s) => wanted.has(s));
    if (hit.length) out.push({ ...g, symbols: hit });
  }
  return out;
};

/**
 * Merges per-symbol gaps with the same interval, start and end into one entry listing the symbols (an exchange
 * outage leaves the same hole in every pair). Sorted by start, then interval; symbols sorted.
 */
export const groupGaps = (perSymbol: ReadonlyMap<string, readonly Gap[]>): SharedGap[] => {
  const byKey = new Map<string, SharedGap>();
  for (const [symbol, gaps] of perSymbol) {
    for (const g of gaps) {
      const key = `${g.interval}|${g.start}|${g.end}`;
      const entry = byKey.get(key) ?? { ...g, symbols: [] };
      entry.symbols.push(symbol);
      byKey.set(key, entry);
    }
  }
  return [...byKey.values()]
    .map((g) => ({ ...g, symbols: g.symbols.sort() }))
    .sort((a, b) => a.start - b.start || INTERVAL_MS[a.interval] - INTERVAL_MS[b.interval]);
};

/** The `data_gaps` entry of a gap on the wire (`/market/data-range`, backtest create and start): ISO times. */
export const gapOut = (g: SharedGap) => ({
  interval: g.interval,
  start: isoMillis(g.start),
  end: isoMillis(g.end),
  missing_candles: g.missingCandles,
  symbols: g.symbols,
});
