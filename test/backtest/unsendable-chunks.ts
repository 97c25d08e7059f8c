import type { SessionMarket } from '../../domain/backtest/market';
import type { Candle } from '../../domain/market/candle';
import type { MarketTransfer } from '../../src/backtest/step-worker';
import { registerMarketTransfer } from '../../src/backtest/stepper';
import { testMarket } from './support';

/**
 * A market of `candles` whose transfer the structured clone refuses (a function among its pairs' shared candles):
 * sending a stepping task with it throws a `DataCloneError`. `key` names it among the markets the stepping keeps.
 */
export const unsendableMarket = (candles: Record<string, Candle[]>, key: string): SessionMarket => {
  const market = testMarket(candles);
  registerMarketTransfer(market, key, {
    interval: market.interval,
    pairs: market.series.map((p) => ({ filters: p.filters, shared: (() => 0) as never })),
  });
  return market;
};

/**
 * `market`'s transfer as a chunked market (chunks of 24 candles, no gaps) naming no candle store: a stepping thread
 * or process asks the request thread for every chunk its clock reaches.
 */
export const chunkedTransfer = (market: SessionMarket): MarketTransfer => ({
  interval: market.interval,
  chunked: {
    spanCandles: 24,
    pairs: market.series.map((p) => ({
      filters: p.filters,
      length: p.length,
      firstOpenTime: p.candleAt(0).openTime,
      lastOpenTime: p.candleAt(p.length - 1).openTime,
      gaps: [],
    })),
  },
});

/**
 * A market of `candles` (1h) a stepping thread or process reads in chunks, each asked of the request thread (no
 * candle store named), whose reader answers a value the structured clone refuses (a function): the stepper must
 * answer such a chunk as an error. `key` names it among the markets the stepping keeps.
 */
export const unsendableChunksMarket = (candles: Record<string, Candle[]>, key: string): SessionMarket => {
  const market = testMarket(candles);
  registerMarketTransfer(market, key, chunkedTransfer(market), {
    pairs: market.series.length,
    read: () => ({ unsendable: () => 0 }) as never,
  });
  return market;
};
