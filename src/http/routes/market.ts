import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import type { Candle } from '../../../domain/market/candle';
import { gapOut } from '../../../domain/market/gaps';
import { INTERVAL_MS, INTERVALS, type Interval, isInterval } from '../../../domain/market/intervals';
import type { Pair } from '../../../domain/market/pair';
import { isoMicros, isoMillis } from '../../../domain/market/time';
import { DomainError } from '../../../domain/shared/errors';
import { errorResponses } from '../../contract/common';
import {
  candlesQuery,
  candlesResponse,
  dataRangeResponse,
  orderBookQuery,
  orderBookResponse,
  pairsQuery,
  pairsResponse,
  priceResponse,
  pricesQuery,
  pricesResponse,
  symbolParams,
  tickerResponse,
  tickersQuery,
  tickersResponse,
  tradesQuery,
  tradesResponse,
} from '../../contract/market';
import type { Ticker } from '../../market/feed';
import type { CachedPrice } from '../../market/price-cache';
import { parseQueryTime } from '../../market/query-time';
import type { MarketServices } from '../../market/services';
import { requiredSymbols, symbolList } from '../symbols-query';

/**
 * The nine public market-data endpoints (spec "Market data endpoints", "Limits", "Errors"; ARCHITECTURE §7).
 * No credential; their own rate-limit group (`market`, 1,200 requests per minute). Symbols are
 * case-insensitive. Unknown symbols, inactive pairs on the one-pair live endpoints (price, ticker, trades, order
 * book; the batch endpoints leave them out like any pair without data, and their stored candles stay readable),
 * unsupported candle intervals and invalid order-book depths are `INVALID_SYMBOL` 400 (checked in the handlers, since the spec gives them that code rather than
 * `VALIDATION_ERROR`); `limit` outside its bounds is `VALIDATION_ERROR` 422; no price yet is
 * `PRICE_NOT_AVAILABLE` 503. Values are 8-decimal strings; timestamps ISO 8601 UTC, `/market/price` with
 * microseconds.
 */

const marketOf = (app: FastifyInstance): MarketServices => {
  const market = app.services.market;
  if (!market) throw new DomainError('SERVICE_UNAVAILABLE', 'market data is not running');
  return market;
};

const pairOut = (p: Pair) => ({
  symbol: p.symbol,
  base_asset: p.baseAsset,
  quote_asset: p.quoteAsset,
  status: p.status,
  min_qty: p.minQty,
  step_size: p.stepSize,
  min_notional: p.minNotional,
  tick_size: p.tickSize,
});

const tickerOut = (t: Ticker) => ({
  symbol: t.symbol,
  open: t.open,
  high: t.high,
  low: t.low,
  close: t.close,
  volume: t.volume,
  quote_volume: t.quoteVolume,
  change: t.change,
  change_pct: t.changePct,
  trade_count: t.tradeCount,
  timestamp: isoMillis(t.time),
});

const candleOut = (c: Candle) => ({
  time: isoMillis(c.openTime),
  open: c.open,
  high: c.high,
  low: c.low,
  close: c.close,
  volume: c.volume,
  trade_count: c.tradeCount ?? 0,
});

/**
 * Hot paths (`/market/price`, `/market/candles`) send pre-serialized JSON: a price's body is built once per
 * price update, a candle's JSON once per candle (stored candles never change), and the last
 * {@link CANDLE_RESPONSES} candle responses are kept whole (keyed by the query and the store's version, so
 * an import invalidates them). The bodies have exactly the shapes of the response schemas above (tests parse
 * them with those schemas), which still document the routes.
 */
const CANDLE_RESPONSES = 64;

/**
 * The default upper bound (an open time, inclusive) of `/market/candles` without bounds: with the `files` replay,
 * the open of the last `interval` candle closed by the replayed time the live prices are at, so the newest
 * candles an agent reads lead up to the live price instead of lying years ahead of it; undefined otherwise (the
 * newest stored). Aligned to the interval so the response cache keeps one entry per candle, not per request.
 */
const replayEnd = (m: MarketServices, interval: Interval): number | undefined => {
  const replayed = m.replayedNow();
  if (replayed === undefined) return undefined;
  const step = INTERVAL_MS[interval];
  return Math.floor(replayed / step) * step - step;
};
const JSON_TYPE = 'application/json; charset=utf-8';
const priceBodies = new WeakMap<CachedPrice, string>();
const candleBodies = new WeakMap<Candle, string>();
const candleJson = (c: Candle): string => {
  let json = candleBodies.get(c);
  if (!json) {
    json = JSON.stringify(candleOut(c));
    candleBodies.set(c, json);
  }
  return json;
};

/**
 * An ISO 8601 query time (or epoch milliseconds) to ms; `VALIDATION_ERROR` otherwise, also for a day that does
 * not exist (`2022-02-30`, which `Date.parse` would roll over into March).
 */
