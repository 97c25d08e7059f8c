import type { Pair } from '../market/pair';
import { type Dec, dec, ONE } from './decimal';

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

/** Step sizes (their text) seen, and the decimal places a power of ten ≤ 1 allows, or null for any other step. */
const stepPlaces = new Map<string, number | null>();
/** At most this many step texts are remembered (pairs have a handful of distinct step sizes). */
const STEP_PLACES = 256;

/**
 * Whether `quantity` (> 0) is a whole multiple of `step` (> 0, whose text is `stepText`). For a step `10^-k`
 * (`0.00001`, `1`: the pairs' usual steps) that is "no more than k decimal places", read from the value's digits;
 * any other step takes the remainder (`mod`, a division). Same answer both ways.
 */
const isStepMultiple = (quantity: Dec, step: Dec, stepText: string): boolean => {
  let places = stepPlaces.get(stepText);
  if (places === undefined) {
    const dp = step.decimalPlaces() ?? 0;
    places = step.eq(ONE.shiftedBy(-dp)) ? dp : null;
    if (stepPlaces.size < STEP_PLACES) stepPlaces.set(stepText, places);
  }
  return places === null ? quantity.mod(step).isZero() : (quantity.decimalPlaces() ?? 0) <= places;
};

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
  if (step.gt(0) && !isStepMultiple(quantity, step, pair.stepSize)) {
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
