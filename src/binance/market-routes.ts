import type { FastifyInstance } from 'fastify';
import { INTERVALS, type Interval, isInterval } from '../../domain/market/intervals';
import { DomainError } from '../../domain/shared/errors';
import { newPublicCall } from '../application/call';
import { candleQuery, candlesOf } from '../application/market';
import { RATE_LIMIT_GROUPS, RATE_LIMIT_WINDOW_MS } from '../application/rate-limits';
import type { MarketServices } from '../market/services';
import { publicEndpoint } from './door';
import { BinanceError, CODES } from './errors';
import { type BinanceParams, intParam, optional, required, symbolsParam, timeWindowParams } from './params';
import { aggTrade, kline, publicTrade, symbolInfo, ticker24hr } from './present';

/**
 * Binance's public market-data endpoints (Spot API "General endpoints" and "Market Data endpoints") over the
 * venue's market capability (`src/market`): the same pairs, prices, 24h tickers, candles, public trades and
 * synthetic book the REST door serves. Security `NONE`; counted per client IP in the `market` group.
 */

const marketOf = (app: FastifyInstance): MarketServices => {
  const market = app.services.market;
  if (!market) throw new DomainError('SERVICE_UNAVAILABLE', 'market data is not running');
  return market;
};

/** A public endpoint counted in `market` that reads the venue's market data (503 when it is not running). */
const marketEndpoint = (fn: (m: MarketServices, params: BinanceParams) => unknown) =>
  publicEndpoint('market', ({ params, request }) => fn(marketOf(request.server), params));

/** The symbols a request names (`symbol` or `symbols`), each a known pair (-1121); undefined for every pair. */
const namedSymbols = (m: MarketServices, p: BinanceParams): string[] | undefined => {
  const one = optional(p, 'symbol');
  if (one !== undefined && optional(p, 'symbols') !== undefined) {
    throw new BinanceError(
      CODES.INVALID_PARAMETER,
      "Parameter 'symbol' and 'symbols' cannot be sent together.",
    );
  }
  const symbols = one !== undefined ? [one.trim().toUpperCase()] : symbolsParam(p);
  for (const s of symbols ?? []) m.requirePair(s);
  return symbols;
};

/**
 * What a ticker request asks for: `one` when it named a single `symbol` (the answer is then one object, and a pair
 * without a price is an error), else the named `symbols` in the order given, or every priced pair by symbol.
 */
const requestedSymbols = (m: MarketServices, p: BinanceParams): { one: boolean; symbols: string[] } => {
  const named = namedSymbols(m, p);
  if (named) return { one: optional(p, 'symbol') !== undefined, symbols: named };
  return {
    one: false,
    symbols: m
      .prices()
      .map((price) => price.symbol)
      .sort(),
  };
};

/** The request's `symbol` (-1102 without one), a pair that is trading (as {@link MarketServices.requirePair}). */
const tradingPair = (m: MarketServices, p: BinanceParams) =>
  m.requirePair(required(p, 'symbol'), { active: true });

/** The top of the synthetic book, or undefined without a price. */
const topOf = (m: MarketServices, symbol: string) => {
  try {
    const book = m.orderBook(symbol, 5);
    const bid = book.bids[0];
    const ask = book.asks[0];
    return bid && ask ? { bid, ask } : undefined;
  } catch {
    return undefined;
  }
};

/** Binance's depth `limit` values we serve: the book's 5, 10 or 20 levels (a larger limit gets 20). */
const bookDepth = (limit: number): 5 | 10 | 20 => (limit <= 5 ? 5 : limit <= 10 ? 10 : 20);

/** The candle interval parameter: one of ours (-1120 otherwise, naming them). */
const intervalOf = (p: BinanceParams): Interval => {
  const interval = required(p, 'interval');
  if (!isInterval(interval)) {
    throw new BinanceError(
      CODES.INVALID_INTERVAL,
      `Invalid interval. Served intervals: ${INTERVALS.join(', ')}.`,
    );
  }
  return interval;
};

