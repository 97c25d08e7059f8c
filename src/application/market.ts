import type { Candle } from '../../domain/market/candle';
import { INTERVAL_MS, type Interval, isInterval, unsupportedInterval } from '../../domain/market/intervals';
import { normalizeSymbol, type Pair } from '../../domain/market/pair';
import { DomainError } from '../../domain/shared/errors';
import type { Ticker } from '../market/feed';
import type { CachedPrice } from '../market/price-cache';
import { parseQueryTime } from '../market/query-time';
import type { RecentTrade } from '../market/recent-trades';
import type { DataRange, MarketServices, OrderBook } from '../market/services';
import type { PriceStaleness } from '../market/staleness';
import type { ColumnRun } from '../market/store/columns';
import type { PublicCall } from './call';

/**
 * Market-data use cases (spec "Market data endpoints"; ARCHITECTURE §7), one call per capability for every door
 * (REST `/market/*`, MCP market tools). Public: no caller. Symbols are case-insensitive. Unknown symbols, inactive
 * pairs on the one-pair live reads (price, ticker, trades, order book), unsupported candle intervals and order-book
 * depths are `INVALID_SYMBOL` 400 (the spec's code for them, not `VALIDATION_ERROR`); no price yet is
 * `PRICE_NOT_AVAILABLE` 503; no market data running is `SERVICE_UNAVAILABLE`.
 */

/** The venue's market data; `SERVICE_UNAVAILABLE` when the runtime has none. */
export const marketOf = (call: PublicCall): MarketServices => {
  const market = call.services.market;
  if (!market) throw new DomainError('SERVICE_UNAVAILABLE', 'market data is not running');
  return market;
};

/** The most symbols one tickers call takes (spec "Market data endpoints"). */
export const MAX_TICKER_SYMBOLS = 100;

/** Order-book depths served (levels per side). */
export const ORDER_BOOK_DEPTHS = [5, 10, 20] as const;

/** Trading pairs, optionally of one status. */
export const listPairs = (call: PublicCall, status?: Pair['status']): readonly Pair[] =>
  marketOf(call).pairs(status);

/** The current price of one pair: `INVALID_SYMBOL` (unknown or inactive), `PRICE_NOT_AVAILABLE` (none yet). */
export const currentPrice = (call: PublicCall, symbol: string): CachedPrice =>
  marketOf(call).getPrice(symbol);

/**
 * How stale the live feed's prices are now (past `MAX_PRICE_AGE_MS` of silence), or undefined while they are fresh;
 * market orders are refused meanwhile (docs/trading-rules.md, "Stale prices").
 */
export const priceStaleness = (call: PublicCall): PriceStaleness | undefined => marketOf(call).staleness();

/**
 * Current prices keyed by symbol: of every pair with a price (sorted by symbol) when `symbols` is undefined, else
 * of those named (each must be a known pair, `INVALID_SYMBOL`; one without a price yet is left out).
 */
export const currentPrices = (call: PublicCall, symbols?: readonly string[]): Record<string, string> => {
  const m = marketOf(call);
  const prices: Record<string, string> = {};
  if (symbols === undefined) {
    for (const p of m.prices().sort((a, b) => (a.symbol < b.symbol ? -1 : 1))) prices[p.symbol] = p.price;
    return prices;
  }
  for (const raw of symbols) {
    const symbol = normalizeSymbol(raw);
    m.requirePair(symbol);
    const p = m.feed.prices.get(symbol);
    if (p) prices[symbol] = p.price;
  }
  return prices;
};

/** The rolling 24-hour ticker of one pair. */
export const ticker = (call: PublicCall, symbol: string): Ticker => marketOf(call).ticker(symbol);

/**
 * Tickers of 1 to {@link MAX_TICKER_SYMBOLS} pairs (`VALIDATION_ERROR` otherwise, naming `field`), in the order
 * given; each must be a known pair (`INVALID_SYMBOL`); a pair without a ticker yet is left out.
 */
export const tickers = (
  call: PublicCall,
  symbols: readonly string[],
  where: { field: string; location: string } = { field: 'symbols', location: 'querystring' },
): Ticker[] => {
  const m = marketOf(call);
  const unique = [...new Set(symbols.map(normalizeSymbol).filter(Boolean))];
  if (unique.length === 0 || unique.length > MAX_TICKER_SYMBOLS) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `invalid ${where.location}: ${where.field}: give 1 to ${MAX_TICKER_SYMBOLS} symbols, got ${unique.length}`,
      { issues: [{ ...where, message: `1 to ${MAX_TICKER_SYMBOLS} symbols` }] },
    );
  }
  const out: Ticker[] = [];
  for (const symbol of unique) {
    m.requirePair(symbol);
    try {
      out.push(m.ticker(symbol));
    } catch {
      // No ticker yet: left out, as the spec says.
    }
  }
  return out;
};

