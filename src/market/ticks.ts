/**
 * The tick: one price observation from a market source (a replayed intra-candle tick, a Binance trade or
 * mini-ticker, a synthetic step). Every price the venue serves comes from a tick and carries its time and
 * source (ARCHITECTURE §7).
 */
export type MarketSourceName = 'files' | 'binance' | 'synthetic';

export interface PriceTick {
  symbol: string;
  /** Price, 8-decimal string, and the same in 1e-8 units. */
  price: string;
  priceUnits: number;
  /** Base quantity traded, 8-decimal string and units; zero for price-only updates. */
  quantity: string;
  quantityUnits: bigint;
  /** Wall-clock time (ms since the epoch; a fraction carries microseconds). */
  time: number;
  /** Trade id (Binance's for `binance`; the replayed second for `files`; a counter for `synthetic`). */
  tradeId: number;
  /** True when the aggressor sold (Binance `m`). */
  isBuyerMaker: boolean;
  /**
   * True for a trade; false for a price-only update (a price forward-filled across a data gap, a mini-ticker
   * quote): it moves the price but adds no volume and no public trade.
   */
  trade: boolean;
  source: MarketSourceName;
}
