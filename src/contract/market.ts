import { z } from 'zod';
import { INTERVALS } from '../../domain/market/intervals';
import { decimalOutput, intervalQuery, ohlcvFields, queryInt, timestamp } from './common';

/**
 * Schemas of the public market-data endpoints (spec "Market data endpoints", "Market records", "Limits"), shared
 * by the routes (`src/http/routes/market.ts`) and every client typed from them (the dashboard).
 */

// Up to the router's parameter length (100): a longer or odd symbol is simply unknown (`INVALID_SYMBOL` 400, the
// spec's code for an unknown pair), not a `VALIDATION_ERROR`.
export const symbolParams = z.object({
  symbol: z.string().min(1).max(100).describe('pair symbol, case-insensitive, e.g. BTCUSDT'),
});

/** A trading pair with its order filters (spec "Trading pair"). */
export const pairSchema = z.object({
  symbol: z.string(),
  base_asset: z.string(),
  quote_asset: z.literal('USDT'),
  status: z.enum(['active', 'inactive']),
  min_qty: decimalOutput.describe('minimum order quantity (base asset)'),
  step_size: decimalOutput.describe('quantity increment'),
  min_notional: decimalOutput.describe('minimum order value in USDT'),
  tick_size: decimalOutput.describe('price increment'),
});

/** `GET /market/pairs` query and response. */
export const pairsQuery = z.object({ status: z.enum(['active', 'inactive']).optional() });
export const pairsResponse = z.object({ pairs: z.array(pairSchema), total: z.number().int() });

/** `GET /market/ticker/{symbol}` response: the rolling 24-hour ticker (spec "Market records"). */
export const tickerResponse = z.object({
  symbol: z.string(),
  open: decimalOutput.describe('first price of the rolling 24-hour window'),
  high: decimalOutput,
  low: decimalOutput,
  close: decimalOutput.describe('last price'),
  volume: decimalOutput.describe('base-asset volume over 24 h'),
  quote_volume: decimalOutput.describe('USDT volume over 24 h'),
  change: decimalOutput.describe('close − open'),
  change_pct: decimalOutput.describe('(close − open) / open × 100'),
  trade_count: z.number().int(),
  timestamp: timestamp.describe('time of the last tick in the window'),
});

const batchTickerSchema = tickerResponse.pick({
  symbol: true,
  open: true,
  high: true,
  low: true,
  close: true,
  volume: true,
  change_pct: true,
  trade_count: true,
});

/** `GET /market/tickers` query and response (keyed by symbol). */
export const tickersQuery = z.object({
  symbols: z.string().min(1).max(20_000).describe('comma-separated symbols, at most 100'),
});
export const tickersResponse = z.record(z.string(), batchTickerSchema);

/** One candle (spec "Market records"). */
export const candleSchema = z.object({
  time: timestamp.describe('open time of the candle'),
  ...ohlcvFields,
  volume: decimalOutput.describe('base-asset volume'),
  trade_count: z.number().int().describe('number of trades; 0 when the source file lacks the column'),
});

/** `GET /market/price/{symbol}` response. */
export const priceResponse = z.object({
  symbol: z.string(),
  price: decimalOutput,
  timestamp: timestamp.describe('when the price was observed, microsecond precision'),
  stale: z
    .literal(true)
    .optional()
    .describe(
      'present only when the live feed has been silent past MAX_PRICE_AGE_MS: market orders are refused meanwhile',
    ),
  price_age_ms: z.number().int().optional().describe('with `stale`: how long the feed has been silent (ms)'),
});

/** `GET /market/prices` query and response. */
export const pricesQuery = z.object({
  symbols: z
    .string()
    .max(20_000)
    .optional()
    .describe('comma-separated symbols (at least one); omitted: every pair with a price'),
});
export const pricesResponse = z.object({
  prices: z.record(z.string(), decimalOutput),
  timestamp,
  count: z.number().int(),
});

/** `GET /market/candles/{symbol}` query and response. */
export const candlesQuery = z.object({
  interval: intervalQuery.describe('1m, 5m, 15m, 1h, 4h or 1d (default 1h); also seconds, 60 … 86400'),
  limit: queryInt({ min: 1, max: 1000, default: 100 }),
  start_time: z.string().max(40).optional().describe('ISO 8601 UTC, inclusive'),
  end_time: z.string().max(40).optional().describe('ISO 8601 UTC, inclusive'),
});
export const candlesResponse = z.object({
  symbol: z.string(),
  interval: z.enum(INTERVALS),
  candles: z.array(candleSchema),
  count: z.number().int(),
});

const tradeSchema = z.object({
  trade_id: z.number().int(),
  price: decimalOutput,
  quantity: decimalOutput,
  time: timestamp,
  is_buyer_maker: z.boolean(),
});

/** `GET /market/trades/{symbol}` query and response (newest first). */
export const tradesQuery = z.object({ limit: queryInt({ min: 1, max: 500, default: 100 }) });
export const tradesResponse = z.object({ symbol: z.string(), trades: z.array(tradeSchema) });

const levelSchema = z.tuple([decimalOutput, decimalOutput]).describe('[price, quantity]');

/** `GET /market/orderbook/{symbol}` query and response. */
export const orderBookQuery = z.object({
  depth: z.string().max(8).optional().describe('5, 10 or 20 (default 10)'),
});
export const orderBookResponse = z.object({
  symbol: z.string(),
  bids: z.array(levelSchema).describe('highest price first'),
  asks: z.array(levelSchema).describe('lowest price first'),
  timestamp,
});

/** A `data_gaps` entry: missing candles shared by some pairs (`/market/data-range`, backtest create and start). */
export const gapSchema = z.object({
  interval: z.enum(INTERVALS),
  start: timestamp.describe('open time of the first missing candle'),
  end: timestamp.describe('open time of the next stored candle (the gap is [start, end))'),
  missing_candles: z.number().int(),
  symbols: z.array(z.string()).describe('pairs with this gap'),
});

/** `GET /market/data-range` response. */
export const dataRangeResponse = z.object({
  earliest: timestamp.nullable(),
  latest: timestamp.nullable(),
  total_pairs: z.number().int().describe('pairs with historical candles'),
  intervals_available: z.array(z.enum(INTERVALS)),
  data_gaps: z.array(gapSchema),
  pairs: z.array(
    z.object({
      symbol: z.string(),
      earliest: timestamp,
      latest: timestamp,
      intervals: z.array(z.enum(INTERVALS)).describe('intervals served'),
      stored_intervals: z.array(z.enum(INTERVALS)).describe('intervals stored as imported'),
    }),
  ),
});
