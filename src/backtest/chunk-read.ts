import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import type { MarketCandles } from '../market/candles';
import { joinColumns } from '../market/store/columns';
import { chunkRange } from './chunked-market';
import { type SharedSeriesColumns, shareColumns } from './shared-series';

/**
 * Chunk `c` of one pair of a session window ending at `end` (ms), `chunkCandles` candles of `interval` ahead of its
 * start (`chunkRange`), read from `candles` into shared columns: the candles of the chunk's range and the last
 * candle before it (the forward-filled price across a gap that starts before the chunk). The one read of a chunk,
 * on the request thread (`market-source.ts`) and on a stepping thread over its own read-only view of the same
 * candle store (`step-worker.ts`): both give the same columns for a pair without live candles. Throws when a price
 * does not fit exact backtest arithmetic.
 */
export const readPairChunk = (
  candles: Pick<MarketCandles, 'queryColumns' | 'columns'>,
  symbol: string,
  interval: Interval,
  end: number,
  chunkCandles: number,
  c: number,
): SharedSeriesColumns => {
  const ms = INTERVAL_MS[interval];
  const { from, to } = chunkRange(c, chunkCandles, interval, end);
  const before = candles.queryColumns(symbol, interval, { end: from - 1, limit: 1 });
  const within = candles.columns(symbol, interval, from, Math.max(from, to));
  const shared = shareColumns(before.length ? joinColumns([before, within], ms) : within);
  if (!shared) throw new Error(`a ${symbol} price is too large for exact backtest arithmetic`);
  return shared;
};