const queryTime = (name: string, raw: string | undefined): number | undefined => {
  if (raw === undefined || raw === '') return undefined;
  const ms = parseQueryTime(raw);
  if (ms === undefined) {
    throw new DomainError('VALIDATION_ERROR', `invalid querystring: ${name}: expected an ISO 8601 UTC time`, {
      issues: [{ field: name, location: 'querystring', message: 'expected an ISO 8601 UTC time' }],
    });
  }
  return ms;
};

const DEPTHS = [5, 10, 20] as const;
const MAX_TICKER_SYMBOLS = 100;
const market = { rateLimitGroup: 'market' as const };
const tags = ['market'];

/** The `/market/*` route plugin. */
export const marketRoutes: FastifyPluginAsyncZod = async (app) => {
  const candleResponses = new Map<string, string>();
  app.get(
    '/market/pairs',
    {
      config: market,
      schema: {
        tags,
        summary: 'Trading pairs (all quoted in USDT) with their order filters',
        querystring: pairsQuery,
        response: {
          200: pairsResponse,
          ...errorResponses(422, 429),
        },
      },
    },
    async (request) => {
      const pairs = marketOf(app).pairs(request.query.status).map(pairOut);
      return { pairs, total: pairs.length };
    },
  );

  app.get(
    '/market/price/:symbol',
    {
      config: market,
      schema: {
        tags,
        summary: 'Current price of one pair (microsecond timestamp)',
        params: symbolParams,
        response: {
          200: priceResponse,
          ...errorResponses(400, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const m = marketOf(app);
      const p = m.getPrice(request.params.symbol);
      const stale = m.staleness();
      if (stale) {
        return {
          symbol: p.symbol,
          price: p.price,
          timestamp: isoMicros(p.time),
          stale: true as const,
          price_age_ms: stale.age_ms,
        };
      }
      let body = priceBodies.get(p);
      if (!body) {
        body = JSON.stringify({ symbol: p.symbol, price: p.price, timestamp: isoMicros(p.time) });
        priceBodies.set(p, body);
      }
      return reply.type(JSON_TYPE).send(body as never);
    },
  );

  app.get(
    '/market/prices',
    {
      config: market,
      schema: {
        tags,
        summary: 'Current prices of several pairs (all when `symbols` is omitted)',
        querystring: pricesQuery,
        response: {
          200: pricesResponse,
          ...errorResponses(400, 422, 429),
        },
      },
    },
    async (request) => {
      const m = marketOf(app);
      const prices: Record<string, string> = {};
      if (request.query.symbols === undefined) {
        for (const p of m.prices().sort((a, b) => (a.symbol < b.symbol ? -1 : 1))) prices[p.symbol] = p.price;
      } else {
        const symbols = requiredSymbols(request.query.symbols);
        for (const symbol of symbols) {
          m.requirePair(symbol);
          const p = m.feed.prices.get(symbol);
          if (p) prices[symbol] = p.price;
        }
      }
      return { prices, timestamp: isoMillis(Date.now()), count: Object.keys(prices).length };
    },
  );

  app.get(
    '/market/ticker/:symbol',
    {
      config: market,
      schema: {
        tags,
        summary: 'Rolling 24-hour statistics of one pair',
        params: symbolParams,
        response: { 200: tickerResponse, ...errorResponses(400, 422, 429, 503) },
      },
    },
    async (request) => tickerOut(marketOf(app).ticker(request.params.symbol)),
  );

  app.get(
    '/market/tickers',
    {
      config: market,
      schema: {
        tags,
        summary: 'Rolling 24-hour statistics of up to 100 pairs, keyed by symbol',
        description: 'Pairs without a ticker yet are left out of the object.',
        querystring: tickersQuery,
        response: { 200: tickersResponse, ...errorResponses(400, 422, 429) },
      },
    },
    async (request) => {
      const m = marketOf(app);
      const symbols = symbolList(request.query.symbols);
      if (symbols.length === 0 || symbols.length > MAX_TICKER_SYMBOLS) {
        throw new DomainError(
          'VALIDATION_ERROR',
          `invalid querystring: symbols: give 1 to ${MAX_TICKER_SYMBOLS} symbols, got ${symbols.length}`,
          {
            issues: [
              { field: 'symbols', location: 'querystring', message: `1 to ${MAX_TICKER_SYMBOLS} symbols` },
            ],
          },
        );
      }
      const out: z.output<typeof tickersResponse> = {};
      for (const symbol of symbols) {
        m.requirePair(symbol);
        let t: Ticker;
        try {
          t = m.ticker(symbol);
        } catch {
          continue;
        }
        out[symbol] = {
          symbol,
          open: t.open,
          high: t.high,
          low: t.low,
          close: t.close,
          volume: t.volume,
          change_pct: t.changePct,
          trade_count: t.tradeCount,
        };
      }
      return out;
    },
  );

  app.get(
    '/market/candles/:symbol',
    {
      config: market,
      schema: {
        tags,
        summary: 'Historical candles, oldest first',
        description:
          'Without `start_time` the newest `limit` candles (up to `end_time` when given); with it the first ' +
          '`limit` candles from it. Bounds are inclusive and compare with the candle open time. Intervals ' +
          '`1m`, `5m`, `15m`, `1h`, `4h`, `1d`; coarser ones are aggregated from the finest stored data. ' +
          "When the live feed replays stored data (`files`), candle times are the data's own dates and, with " +
          'neither bound, the newest candles are those closed by the replayed time the live price is at ' +
          '(`/health` `market_feed.replayed_time`), not the end of the data.',
        params: symbolParams,
        querystring: candlesQuery,
        response: {
          200: candlesResponse,
          ...errorResponses(400, 422, 429),
        },
      },
    },
    async (request, reply) => {
      const m = marketOf(app);
      const { limit } = request.query;
      const interval = request.query.interval ?? '1h';
      const pair = m.requirePair(request.params.symbol);
      if (!isInterval(interval)) {
        throw new DomainError(
          'INVALID_SYMBOL',
          `unsupported candle interval ${interval}: use one of ${INTERVALS.join(', ')}`,
          { interval, supported: INTERVALS },
        );
      }
      const start = queryTime('start_time', request.query.start_time);
      const end =
        queryTime('end_time', request.query.end_time) ??
        (start === undefined ? replayEnd(m, interval) : undefined);
      if (start !== undefined && end !== undefined && start > end) {
        throw new DomainError('VALIDATION_ERROR', 'invalid querystring: start_time is after end_time', {
          issues: [{ field: 'start_time', location: 'querystring', message: 'after end_time' }],
        });
      }
      const key = `${pair.symbol}|${interval}|${start}|${end}|${limit}|${m.data.candles.version}`;
      let body = candleResponses.get(key);
      if (body === undefined) {
        const candles = m.candles(pair.symbol, interval, { start, end, limit });
        body = `{"symbol":${JSON.stringify(pair.symbol)},"interval":"${interval}","candles":[${candles
          .map(candleJson)
          .join(',')}],"count":${candles.length}}`;
        candleResponses.set(key, body);
        if (candleResponses.size > CANDLE_RESPONSES)
          candleResponses.delete(candleResponses.keys().next().value!);
      }
      return reply.type(JSON_TYPE).send(body as never);
    },
  );

  app.get(
    '/market/trades/:symbol',
    {
      config: market,
      schema: {
        tags,
        summary: 'Recent public trades, newest first',
        params: symbolParams,
        querystring: tradesQuery,
        response: {
          200: tradesResponse,
          ...errorResponses(400, 422, 429),
        },
      },
    },
    async (request) => {
      const m = marketOf(app);
      const pair = m.requirePair(request.params.symbol, { active: true });
      const trades = m.recentTrades(pair.symbol, request.query.limit).map((t) => ({
        trade_id: t.tradeId,
        price: t.price,
        quantity: t.quantity,
        time: isoMillis(t.time),
        is_buyer_maker: t.isBuyerMaker,
      }));
      return { symbol: pair.symbol, trades };
    },
  );

  app.get(
    '/market/orderbook/:symbol',
    {
      config: market,
      schema: {
        tags,
        summary: 'Synthetic order book around the current price',
        description:
          'Synthetic: levels are generated deterministically around the current mid-price, with spread and ' +
          'depth scaled by the pair’s 24h volume; they do not reflect real liquidity.',
        params: symbolParams,
        querystring: orderBookQuery,
        response: {
          200: orderBookResponse,
          ...errorResponses(400, 422, 429, 503),
        },
      },
    },
    async (request) => {
      const m = marketOf(app);
      const pair = m.requirePair(request.params.symbol, { active: true });
      const raw = request.query.depth ?? '10';
      const depth = Number(raw);
      if (!/^\d+$/.test(raw) || !(DEPTHS as readonly number[]).includes(depth)) {
        throw new DomainError('INVALID_SYMBOL', `invalid order book depth ${raw}: use 5, 10 or 20`, {
          depth: raw,
          supported: DEPTHS,
        });
      }
      const book = m.orderBook(pair.symbol, depth);
      return { symbol: book.symbol, bids: book.bids, asks: book.asks, timestamp: isoMillis(book.time) };
    },
  );

  app.get(
    '/market/data-range',
    {
      config: market,
      schema: {
        tags,
        summary: 'Range of the historical candle data, its intervals and its gaps',
        description:
          '`earliest` is the first candle’s open time, `latest` the end of the last candle. `data_gaps` lists ' +
          'runs of missing candles inside each stored series, merged across the pairs they affect.',
        response: {
          200: dataRangeResponse,
          ...errorResponses(429),
        },
      },
    },
    async () => {
      const r = marketOf(app).dataRange();
      return {
        earliest: r.earliest === null ? null : isoMillis(r.earliest),
        latest: r.latest === null ? null : isoMillis(r.latest),
        total_pairs: r.totalPairs,
        intervals_available: r.intervalsAvailable,
        data_gaps: r.gaps.map(gapOut),
        pairs: r.pairs.map((p) => ({
          symbol: p.symbol,
          earliest: isoMillis(p.earliest),
          latest: isoMillis(p.latest),
          intervals: p.intervals,
          stored_intervals: p.stored,
        })),
      };
    },
  );
};
