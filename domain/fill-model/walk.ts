import type { Dec } from '../trading/decimal';
import { decOfProductUnits, decOfUnits, unitsOfChecked } from '../trading/units';
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

/** What a walk took, in integers: {@link Walk}'s figures as 1e-8 units (the notional in 1e-16 units, exact). */
export interface UnitsWalk {
  /** Base quantity taken, 1e-8 units. */
  quantity: bigint;
  /** Σ level price × quantity taken, 1e-16 units of USDT (a product of two 8-place values), exact. */
  notional: bigint;
  /** The levels consumed, best first: the index of each in the side, and the quantity taken from it (1e-8 units). */
  taken: { index: number; quantity: bigint }[];
}

/**
 * {@link walkBook} over a side in 1e-8 units (`prices[i]`, `quantities[i]`: level i, best first), with the order's
 * `quantity`, the `limit` and the depth already `taken` in 1e-8 units too. Pure; allocates the result and one
 * `bigint` per figure it changes, no decimal.
 */
export const walkUnits = (
  prices: readonly bigint[],
  quantities: readonly bigint[],
  quantity: bigint,
  options: { side: 'buy' | 'sell'; limit?: bigint | undefined; taken?: bigint | undefined },
): UnitsWalk => {
  let skip = options.taken ?? 0n;
  let left = quantity;
  let notional = 0n;
  const taken: UnitsWalk['taken'] = [];
  const { limit } = options;
  const buy = options.side === 'buy';
  for (let i = 0; i < prices.length; i++) {
    if (left <= 0n) break;
    const price = prices[i]!;
    if (limit !== undefined && (buy ? price > limit : price < limit)) break;
    let available = quantities[i]!;
    if (skip > 0n) {
      const skipped = skip < available ? skip : available;
      skip -= skipped;
      available -= skipped;
      if (available <= 0n) continue;
    }
    // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers)
    const take = left < available ? left : available;
    taken.push({ index: i, quantity: take });
    notional += take * price;
    left -= take;
  }
  return { quantity: quantity - left, notional, taken };
};

/**
 * Walks one side of the book for a taker (docs/trading-rules.md, "Taker fills"): takes the levels best first until
 * `quantity` is filled, the side is used up, or (with `limit`) the next level is beyond the limit — a buy takes
 * only asks ≤ limit, a sell only bids ≥ limit. `taken` is what the same wallet already took from this side at the
 * same price (its earlier orders on the same tick): that much of the top of the side is gone, so splitting an order
 * never buys a better average price than sending it whole. Pure. The figures are added up in integers
 * ({@link walkUnits}); every value (the levels', `quantity`, `limit`, `taken`) has at most 8 decimal places, else
 * `RangeError`. The venue's fill model walks the cached book's units directly ({@link walkUnits}); this decimal form
 * is for callers that hold `BookLevel`s (the tests).
 */
export const walkBook = (
  levels: readonly BookLevel[],
  quantity: Dec,
  options: { side: 'buy' | 'sell'; limit?: Dec | undefined; taken?: Dec | undefined },
): Walk => {
  const walk = walkUnits(
    levels.map((l) => unitsOfChecked(l.price, 'a level price')),
    levels.map((l) => unitsOfChecked(l.quantity, 'a level quantity')),
    unitsOfChecked(quantity, 'the quantity'),
    {
      side: options.side,
      limit: options.limit && unitsOfChecked(options.limit, 'the limit'),
      taken: options.taken && unitsOfChecked(options.taken, 'the depth taken'),
    },
  );
  return {
    quantity: decOfUnits(walk.quantity),
    notional: decOfProductUnits(walk.notional),
    levels: walk.taken.map((t) => ({ price: levels[t.index]!.price, quantity: decOfUnits(t.quantity) })),
  };
};
