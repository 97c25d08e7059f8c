import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { BacktestMarketSource } from '../../commands/backtest';
import { buildSessionMarket, type SeriesUnits, type SessionMarket } from '../../domain/backtest/market';
import type { Candle } from '../../domain/market/candle';
import { INTERVAL_MS, type Interval } from '../../domain/market/intervals';
import { normalizeSymbol } from '../../domain/market/pair';
import type { PairFilters } from '../../domain/trading/quantity';
import type { MarketServices } from '../market/services';
import type { CandleColumns } from '../market/store/block-codec';
import { candlesFromColumns } from '../market/store/convert';
import { unitsAt } from '../market/store/decimal-column';
import { registerMarketTransfer } from './stepper';

/**
 * Backtests' view of market data (ARCHITECTURE §7, §9): the pairs and their candle ranges for validating a new
 * session, and the session's candles copied out of the in-memory candle index at start (every candle of the
 * session's interval closed by its end, the history before its start included, so indicators can warm up). The
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
        v.market.series.reduce((n, x) => n + x.candles.length, 0),
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
      const loaded: {
        filters: PairFilters;
        candles: Candle[];
        columns: CandleColumns;
        units?: SeriesUnits;
      }[] = [];
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
        const candles = candlesFromColumns(columns);
        const units = unitsOfColumns(columns);
        if (candles.length === 0) return { error: `no ${interval} candles of ${symbol} are loaded` };
        hash.update(
          `${symbol}:${candles.length}:${candles[0]!.openTime}:${candles[candles.length - 1]!.openTime}\n`,
        );
        loaded.push({ filters, candles, columns, ...(units ? { units } : {}) });
      }
      const fingerprint = hash.digest('hex');
      const built = buildSessionMarket(interval, loaded);
      // Worker threads get the columns, not the candle objects (typed arrays: a cheap copy), and share a market
      // between sessions over the same candles (same pairs, interval, end and fingerprint).
      registerMarketTransfer(built, `${interval}|${end}|${pairs.join(',')}|${fingerprint}`, {
        interval,
        pairs: built.series.map((s) => ({
          filters: s.filters,
          columns: loaded.find((l) => l.filters.symbol === s.symbol)!.columns,
        })),
      });
      const result = { market: built, fingerprint };
      shared.set(key, result);
      return result;
    },
  };
};

/**
 * The price columns in 1e-8 units, straight from the store's integers (exact: the same integers the candles'
 * strings are written from); undefined when a value would not be a safe integer (then the strings are parsed).
 */
const unitsOfColumns = (c: CandleColumns): SeriesUnits | undefined => {
  const out: SeriesUnits = {
    open: new Float64Array(c.length),
    high: new Float64Array(c.length),
    low: new Float64Array(c.length),
    close: new Float64Array(c.length),
  };
  for (const field of ['open', 'high', 'low', 'close'] as const) {
    const column = c[field];
    const into = out[field];
    for (let i = 0; i < c.length; i++) {
      const v = unitsAt(column, i);
      if (!Number.isSafeInteger(v)) return undefined;
      into[i] = v;
    }
  }
  return out;
};
