import { createHash } from 'node:crypto';
import type { BacktestMarketSource } from '../../commands/backtest';
import { buildSessionMarket } from '../../domain/backtest/market';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { normalizeSymbol } from '../../domain/market/pair';
import type { MarketServices } from '../market/services';
import { candlesFromColumns } from '../market/store/convert';

/**
 * Backtests' view of market data (ARCHITECTURE §7, §9): the pairs and their candle ranges for validating a new
 * session, and the session's candles copied out of the in-memory candle index at start (every candle of the
 * session's interval closed by its end, the history before its start included, so indicators can warm up). The
 * fingerprint is SHA-256 over each pair's symbol, candle count and first and last open time: as the candle store is
 * append-only and never changes a stored candle, this is enough to tell whether a session continued after a
 * restart still sees exactly the candles it started with.
 */
export const backtestMarketSource = (market: MarketServices): BacktestMarketSource => {
  const store = market.data.candles;
  return {
    catalog: () => ({
      pair: (symbol) => market.pair(symbol),
      range(symbol, interval) {
        const r = store.seriesRange(normalizeSymbol(symbol), interval);
        return r ? { earliest: r.first, latest: r.last + INTERVAL_MS[interval] } : undefined;
      },
      symbolsWithData: (interval: Interval) =>
        store.symbols().filter((s) => store.seriesRange(s, interval) !== undefined),
      candleCount: (symbol, interval, start, end) =>
        store.count(normalizeSymbol(symbol), interval, start, end),
    }),
    load(pairs, interval, end) {
      const loaded = [];
      const hash = createHash('sha256');
      for (const symbol of pairs) {
        const filters = market.pair(symbol);
        if (!filters) return { error: `pair ${symbol} is no longer known to the market data` };
        const candles = candlesFromColumns(
          store.columns(symbol, interval, Number.NEGATIVE_INFINITY, end - INTERVAL_MS[interval] + 1),
        );
        if (candles.length === 0) return { error: `no ${interval} candles of ${symbol} are loaded` };
        hash.update(
          `${symbol}:${candles.length}:${candles[0]!.openTime}:${candles[candles.length - 1]!.openTime}\n`,
        );
        loaded.push({ filters, candles });
      }
      return { market: buildSessionMarket(interval, loaded), fingerprint: hash.digest('hex') };
    },
  };
};
