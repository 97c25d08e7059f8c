import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/market/candle';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { mulberry32 } from '../../domain/market/random';
import { ColumnStore } from '../../src/market/store/column-store';
import { columnsFromCandles } from '../../src/market/store/convert';
import { tempDir } from './support';

/**
 * `ColumnStore.lastOpenTime` (the last served candle at or before a time, from the block index where the block has
 * no gap, else from the block decoded) against decoded reads of the same store opened afresh: `newest(…, at, 1)`
 * and a binary search of the whole series read. Every served interval of two pairs: minutes with gaps (a missing
 * day, hours across midnight, single minutes, two whole months) that start and end mid-day, and gap-free hours
 * but for two days, over several months that start and end mid-month. Asked at, before and after every candle and
 * every day and month boundary (the blocks' ends: a day per block at 1m … 15m, a month per block above), before the
 * first candle and after the last.
 */
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** A candle at `openTime` (its values do not matter here). */
const candle = (openTime: number): Candle => ({
  openTime,
  open: '100.00000000',
  high: '101.00000000',
  low: '99.00000000',
  close: '100.50000000',
  volume: '1.00000000',
  quoteVolume: '100.00000000',
  tradeCount: 1,
});

/** Every `step` from `from` to `to` (exclusive) that `keep` keeps. */
const grid = (
  from: number,
  to: number,
  step: number,
  keep: (t: number) => boolean = () => true,
): number[] => {
  const out: number[] = [];
  for (let t = from; t < to; t += step) if (keep(t)) out.push(t);
  return out;
};

const random = mulberry32(24);
/** Minutes with gaps: 28 Jan 05:17 → 4 Feb 10:00 and 2 Apr 00:00 → 3 Apr 13:37 (February's rest and March empty). */
const MINUTES = [
  ...grid(Date.UTC(2024, 0, 28, 5, 17), Date.UTC(2024, 1, 4, 10), MINUTE, (t) => {
    if (t >= Date.UTC(2024, 0, 30) && t < Date.UTC(2024, 0, 31)) return false; // a whole day
    if (t >= Date.UTC(2024, 1, 1, 23) && t < Date.UTC(2024, 1, 2, 1, 35)) return false; // across midnight
    const day = Math.floor(t / DAY);
    return day % 2 === 0 || random() >= 0.01; // single minutes, on every other day (the others are gap-free)
  }),
  ...grid(Date.UTC(2024, 3, 2), Date.UTC(2024, 3, 3, 13, 38), MINUTE),
];
/** Hours 15 Nov 2023 07:00 → 20 Feb 2024 18:00, but for 24–25 December. */
const HOURS = grid(
  Date.UTC(2023, 10, 15, 7),
  Date.UTC(2024, 1, 20, 19),
  HOUR,
  (t) => t < Date.UTC(2023, 11, 24) || t >= Date.UTC(2023, 11, 26),
);

const { dir, remove } = tempDir('ptv-last-open-');
afterAll(remove);
let store: ColumnStore;
/** The same directory opened afresh: the decoded reads the answers are checked against. */
let reference: ColumnStore;

beforeAll(async () => {
  const writer = new ColumnStore(dir);
  for (const [symbol, interval, times] of [
    ['AAAUSDT', '1m', MINUTES],
    ['BBBUSDT', '1h', HOURS],
  ] as const) {
    const prepared = writer.prepare(
      symbol,
      interval,
      columnsFromCandles(times.map(candle), INTERVAL_MS[interval]),
    );
    writer.commit(prepared);
  }
  await writer.flush();
  writer.close();
  store = new ColumnStore(dir);
  reference = new ColumnStore(dir);
});
afterAll(() => {
  store.close();
  reference.close();
});

/** The last of the sorted `times` that is ≤ `at`, by bisection; undefined when none is. */
const lastAtOrBefore = (times: readonly number[], at: number): number | undefined => {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? times[lo - 1] : undefined;
};

/** The times to ask at for a series whose open times are `times`. */
const askedAt = (times: readonly number[], interval: Interval): number[] => {
  const ms = INTERVAL_MS[interval];
  const first = times[0]!;
  const last = times.at(-1)!;
  const at = [0, first - 365 * DAY, first - ms, first - 1, last + 1, last + ms, last + 365 * DAY];
  for (const t of times) at.push(t - 1, t, t + 1, t + ms - 1);
  for (let day = Math.floor(first / DAY) * DAY; day <= last + DAY; day += DAY) {
    at.push(day - 1, day, day + 1);
    const d = new Date(day);
    if (d.getUTCDate() === 1) at.push(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - ms);
  }
  return at;
};

describe('ColumnStore.lastOpenTime', () => {
  it('stores the series as written', () => {
    const read = (symbol: string, interval: Interval) => {
      const range = reference.seriesRange(symbol, interval)!;
      return Array.from(reference.read(symbol, interval, range.first, range.last + 1).openTime);
    };
    expect(read('AAAUSDT', '1m')).toEqual(MINUTES);
    expect(read('BBBUSDT', '1h')).toEqual(HOURS);
  });

  for (const symbol of ['AAAUSDT', 'BBBUSDT']) {
    it(`answers as the decoded reads at every served interval of ${symbol}`, () => {
      const intervals = reference.servedIntervals(symbol);
      expect(intervals.length).toBeGreaterThanOrEqual(3);
      for (const interval of intervals) {
        const range = reference.seriesRange(symbol, interval)!;
        const times = Array.from(reference.read(symbol, interval, range.first, range.last + 1).openTime);
        expect(times).toHaveLength(range.count);
        const asked = askedAt(times, interval);
        asked.forEach((at, k) => {
          const expected = lastAtOrBefore(times, at);
          const got = store.lastOpenTime(symbol, interval, at);
          // One assertion per mismatch only (there are ~10^5 questions), naming the interval and the time asked.
          if (got !== expected) expect({ interval, at, got }).toEqual({ interval, at, got: expected });
          // `newest(…, at, 1)` is a second decoded read, on a sample (every candle's would be slow).
          if (k < 7 || k % 97 === 0) {
            const newest = reference.newest(symbol, interval, at, 1);
            expect(newest.length === 0 ? undefined : newest.openTime[0]).toBe(expected);
          }
        });
      }
    });
  }

  it('is undefined before the first candle and the last candle after the last, for a pair with none too', () => {
    expect(store.lastOpenTime('AAAUSDT', '1m', MINUTES[0]! - 1)).toBeUndefined();
    expect(store.lastOpenTime('AAAUSDT', '1m', Date.UTC(2030, 0, 1))).toBe(MINUTES.at(-1));
    // In the empty months after 4 February 10:00: the last minute before them.
    expect(store.lastOpenTime('AAAUSDT', '1m', Date.UTC(2024, 2, 15))).toBe(Date.UTC(2024, 1, 4, 9, 59));
    expect(store.lastOpenTime('AAAUSDT', '1d', Date.UTC(2024, 2, 15))).toBe(Date.UTC(2024, 1, 4));
    expect(store.lastOpenTime('BBBUSDT', '1h', Date.UTC(2023, 11, 25, 12, 30))).toBe(
      Date.UTC(2023, 11, 23, 23),
    );
    expect(store.lastOpenTime('CCCUSDT', '1m', Date.UTC(2024, 0, 1))).toBeUndefined();
  });
});
