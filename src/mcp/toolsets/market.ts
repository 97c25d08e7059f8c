import { z } from 'zod';
import { availableIndicators, marketIndicators } from '../../application/indicators';
import { candleQuery, candlesOf, currentPrice, priceStaleness, tickers } from '../../application/market';
import { availableIndicatorsResponse, indicatorsQuery, indicatorsResponse } from '../../contract/indicators';
import {
  candlesQuery,
  candlesResponse,
  dataRangeResponse,
  orderBookResponse,
  pairsQuery,
  pairsResponse,
  priceResponse,
  pricesResponse,
  tickerResponse,
  tickersResponse,
  tradesQuery,
  tradesResponse,
} from '../../contract/market';
import { symbolInput } from '../../contract/trading';
import { marketAnswers as m } from '../../endpoints/market';
import { batchTickerOut, candleOut, priceOut } from '../../market/present';
import { defineTool, READ, type ToolDef } from '../tool';

/**
 * Market data tools (spec "Market data endpoints"): public, the `market` rate-limit group, read-only. Each calls its
 * use case in `src/application/market.ts` and presents with `src/market/present.ts`, as `/market/*` does.
 */

const common = { toolset: 'market', auth: 'public', rateLimitGroup: 'market', annotations: READ } as const;
const symbol = z.object({ symbol: symbolInput });
/**
 * A list of symbols (at least one), bounded as REST bounds it: `/market/prices` takes any number, and the "at most
 * 100" of `/market/tickers` is the use case's, counted over distinct pairs (`tickers`), not a cap of the door's on
 * the entries sent.
 */
const symbols = z.array(symbolInput).min(1);
const enc = encodeURIComponent;

