import type { Candle } from '../../../domain/market/candle';
import { toUnits } from '../../../domain/market/decimal';
import type { CandleColumns } from './block-codec';
import { assembleColumns } from './columns';
import { DecimalColumnBuilder, textAt } from './decimal-column';

/**
 * Appends a candle object's figures to the seven column builders of {@link CandleColumns}, in units of 10⁻⁸:
 * open, high, low, close, volume, quote volume and trade count (the last two -1 when the candle has none).
 */
export const pushCandleUnits = (b: readonly DecimalColumnBuilder[], c: Candle): void => {
  b[0]!.pushBig(toUnits(c.open));
  b[1]!.pushBig(toUnits(c.high));
  b[2]!.pushBig(toUnits(c.low));
  b[3]!.pushBig(toUnits(c.close));
  b[4]!.pushBig(toUnits(c.volume));
  b[5]!.pushBig(c.quoteVolume === null ? -1n : toUnits(c.quoteVolume));
  b[6]!.pushBig(c.tradeCount === null ? -1n : BigInt(c.tradeCount) * 100_000_000n);
};

/** Candle objects (the venue's wire-level form, 8-decimal strings) in columns. */
export const columnsFromCandles = (candles: readonly Candle[], intervalMs: number): CandleColumns => {
  const n = candles.length;
  const b = Array.from({ length: 7 }, () => new DecimalColumnBuilder(Math.max(1, n)));
  const openTime = new Float64Array(n);
  candles.forEach((c, i) => {
    openTime[i] = c.openTime;
    pushCandleUnits(b, c);
  });
  return assembleColumns(
    intervalMs,
    openTime,
    b.map((x) => x.finish()),
  );
};

/** Candle `i` of `c` as a candle object. */
export const candleAt = (c: CandleColumns, i: number): Candle => {
  const trades = textAt(c.trades, i);
  return {
    openTime: c.openTime[i]!,
    open: textAt(c.open, i)!,
    high: textAt(c.high, i)!,
    low: textAt(c.low, i)!,
    close: textAt(c.close, i)!,
    volume: textAt(c.volume, i)!,
    quoteVolume: textAt(c.quote, i),
    tradeCount: trades === null ? null : Number(trades.slice(0, -9)),
  };
};

/** Every candle of `c` as candle objects. */
export const candlesFromColumns = (c: CandleColumns): Candle[] =>
  Array.from({ length: c.length }, (_, i) => candleAt(c, i));
