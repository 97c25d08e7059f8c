import type { MarketSourceName, PriceTick } from './ticks';

/** The latest price of a symbol with when and where it was observed (ARCHITECTURE §7). */
export interface CachedPrice {
  symbol: string;
  /** 8-decimal string. */
  price: string;
  /** Observation time (ms since the epoch, may carry a fraction for microseconds). */
  time: number;
  source: MarketSourceName;
  /**
   * The symbol's price updates recorded by this process so far (1, 2, …; restarts at 1 with the process): the
   * update id of the synthetic book built around the price (Binance's `lastUpdateId` / depth stream `u`), which
   * must grow with every change, even two within one millisecond.
   */
  updateId: number;
}

/**
 * In-memory price cache: one entry per symbol, replaced by every newer tick. Reads are a map lookup — the
 * `/market/price` path never touches the database.
 */
export class PriceCache {
  private readonly entries = new Map<string, CachedPrice>();

  /** Records `tick` unless the cache already holds a newer price for its symbol. */
  update(tick: PriceTick): void {
    const current = this.entries.get(tick.symbol);
    if (current && current.time > tick.time) return;
    this.entries.set(tick.symbol, {
      symbol: tick.symbol,
      price: tick.price,
      time: tick.time,
      source: tick.source,
      updateId: (current?.updateId ?? 0) + 1,
    });
  }

  get(symbol: string): CachedPrice | undefined {
    return this.entries.get(symbol);
  }

  /** Every cached price, in insertion order. */
  all(): IterableIterator<CachedPrice> {
    return this.entries.values();
  }

  get size(): number {
    return this.entries.size;
  }
}