export const marketTools: ToolDef[] = [
  defineTool({
    ...common,
    name: 'list_pairs',
    routes: ['GET /market/pairs'],
    title: 'Trading pairs',
    description:
      'Lists the tradable pairs (all quoted in USDT) with their order filters: min_qty and step_size (base asset), ' +
      'min_notional (USDT), tick_size. Filter by status active or inactive.',
    input: pairsQuery,
    output: pairsResponse,
    run: async (call, a) => m.pairs(call, a.status),
    rest: (a, http) => http({ method: 'GET', path: '/market/pairs', query: { status: a.status } }),
    summary: (r) => `${r.total} pairs`,
  }),
  defineTool({
    ...common,
    name: 'get_price',
    routes: ['GET /market/price/{symbol}'],
    title: 'Current price',
    description:
      'The current price (USDT) of one pair; stale: true with price_age_ms when the live feed has gone quiet ' +
      '(market orders are refused meanwhile). Errors: INVALID_SYMBOL for an unknown or inactive pair, ' +
      'PRICE_NOT_AVAILABLE when no price has arrived yet.',
    input: symbol,
    output: priceResponse,
    run: async (call, a) => priceOut(currentPrice(call, a.symbol), priceStaleness(call)),
    rest: (a, http) => http({ method: 'GET', path: `/market/price/${enc(a.symbol)}` }),
    summary: (r) => `${r.symbol} ${r.price} USDT at ${r.timestamp}`,
  }),
  defineTool({
    ...common,
    name: 'get_prices',
    routes: ['GET /market/prices'],
    title: 'Current prices',
    description:
      'Current prices (USDT) keyed by symbol: of the pairs named, or of every pair with a price when symbols is ' +
      'omitted. A pair without a price yet is left out; an unknown pair is INVALID_SYMBOL.',
    input: z.object({ symbols: symbols.optional() }),
    output: pricesResponse,
    run: async (call, a) => m.prices(call, a.symbols),
    rest: (a, http) => http({ method: 'GET', path: '/market/prices', query: { symbols: a.symbols } }),
    summary: (r) => `${r.count} prices`,
  }),
  defineTool({
    ...common,
    name: 'get_ticker',
    routes: ['GET /market/ticker/{symbol}'],
    title: '24-hour ticker',
    description:
      'Rolling 24-hour statistics of one pair: open, high, low, close (USDT), base and quote volume, change and ' +
      'change_pct (%), trade count. INVALID_SYMBOL for an unknown or inactive pair.',
    input: symbol,
    output: tickerResponse,
    run: async (call, a) => m.ticker(call, a.symbol),
    rest: (a, http) => http({ method: 'GET', path: `/market/ticker/${enc(a.symbol)}` }),
    summary: (r) => `${r.symbol} last ${r.close} USDT, ${r.change_pct} % over 24 h`,
  }),
  defineTool({
    ...common,
    name: 'get_tickers',
    routes: ['GET /market/tickers'],
    title: '24-hour tickers',
    description:
      'Rolling 24-hour statistics of 1 to 100 pairs, keyed by symbol (pairs without a ticker yet are left out). ' +
      'INVALID_SYMBOL for an unknown pair.',
    input: z.object({ symbols }),
    output: z.object({ tickers: tickersResponse }),
    run: async (call, a) => {
      const out: z.input<typeof tickersResponse> = {};
      for (const t of tickers(call, a.symbols, { field: 'symbols', location: 'arguments' })) {
        out[t.symbol] = batchTickerOut(t);
      }
      return { tickers: out };
    },
    rest: async (a, http) => ({
      tickers: await http({ method: 'GET', path: '/market/tickers', query: { symbols: a.symbols } }),
    }),
    summary: (r) => `${Object.keys(r.tickers).length} tickers`,
  }),
  defineTool({
    ...common,
    name: 'get_candles',
    routes: ['GET /market/candles/{symbol}'],
    title: 'Historical candles',
    description:
      'OHLCV candles of one pair, oldest first: interval 1m, 5m, 15m, 1h, 4h or 1d (default 1h), limit 1–1000 ' +
      '(default 100), optional ISO 8601 UTC start_time/end_time (inclusive, by open time). Without start_time the ' +
      'newest candles. INVALID_SYMBOL for an unknown pair or interval.',
    input: symbol.extend(candlesQuery.shape),
    output: candlesResponse,
    run: async (call, a) => {
      const q = candleQuery(
        call,
        a.symbol,
        { interval: a.interval, startTime: a.start_time, endTime: a.end_time, limit: a.limit },
        'arguments',
      );
      const candles = candlesOf(call, q).map(candleOut);
      return { symbol: q.pair.symbol, interval: q.interval, candles, count: candles.length };
    },
    rest: (a, http) =>
      http({
        method: 'GET',
        path: `/market/candles/${enc(a.symbol)}`,
        query: { interval: a.interval, limit: a.limit, start_time: a.start_time, end_time: a.end_time },
      }),
    summary: (r) => `${r.count} ${r.interval} candles of ${r.symbol}`,
  }),
  defineTool({
    ...common,
    name: 'get_recent_trades',
    routes: ['GET /market/trades/{symbol}'],
    title: 'Recent public trades',
    description:
      'Recent public trades of one active pair, newest first (limit 1–500, default 100): price (USDT), quantity ' +
      '(base), time, is_buyer_maker.',
    input: symbol.extend(tradesQuery.shape),
    output: tradesResponse,
    run: async (call, a) => m.trades(call, a.symbol, a.limit),
    rest: (a, http) =>
      http({ method: 'GET', path: `/market/trades/${enc(a.symbol)}`, query: { limit: a.limit } }),
    summary: (r) => `${r.trades.length} trades of ${r.symbol}`,
  }),
  defineTool({
    ...common,
    name: 'get_order_book',
    routes: ['GET /market/orderbook/{symbol}'],
    title: 'Order book',
    description:
      'The synthetic order book of one active pair around its current price: depth 5, 10 or 20 levels per side ' +
      '(default 10), each [price USDT, quantity base]; bids highest first, asks lowest first.',
    // A number, not an enum of 5, 10 and 20: the use case answers another depth with the spec's code
    // (`INVALID_SYMBOL`, "invalid order book depth 7: use 5, 10 or 20") as REST does, not a bare schema failure.
    input: symbol.extend({
      depth: z
        .number()
        .optional()
        .describe('levels per side: 5, 10 or 20 (default 10); another value is INVALID_SYMBOL'),
    }),
    output: orderBookResponse,
    run: async (call, a) => m.orderBook(call, a.symbol, a.depth),
    rest: (a, http) =>
      http({ method: 'GET', path: `/market/orderbook/${enc(a.symbol)}`, query: { depth: a.depth } }),
    summary: (r) => `${r.symbol}: best bid ${r.bids[0]?.[0] ?? '—'}, best ask ${r.asks[0]?.[0] ?? '—'} USDT`,
  }),
  defineTool({
    ...common,
    name: 'get_data_range',
    routes: ['GET /market/data-range'],
    title: 'Historical data range',
    description:
      'The range of historical candle data (for backtests): earliest and latest time, intervals, gaps, and the ' +
      'range of each pair.',
    input: z.object({}),
    output: dataRangeResponse,
    run: async (call) => m.dataRange(call),
    rest: (_a, http) => http({ method: 'GET', path: '/market/data-range' }),
    summary: (r) => `${r.total_pairs} pairs from ${r.earliest ?? '—'} to ${r.latest ?? '—'}`,
  }),
  defineTool({
    ...common,
    name: 'list_indicators',
    routes: ['GET /market/indicators/available'],
    title: 'Available indicators',
    description:
      'The indicators get_indicators computes (rsi, macd, sma, ema, bbands, atr, vwap): default period, whether ' +
      'a period may be given (name_period, e.g. sma_20), candles needed for a value, output fields, intervals.',
    input: z.object({}),
    output: availableIndicatorsResponse,
    run: async () => availableIndicators(),
    rest: (_a, http) => http({ method: 'GET', path: '/market/indicators/available' }),
    summary: (r) => `${r.indicators.length} indicators; default ${r.default.join(',')}`,
  }),
  defineTool({
    ...common,
    name: 'get_indicators',
    routes: ['GET /market/indicators/{symbol}'],
    title: 'Technical indicators',
    description:
      'Indicators of a pair at its newest closed candle of interval (default 1h), over the newest limit candles: ' +
      'decimal strings, null until enough candles exist. Errors: INVALID_SYMBOL, VALIDATION_ERROR (unknown ' +
      'indicator or interval).',
    input: symbol.extend(indicatorsQuery.shape),
    output: indicatorsResponse,
    run: async (call, a) => {
      const { symbol: pair, ...q } = a;
      return marketIndicators(call, pair, q);
    },
    rest: (a, http) => {
      const { symbol: pair, ...q } = a;
      return http({ method: 'GET', path: `/market/indicators/${enc(pair)}`, query: q });
    },
    summary: (r) => `${r.symbol} ${r.interval} indicators over ${r.candles_used} candles`,
  }),
];