/** A candle request as sent: interval text (default `1h`), ISO 8601 or epoch-ms bounds, count. */
export interface CandleRequest {
  interval?: string | undefined;
  startTime?: string | undefined;
  endTime?: string | undefined;
  limit: number;
}

/** A candle request resolved against the market: the pair, a supported interval, bounds in ms. */
export interface CandleQuery {
  pair: Pair;
  interval: Interval;
  start: number | undefined;
  end: number | undefined;
  limit: number;
}

/**
 * An ISO 8601 time (or epoch milliseconds) to ms; `VALIDATION_ERROR` otherwise, also for a day that does not exist
 * (`2022-02-30`, which `Date.parse` would roll over into March).
 */
const queryTime = (name: string, raw: string | undefined, location: string): number | undefined => {
  if (raw === undefined || raw === '') return undefined;
  const ms = parseQueryTime(raw);
  if (ms === undefined) {
    throw new DomainError('VALIDATION_ERROR', `invalid ${location}: ${name}: expected an ISO 8601 UTC time`, {
      issues: [{ field: name, location, message: 'expected an ISO 8601 UTC time' }],
    });
  }
  return ms;
};

/**
 * The default upper bound (an open time, inclusive) of a candle request without bounds: with the `files` replay,
 * the open of the last `interval` candle closed by the replayed time the live prices are at, so the newest candles
 * an agent reads lead up to the live price instead of lying years ahead of it; undefined otherwise (the newest
 * stored). Aligned to the interval so a response cache keeps one entry per candle, not per request.
 */
const replayEnd = (m: MarketServices, interval: Interval): number | undefined => {
  const replayed = m.replayedNow();
  if (replayed === undefined) return undefined;
  const step = INTERVAL_MS[interval];
  return Math.floor(replayed / step) * step - step;
};

/**
 * Resolves a candle request: a known pair (`INVALID_SYMBOL`), a supported interval (`INVALID_SYMBOL` naming the
 * supported ones), valid bounds (`VALIDATION_ERROR`, also when start is after end). Without `startTime` the newest
 * `limit` candles (up to `endTime`, or the replayed time); with it the first `limit` from it.
 */
export const candleQuery = (
  call: PublicCall,
  symbol: string,
  request: CandleRequest,
  location = 'querystring',
): CandleQuery => {
  const m = marketOf(call);
  const interval = request.interval ?? '1h';
  const pair = m.requirePair(symbol);
  if (!isInterval(interval)) throw unsupportedInterval(interval);
  const start = queryTime('start_time', request.startTime, location);
  const end =
    queryTime('end_time', request.endTime, location) ??
    (start === undefined ? replayEnd(m, interval) : undefined);
  if (start !== undefined && end !== undefined && start > end) {
    throw new DomainError('VALIDATION_ERROR', `invalid ${location}: start_time is after end_time`, {
      issues: [{ field: 'start_time', location, message: 'after end_time' }],
    });
  }
  return { pair, interval, start, end, limit: request.limit };
};

/** The candles of a resolved query, oldest first. */
export const candlesOf = (call: PublicCall, q: CandleQuery): Candle[] =>
  marketOf(call).candles(q.pair.symbol, q.interval, { start: q.start, end: q.end, limit: q.limit });

/** {@link candlesOf} as runs of the store's columns (for presenting many candles without an object each; read only, valid until the next call: see `MarketServices.candleRuns`). */
export const candleRunsOf = (call: PublicCall, q: CandleQuery): ColumnRun[] =>
  marketOf(call).candleRuns(q.pair.symbol, q.interval, { start: q.start, end: q.end, limit: q.limit });

/** Recent public trades of an active pair, newest first. */
export const recentTrades = (
  call: PublicCall,
  symbol: string,
  limit: number,
): { symbol: string; trades: RecentTrade[] } => {
  const m = marketOf(call);
  const pair = m.requirePair(symbol, { active: true });
  return { symbol: pair.symbol, trades: m.recentTrades(pair.symbol, limit) };
};

/**
 * The synthetic order book of an active pair around its current price; `depth` is 5, 10 or 20 levels per side
 * (default 10; anything else is `INVALID_SYMBOL` naming the supported depths).
 */
export const orderBook = (call: PublicCall, symbol: string, depth: string | number = '10'): OrderBook => {
  const m = marketOf(call);
  const pair = m.requirePair(symbol, { active: true });
  const raw = String(depth);
  const levels = Number(raw);
  if (!/^\d+$/.test(raw) || !(ORDER_BOOK_DEPTHS as readonly number[]).includes(levels)) {
    throw new DomainError('INVALID_SYMBOL', `invalid order book depth ${raw}: use 5, 10 or 20`, {
      depth: raw,
      supported: ORDER_BOOK_DEPTHS,
    });
  }
  return m.orderBook(pair.symbol, levels);
};

/** The range of the historical candle data, its intervals and its gaps. */
export const dataRange = (call: PublicCall): DataRange => marketOf(call).dataRange();
