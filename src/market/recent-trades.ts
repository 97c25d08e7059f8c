import type { PriceTick } from './ticks';

/** A public trade as `/market/trades` serves it (spec "Public trade tick"), before formatting. */
export interface RecentTrade {
  tradeId: number;
  price: string;
  quantity: string;
  time: number;
  isBuyerMaker: boolean;
}

/**
 * The most recent trades of each symbol from the tick stream (issue item 4), in a fixed-size ring per symbol
 * (the spec's largest `limit`, 500). Price-only ticks are not trades and are not kept.
 */
export class RecentTrades {
  private readonly rings = new Map<string, { items: RecentTrade[]; next: number; size: number }>();

  constructor(readonly capacity = 500) {}

  add(tick: PriceTick): void {
    if (!tick.trade) return;
    let ring = this.rings.get(tick.symbol);
    if (!ring) {
      ring = { items: new Array<RecentTrade>(this.capacity), next: 0, size: 0 };
      this.rings.set(tick.symbol, ring);
    }
    ring.items[ring.next] = {
      tradeId: tick.tradeId,
      price: tick.price,
      quantity: tick.quantity,
      time: tick.time,
      isBuyerMaker: tick.isBuyerMaker,
    };
    ring.next = (ring.next + 1) % this.capacity;
    ring.size = Math.min(this.capacity, ring.size + 1);
  }

  /** Up to `limit` trades of `symbol`, newest first. */
  latest(symbol: string, limit: number): RecentTrade[] {
    const ring = this.rings.get(symbol);
    if (!ring) return [];
    const n = Math.min(limit, ring.size);
    const out: RecentTrade[] = [];
    for (let i = 1; i <= n; i++) out.push(ring.items[(ring.next - i + this.capacity) % this.capacity]!);
    return out;
  }
}
