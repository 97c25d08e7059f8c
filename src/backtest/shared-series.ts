import type { SeriesData } from '../../domain/backtest/market';
import type { CandleColumns } from '../market/store/block-codec';
import { bigUnitsAt, type DecimalColumn, textAt, unitsAt } from '../market/store/decimal-column';

/**
 * A pair's candles as a backtest holds them (issue 24, items 3 and 4): open times and prices in 1e-8 units, and the
 * store's volume, quote volume and trade-count columns, every typed array on a `SharedArrayBuffer`. Posted to a
 * worker thread it is shared, not copied (structured clone of a typed array over shared memory passes the memory),
 * so the request thread and every backtest thread read the same bytes. Read-only once built.
 */
export interface SharedSeriesColumns {
  openTime: Float64Array;
  open: Float64Array;
  high: Float64Array;
  low: Float64Array;
  close: Float64Array;
  volume: DecimalColumn;
  quote: DecimalColumn;
  trades: DecimalColumn;
}

const sharedCopy = (from: Float64Array): Float64Array => {
  const to = new Float64Array(new SharedArrayBuffer(from.length * 8));
  to.set(from);
  return to;
};

const sharedDecimal = (c: DecimalColumn): DecimalColumn =>
  c.ints ? { scale: c.scale, ints: sharedCopy(c.ints) } : c;

const sharedUnits = (c: DecimalColumn, n: number): Float64Array | undefined => {
  const out = new Float64Array(new SharedArrayBuffer(n * 8));
  for (let i = 0; i < n; i++) {
    const v = unitsAt(c, i);
    if (!Number.isSafeInteger(v)) return undefined;
    out[i] = v;
  }
  return out;
};

/**
 * The store's columns of one pair in shared memory, prices converted to 1e-8 units (exact: the store's integers
 * times a power of ten). Undefined when a price does not fit a safe integer (no listed pair comes near: 2^53 units
 * is 90 million USDT).
 */
export const shareColumns = (c: CandleColumns): SharedSeriesColumns | undefined => {
  const open = sharedUnits(c.open, c.length);
  const high = sharedUnits(c.high, c.length);
  const low = sharedUnits(c.low, c.length);
  const close = sharedUnits(c.close, c.length);
  if (!open || !high || !low || !close) return undefined;
  return {
    openTime: sharedCopy(c.openTime),
    open,
    high,
    low,
    close,
    volume: sharedDecimal(c.volume),
    quote: sharedDecimal(c.quote),
    trades: sharedDecimal(c.trades),
  };
};

const PAD = ['', '0', '00', '000', '0000', '00000', '000000', '0000000', '00000000'];

/** 8-decimal text of a non-negative safe integer of 1e-8 units (the store's `textAt` at scale 8). */
const text8 = (u: number): string => {
  let int = Math.floor(u / 100_000_000);
  let frac = u - int * 100_000_000;
  // u / 1e8 can round up to the next integer near 2^53.
  if (frac < 0) {
    int--;
    frac += 100_000_000;
  }
  const f = String(frac);
  return `${int}.${PAD[8 - f.length]}${f}`;
};

const UNIT = 100_000_000n;

/**
 * The session series over shared columns: the candle objects are made on demand, equal to the store's own
 * (`candleAt` of `src/market/store/convert.ts`: same texts, same nulls).
 */
export const seriesOfShared = (s: SharedSeriesColumns): SeriesData => ({
  openTime: s.openTime,
  open: s.open,
  high: s.high,
  low: s.low,
  close: s.close,
  candleAt(i) {
    const trades = textAt(s.trades, i);
    return {
      openTime: s.openTime[i]!,
      open: text8(s.open[i]!),
      high: text8(s.high[i]!),
      low: text8(s.low[i]!),
      close: text8(s.close[i]!),
      volume: textAt(s.volume, i)!,
      quoteVolume: textAt(s.quote, i),
      tradeCount: trades === null ? null : Number(trades.slice(0, -9)),
    };
  },
  volumeAt: (i) => textAt(s.volume, i)!,
  quoteUnitsAt(i) {
    const q = bigUnitsAt(s.quote, i);
    return q >= 0n ? q * UNIT : bigUnitsAt(s.volume, i) * BigInt(s.close[i]!);
  },
});