/** Registers the public endpoints on the `/binance/api/v3` scope. */
export const marketRoutes = async (app: FastifyInstance): Promise<void> => {
  app.get(
    '/ping',
    publicEndpoint('market', () => ({})),
  );

  app.get(
    '/time',
    publicEndpoint('market', () => ({ serverTime: Date.now() })),
  );

  app.get(
    '/exchangeInfo',
    marketEndpoint((m, params) => {
      const named = namedSymbols(m, params);
      const pairs = named ? named.map((s) => m.requirePair(s)) : m.pairs();
      return {
        timezone: 'UTC',
        serverTime: Date.now(),
        rateLimits: [
          {
            rateLimitType: 'REQUEST_WEIGHT',
            interval: 'MINUTE',
            intervalNum: RATE_LIMIT_WINDOW_MS / 60_000,
            limit: RATE_LIMIT_GROUPS.market,
          },
          {
            rateLimitType: 'ORDERS',
            interval: 'MINUTE',
            intervalNum: RATE_LIMIT_WINDOW_MS / 60_000,
            limit: RATE_LIMIT_GROUPS.orders,
          },
        ],
        exchangeFilters: [],
        symbols: pairs.map(symbolInfo),
      };
    }),
  );

  app.get(
    '/ticker/price',
    marketEndpoint((m, params) => {
      const named = namedSymbols(m, params);
      if (named && optional(params, 'symbol') !== undefined) {
        const p = m.getPrice(named[0]!);
        return { symbol: p.symbol, price: p.price };
      }
      const wanted = named ? new Set(named) : undefined;
      return m
        .prices()
        .filter((p) => !wanted || wanted.has(p.symbol))
        .sort((a, b) => (a.symbol < b.symbol ? -1 : 1))
        .map((p) => ({ symbol: p.symbol, price: p.price }));
    }),
  );

  app.get(
    '/ticker/24hr',
    marketEndpoint((m, params) => {
      const { one, symbols } = requestedSymbols(m, params);
      if (one) {
        const t = m.ticker(symbols[0]!);
        return ticker24hr(t, topOf(m, t.symbol));
      }
      const out = [];
      for (const symbol of symbols) {
        try {
          out.push(ticker24hr(m.ticker(symbol), topOf(m, symbol)));
        } catch {
          // A pair without a price yet has no ticker: left out, as /market/tickers does.
        }
      }
      return out;
    }),
  );

  app.get(
    '/ticker/bookTicker',
    marketEndpoint((m, params) => {
      const { one, symbols } = requestedSymbols(m, params);
      const out = [];
      for (const symbol of symbols) {
        const top = one ? topOfOrThrow(m, symbol) : topOf(m, symbol);
        if (!top) continue;
        out.push({
          symbol,
          bidPrice: top.bid[0],
          bidQty: top.bid[1],
          askPrice: top.ask[0],
          askQty: top.ask[1],
        });
      }
      return one ? out[0] : out;
    }),
  );

  app.get(
    '/avgPrice',
    marketEndpoint((m, params) => {
      const p = m.getPrice(required(params, 'symbol'));
      // The venue's price is the live mark, not a 5-minute average (docs/binance-compatibility.md).
      return { mins: 5, price: p.price, closeTime: Math.floor(p.time) };
    }),
  );

  const klines = publicEndpoint('market', ({ params, request }) => {
    const interval = intervalOf(params);
    const limit = intParam(params, 'limit', { min: 1, max: 1000 }, 500);
    const { start, end } = timeWindowParams(params);
    if (start !== undefined && end !== undefined && start > end) {
      throw new BinanceError(CODES.INVALID_PARAMETER, 'startTime is after endTime.');
    }
    // The candle use case of every door: without bounds under the files replay, the newest candles closed by the
    // replayed time the live price is at (as GET /api/v1/market/candles).
    const call = newPublicCall(app.services, request.id);
    const query = candleQuery(call, required(params, 'symbol'), {
      interval,
      startTime: start === undefined ? undefined : String(start),
      endTime: end === undefined ? undefined : String(end),
      limit,
    });
    return candlesOf(call, query).map((c) => kline(c, interval));
  });
  app.get('/klines', klines);
  app.get('/uiKlines', klines);

  app.get(
    '/depth',
    marketEndpoint((m, params) => {
      const pair = tradingPair(m, params);
      const limit = intParam(params, 'limit', { min: 1, max: 5000 }, 100);
      const book = m.orderBook(pair.symbol, bookDepth(limit));
      return {
        lastUpdateId: book.updateId,
        bids: book.bids.slice(0, limit),
        asks: book.asks.slice(0, limit),
      };
    }),
  );

  app.get(
    '/trades',
    marketEndpoint((m, params) => {
      const pair = tradingPair(m, params);
      const limit = intParam(params, 'limit', { min: 1, max: 1000 }, 500);
      return m.recentTrades(pair.symbol, Math.min(limit, 500)).reverse().map(publicTrade);
    }),
  );

  app.get(
    '/aggTrades',
    marketEndpoint((m, params) => {
      const pair = tradingPair(m, params);
      const limit = intParam(params, 'limit', { min: 1, max: 1000 }, 500);
      const { start, end } = timeWindowParams(params);
      return m
        .recentTrades(pair.symbol, 500)
        .reverse()
        .filter((t) => (start === undefined || t.time >= start) && (end === undefined || t.time <= end))
        .slice(-limit)
        .map(aggTrade);
    }),
  );
};

const topOfOrThrow = (m: MarketServices, symbol: string) => {
  const book = m.orderBook(symbol, 5);
  const bid = book.bids[0];
  const ask = book.asks[0];
  return bid && ask ? { bid, ask } : undefined;
};
