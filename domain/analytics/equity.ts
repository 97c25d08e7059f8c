import { type Dec, ZERO } from '../trading/decimal';

/** A position as valuation needs it: quantity of the base asset and its cost basis (USDT, fees excluded). */
export interface ValuedHolding {
  symbol: string;
  quantity: Dec;
  cost: Dec;
}

/** A wallet's equity at some prices, exact (USDT; round with `roundHalfEven8` where it is stored or shown). */
export interface Valuation {
  /** cash + locked cash + Σ quantity × price. */
  equity: Dec;
  /** Σ (quantity × price − cost basis) over the holdings that have a price. */
  unrealized: Dec;
}

/**
 * Values a wallet (spec "Balance": `total_equity_usdt` = available cash + locked cash + market value of all
 * positions; ARCHITECTURE §10: never a sum of raw quantities). `cash` is USDT available plus locked. A holding
 * without a price counts at its cost basis with no unrealized PnL, as `GET /account/portfolio` does. Exact
 * products and sums (8-place inputs give at most 16 places), so the caller rounds once, like the portfolio.
 */
export const valueWallet = (
  cash: Dec,
  holdings: readonly ValuedHolding[],
  priceOf: (symbol: string) => Dec | undefined,
): Valuation => {
  let equity = cash;
  let unrealized = ZERO;
  for (const h of holdings) {
    const price = priceOf(h.symbol);
    if (price === undefined) {
      equity = equity.plus(h.cost);
      continue;
    }
    const value = h.quantity.times(price);
    equity = equity.plus(value);
    unrealized = unrealized.plus(value.minus(h.cost));
  }
  return { equity, unrealized };
};
