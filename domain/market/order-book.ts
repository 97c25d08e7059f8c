import { fromUnits } from './decimal';
import { hash32, mulberry32 } from './random';

/**
 * The synthetic order book (spec: "levels are generated deterministically around the current mid-price and do
 * not reflect real liquidity"; ARCHITECTURE §7). Rules:
 * - Half-spread and level spacing scale with liquidity: `spread_bps = clamp(10 / sqrt(quote_volume_24h / 1e6),
 *   0.5, 50)`: about 0.5 bp for BTC-sized volume (billions of USDT a day), 10 bp at 1 M USDT, 50 bp for the
 *   thinnest pairs. Level i (0-based) sits `spread/2 + i × spread/2` away from the mid.
 * - Bids are floored and asks ceiled to the tick size; prices strictly decrease (bids) / increase (asks).
 * - Each level holds about `quote_volume_24h × 1e-5 × (1 + i/2)` USDT, varied ±30 % by a generator seeded with
 *   the symbol and the mid-price, rounded down to the step size (at least one step).
 * The same inputs always give the same book.
 */
export interface OrderBookInput {
  symbol: string;
  /** Mid-price in 1e-8 units. */
  mid: number;
  /** Price tick and quantity step in 1e-8 units (≥ 1). */
  tickUnits: number;
  stepUnits: number;
  /** 24h quote volume in USDT (a scale only; 0 when unknown). */
  quoteVolume24h: number;
  /** Levels per side. */
  depth: number;
}

/** `[price, quantity]` decimal strings per level (spec "Order book entry"). */
export interface OrderBookSides {
  bids: [string, string][];
  asks: [string, string][];
  spreadBps: number;
}

/** Builds the synthetic book (pure). */
export const buildOrderBook = (input: OrderBookInput): OrderBookSides => {
  const { mid, depth } = input;
  const tick = Math.max(1, Math.round(input.tickUnits));
  const step = Math.max(1, Math.round(input.stepUnits));
  const qv = Math.max(input.quoteVolume24h, 1);
  const spreadBps = Math.min(50, Math.max(0.5, 10 / Math.sqrt(qv / 1e6)));
  const rng = mulberry32(hash32(input.symbol, mid));
  const levelUsdt = Math.max(qv * 1e-5, 10);
  const bids: [string, string][] = [];
  const asks: [string, string][] = [];
  let lastBid = Number.POSITIVE_INFINITY;
  let lastAsk = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < depth; i++) {
    const offset = ((spreadBps / 2) * (1 + i)) / 10_000;
    let bid = Math.floor((mid * (1 - offset)) / tick) * tick;
    if (bid >= lastBid) bid = lastBid - tick;
    if (bid >= mid) bid = Math.floor((mid - 1) / tick) * tick;
    let ask = Math.ceil((mid * (1 + offset)) / tick) * tick;
    if (ask <= lastAsk) ask = lastAsk + tick;
    if (ask <= mid) ask = Math.ceil((mid + 1) / tick) * tick;
    lastBid = bid;
    lastAsk = ask;
    const size = (side: number) => {
      const usdt = levelUsdt * (1 + i / 2) * (0.7 + 0.6 * rng());
      const qty = (usdt / (side / 1e8)) * 1e8; // base units
      return Math.max(step, Math.floor(qty / step) * step);
    };
    if (bid > 0) bids.push([fromUnits(bid), fromUnits(size(bid))]);
    asks.push([fromUnits(ask), fromUnits(size(ask))]);
  }
  return { bids, asks, spreadBps };
};
