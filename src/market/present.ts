import type { Candle } from '../../domain/market/candle';
import { gapOut } from '../../domain/market/gaps';
import type { Pair } from '../../domain/market/pair';
import { isoMicros, isoMillis } from '../../domain/market/time';
import type { Ticker } from './feed';
import type { CachedPrice } from './price-cache';
import type { RecentTrade } from './recent-trades';
import type { DataRange, OrderBook } from './services';
import type { PriceStaleness } from './staleness';

/**
 * The mapping of market data to the wire (spec "Market records"; `src/contract/market.ts` has the schemas): shared
 * by every door that shows market data (REST `/market/*`, the MCP market tools). Decimals pass through as the
 * feed keeps them (8-place strings); times are ISO 8601 UTC, a price's with microseconds.
 */

/** A trading pair with its order filters. */
export const pairOut = (p: Pair) => ({
  symbol: p.symbol,
  base_asset: p.baseAsset,
  quote_asset: p.quoteAsset,
  status: p.status,
  min_qty: p.minQty,
  step_size: p.stepSize,
  min_notional: p.minNotional,
  tick_size: p.tickSize,
});

/**
 * One price (`GET /market/price/{symbol}`); with the feed's staleness, marked `stale` with its age (ms) — market
 * orders are refused meanwhile.
 */
export const priceOut = (p: CachedPrice, stale?: PriceStaleness) => ({
  symbol: p.symbol,
  price: p.price,
  timestamp: isoMicros(p.time),
  ...(stale ? { stale: true as const, price_age_ms: stale.age_ms } : {}),
});

/** What every ticker shows first: its pair, and the window's open, high, low, close and base volume. */
const ohlcvOut = (t: Ticker) => ({
  symbol: t.symbol,
  open: t.open,
  high: t.high,
  low: t.low,
  close: t.close,
  volume: t.volume,
});

/** A rolling 24-hour ticker. */
export const tickerOut = (t: Ticker) => ({
  ...ohlcvOut(t),
  quote_volume: t.quoteVolume,
  change: t.change,
  change_pct: t.changePct,
  trade_count: t.tradeCount,
  timestamp: isoMillis(t.time),
});

/** A ticker in a batch (`GET /market/tickers`): fewer fields. */
export const batchTickerOut = (t: Ticker) => ({
  ...ohlcvOut(t),
  change_pct: t.changePct,
  trade_count: t.tradeCount,
});

/** One candle. */
export const candleOut = (c: Candle) => ({
  time: isoMillis(c.openTime),
  open: c.open,
  high: c.high,
  low: c.low,
  close: c.close,
  volume: c.volume,
  trade_count: c.tradeCount ?? 0,
});

/** One public trade. */
export const recentTradeOut = (t: RecentTrade) => ({
  trade_id: t.tradeId,
  price: t.price,
  quantity: t.quantity,
  time: isoMillis(t.time),
  is_buyer_maker: t.isBuyerMaker,
});

/** An order book. */
export const orderBookOut = (book: OrderBook) => ({
  symbol: book.symbol,
  bids: book.bids,
  asks: book.asks,
  timestamp: isoMillis(book.time),
});

/** The data range (`GET /market/data-range`). */
export const dataRangeOut = (r: DataRange) => ({
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
});
