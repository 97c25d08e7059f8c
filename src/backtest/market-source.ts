import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { BacktestMarketSource } from '../../commands/backtest';
import { buildSessionMarket, type SessionMarket } from '../../domain/backtest/market';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { normalizeSymbol } from '../../domain/market/pair';
import type { PairFilters } from '../../domain/trading/quantity';
import type { MarketServices } from '../market/services';
import { type SharedSeriesColumns, seriesOfShared, shareColumns } from './shared-series';
import { registerMarketTransfer } from './stepper';

/**
 * Backtests' view of market data (ARCHITECTURE §7, §9): the pairs and their candle ranges for validating a new
 * session, and the session's candles read from the candle store at start as columns in shared memory (every candle
 * of the session's interval closed by its end, the history before its start included, so indicators can warm up;
 * open times and prices as typed arrays, candle objects made only for what a response shows). The
 * fingerprint is SHA-256 over each pair's symbol, candle count and first and last open time: as the candle store is
 * append-only and never changes a stored candle, this is enough to tell whether a session continued after a
 * restart still sees exactly the candles it started with. Sessions started on the same candles (pairs, interval,
 * end, data and pair list unchanged) share one market: it is read-only, so one copy serves them all.
 */
export const backtestMarketSource = (
  market: MarketServices,
  options: { sharedCandles?: number } = {},
): BacktestMarketSource => {
  const store = market.data.candles;
  // Sessions over the same candles share one read-only market (issue 24 item 3): keyed by what it is built from —
  // the stored candles' version, the pair list's, the pairs, the interval and the end — so a change of either
  // builds a new one. Bounded by candles held (default 2 M).
  const shared = new LRUCache<string, { market: SessionMarket; fingerprint: string }>({
    maxSize: options.sharedCandles ?? 2_000_000,
    sizeCalculation: (v) =>
      Math.max(
        1,
        v.market.series.reduce((n, x) => n + x.length, 0),
      ),
  });
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
      const key = `${store.version}|${market.data.pairsAsOf}|${interval}|${end}|${pairs.join(',')}`;
      const known = shared.get(key);
      if (known) return known;
      const loaded: { filters: PairFilters; shared: SharedSeriesColumns }[] = [];
      const hash = createHash('sha256');
      for (const symbol of pairs) {
        const filters = market.pair(symbol);
        if (!filters) return { error: `pair ${symbol} is no longer known to the market data` };
        const columns = store.columns(
          symbol,
          interval,
          Number.NEGATIVE_INFINITY,
          end - INTERVAL_MS[interval] + 1,
        );
        if (columns.length === 0) return { error: `no ${interval} candles of ${symbol} are loaded` };
        const sharedColumns = shareColumns(columns);
        if (!sharedColumns) return { error: `a ${symbol} price is too large for exact backtest arithmetic` };
        hash.update(
          `${symbol}:${columns.length}:${columns.openTime[0]}:${columns.openTime[columns.length - 1]}\n`,
        );
        loaded.push({ filters, shared: sharedColumns });
      }
      const fingerprint = hash.digest('hex');
      // No candle object per candle: the series reads the shared columns and makes objects on demand.
      const built = buildSessionMarket(
        interval,
        loaded.map((l) => ({ filters: l.filters, data: seriesOfShared(l.shared) })),
      );
      // Worker threads get the same shared memory (no copy), and share a market between sessions over the same
      // candles (same pairs, interval, end and fingerprint).
      registerMarketTransfer(built, `${interval}|${end}|${pairs.join(',')}|${fingerprint}`, {
        interval,
        pairs: loaded,
      });
      const result = { market: built, fingerprint };
      shared.set(key, result);
      return result;
    },
  };
};
