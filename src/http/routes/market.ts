import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { candleQuery, candleRunsOf, currentPrice, priceStaleness, tickers } from '../../application/market';
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
import { marketAnswers as m } from '../../endpoints/market';
import { batchTickerOut, priceOut } from '../../market/present';
import type { CachedPrice } from '../../market/price-cache';
import { candlesBody } from '../../market/store/candle-json';
import { publicCallOf } from '../call';
import { requiredSymbols, symbolList } from '../symbols-query';
import { routeGroup } from './route-options';

/**
 * The nine public market-data endpoints (spec "Market data endpoints", "Limits", "Errors"; ARCHITECTURE §7), each
 * parsing, calling its use case in `src/application/market.ts` and presenting (`src/market/present.ts`).
 * No credential; their own rate-limit group (`market`, 1,200 requests per minute). Symbols are
 * case-insensitive. Unknown symbols, inactive pairs on the one-pair live endpoints (price, ticker, trades, order
 * book; the batch endpoints leave them out like any pair without data, and their stored candles stay readable),
 * unsupported candle intervals and invalid order-book depths are `INVALID_SYMBOL` 400 (checked in the handlers, since the spec gives them that code rather than
 * `VALIDATION_ERROR`); `limit` outside its bounds is `VALIDATION_ERROR` 422; no price yet is
 * `PRICE_NOT_AVAILABLE` 503. Values are 8-decimal strings; timestamps ISO 8601 UTC, `/market/price` with
 * microseconds.
 */

/**
 * Hot paths (`/market/price`, `/market/candles`) send pre-serialized JSON: a price's body is built once per
 * price update; a candle body is written as bytes straight from the store's decoded blocks into a reused buffer
 * (`candlesBody`: no object, string or copy per candle, no new buffer per read; ~0.5 ms of CPU for 1,000 minutes).
 * The bodies have exactly the shapes of the response schemas above (tests compare them byte for byte with the
 * schema's serialization), which still document the routes.
 */
const JSON_TYPE = 'application/json; charset=utf-8';
const priceBodies = new WeakMap<CachedPrice, string>();

/** Public, in the `market` rate-limit group. */
const route = routeGroup('market', { rateLimitGroup: 'market' });

/** The `/market/*` route plugin. */
export const marketRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/market/pairs',
    route('Trading pairs (all quoted in USDT) with their order filters', {
      querystring: pairsQuery,
      response: {
        200: pairsResponse,
        ...errorResponses(422, 429),
      },
    }),
    async (request) => m.pairs(publicCallOf(request), request.query.status),
  );

  app.get(
    '/market/price/:symbol',
    route('Current price of one pair (microsecond timestamp)', {
      params: symbolParams,
      response: {
        200: priceResponse,
        ...errorResponses(400, 422, 429, 503),
      },
    }),
    async (request, reply) => {
      const call = publicCallOf(request);
      const p = currentPrice(call, request.params.symbol);
      const stale = priceStaleness(call);
      if (stale) return priceOut(p, stale);
      let body = priceBodies.get(p);
      if (!body) {
        body = JSON.stringify(priceOut(p));
        priceBodies.set(p, body);
      }
      return reply.type(JSON_TYPE).send(body as never);
    },
  );

  app.get(
    '/market/prices',
    route('Current prices of several pairs (all when `symbols` is omitted)', {
      querystring: pricesQuery,
      response: {
        200: pricesResponse,
        ...errorResponses(400, 422, 429),
      },
    }),
    async (request) => {
      const { symbols } = request.query;
      return m.prices(publicCallOf(request), symbols === undefined ? undefined : requiredSymbols(symbols));
    },
  );

  app.get(
    '/market/ticker/:symbol',
    route('Rolling 24-hour statistics of one pair', {
      params: symbolParams,
      response: { 200: tickerResponse, ...errorResponses(400, 422, 429, 503) },
    }),
    async (request) => m.ticker(publicCallOf(request), request.params.symbol),
  );

  app.get(
    '/market/tickers',
    route('Rolling 24-hour statistics of up to 100 pairs, keyed by symbol', {
      description: 'Pairs without a ticker yet are left out of the object.',
      querystring: tickersQuery,
      response: { 200: tickersResponse, ...errorResponses(400, 422, 429) },
    }),
    async (request) => {
      const out: z.output<typeof tickersResponse> = {};
      for (const t of tickers(publicCallOf(request), symbolList(request.query.symbols))) {
        out[t.symbol] = batchTickerOut(t);
      }
      return out;
    },
  );

  app.get(
    '/market/candles/:symbol',
    route('Historical candles, oldest first', {
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
    }),
    async (request, reply) => {
      const call = publicCallOf(request);
      const q = request.query;
      const query = candleQuery(call, request.params.symbol, {
        interval: q.interval,
        startTime: q.start_time,
        endTime: q.end_time,
        limit: q.limit,
      });
      const body = candlesBody(query.pair.symbol, query.interval, candleRunsOf(call, query));
      // The body's buffer is reused once the response has been handed to the socket (or the connection closed).
      reply.raw.once('close', body.release);
      return reply.type(JSON_TYPE).send(body.bytes as never);
    },
  );

  app.get(
    '/market/trades/:symbol',
    route('Recent public trades, newest first', {
      params: symbolParams,
      querystring: tradesQuery,
      response: {
        200: tradesResponse,
        ...errorResponses(400, 422, 429),
      },
    }),
    async (request) => m.trades(publicCallOf(request), request.params.symbol, request.query.limit),
  );

  app.get(
    '/market/orderbook/:symbol',
    route('Synthetic order book around the current price', {
      description:
        'Synthetic: levels are generated deterministically around the current mid-price, with spread and ' +
        'depth scaled by the pair’s 24h volume; they do not reflect real liquidity.',
      params: symbolParams,
      querystring: orderBookQuery,
      response: {
        200: orderBookResponse,
        ...errorResponses(400, 422, 429, 503),
      },
    }),
    async (request) => m.orderBook(publicCallOf(request), request.params.symbol, request.query.depth),
  );

  app.get(
    '/market/data-range',
    route('Range of the historical candle data, its intervals and its gaps', {
      description:
        '`earliest` is the first candle’s open time, `latest` the end of the last candle. `data_gaps` lists ' +
        'runs of missing candles inside each stored series, merged across the pairs they affect.',
      response: {
        200: dataRangeResponse,
        ...errorResponses(429),
      },
    }),
    async (request) => m.dataRange(publicCallOf(request)),
  );
};
