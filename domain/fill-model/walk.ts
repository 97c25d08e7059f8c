import { type Dec, min, ZERO } from '../trading/decimal';
import type { BookLevel } from './book';

/** What a walk of the book took. */
export interface Walk {
  /** Base quantity taken (≤ the order's), a multiple of the step size. */
  quantity: Dec;
  /** Σ level price × quantity taken, exact (not rounded), USDT. */
  notional: Dec;
  /** The levels consumed, best first: each level's price and the quantity taken from it. */
  levels: BookLevel[];
}

/**
 * Walks one side of the book for a taker (docs/trading-rules.md, "Taker fills"): takes the levels best first until
 * `quantity` is filled, the side is used up, or (with `limit`) the next level is beyond the limit — a buy takes
 * only asks ≤ limit, a sell only bids ≥ limit. `taken` is what the same wallet already took from this side at the
 * same price (its earlier orders on the same tick): that much of the top of the side is gone, so splitting an order
 * never buys a better average price than sending it whole. Pure.
 */
export const walkBook = (
  levels: readonly BookLevel[],
  quantity: Dec,
  options: { side: 'buy' | 'sell'; limit?: Dec | undefined; taken?: Dec | undefined },
): Walk => {
  let skip = options.taken ?? ZERO;
  let left = quantity;
  let notional = ZERO;
  const consumed: BookLevel[] = [];
  for (const level of levels) {
    if (left.lte(0)) break;
    const { limit } = options;
    if (limit && (options.side === 'buy' ? level.price.gt(limit) : level.price.lt(limit))) break;
    let available = level.quantity;
    if (skip.gt(0)) {
      const skipped = min(skip, available);
      skip = skip.minus(skipped);
      available = available.minus(skipped);
      if (available.lte(0)) continue;
    }
    const take = min(left, available);
    consumed.push({ price: level.price, quantity: take });
    notional = notional.plus(take.times(level.price));
    left = left.minus(take);
  }
  return { quantity: quantity.minus(left), notional, levels: consumed };
};
