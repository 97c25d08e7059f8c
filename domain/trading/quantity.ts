import type { Pair } from '../market/pair';
import { type Dec, dec } from './decimal';

/** The filters of a pair the trading rules read (spec "Trading pair"). Values are decimal strings. */
export type PairFilters = Pick<
  Pair,
  'symbol' | 'baseAsset' | 'status' | 'minQty' | 'stepSize' | 'minNotional'
> &
  /** The price tick the fill model's book is laid on (`0.00000001` when absent). */
  Partial<Pick<Pair, 'tickSize'>>;

/** Why a quantity is refused (`INVALID_QUANTITY`), or undefined when it is valid. */
export type QuantityProblem =
  | { reason: 'not_positive'; message: string }
  | { reason: 'below_min_qty'; message: string; min_qty: string }
  | { reason: 'not_step_multiple'; message: string; step_size: string };

/**
 * Checks an order quantity against the pair (ARCHITECTURE §8 "Quantity"): > 0, ≥ `min_qty`, and a whole
 * multiple of `step_size` (a zero step size means no step constraint). Quantities are never rounded to the
 * step: a quantity off the grid is refused, so what the client asked for is what fills.
 */
export const checkQuantity = (quantity: Dec, pair: PairFilters): QuantityProblem | undefined => {
  if (quantity.lte(0)) return { reason: 'not_positive', message: 'quantity must be greater than 0' };
  const minQty = dec(pair.minQty);
  if (quantity.lt(minQty)) {
    return {
      reason: 'below_min_qty',
      message: `quantity ${quantity.toFixed()} is below the minimum ${minQty.toFixed()} of ${pair.symbol}`,
      min_qty: pair.minQty,
    };
  }
  const step = dec(pair.stepSize);
  if (step.gt(0) && !quantity.mod(step).isZero()) {
    return {
      reason: 'not_step_multiple',
      message: `quantity ${quantity.toFixed()} is not a multiple of the step size ${step.toFixed()} of ${pair.symbol}`,
      step_size: pair.stepSize,
    };
  }
  return undefined;
};

/** `quantity` rounded down to a multiple of `stepSize` (zero step: unchanged). */
export const floorToStep = (quantity: Dec, stepSize: Dec): Dec =>
  stepSize.gt(0) ? quantity.minus(quantity.mod(stepSize)) : quantity;
