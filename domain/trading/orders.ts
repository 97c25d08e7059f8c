import { type Dec, HUNDRED, ONE, roundUp8 } from './decimal';
import { MAX_SLIPPAGE_PCT } from './slippage';
import { decOfUnits, UNIT, unitsOf } from './units';

/** The largest slippage as a fraction (0.005), computed once. */
const MAX_SLIPPAGE_FRACTION = MAX_SLIPPAGE_PCT.div(HUNDRED);

/** Order sides and types (spec "Order"). */
export type OrderSide = 'buy' | 'sell';
export type OrderType = 'market' | 'limit' | 'stop_loss' | 'take_profit';
export const ORDER_SIDES = ['buy', 'sell'] as const satisfies readonly OrderSide[];
/**
 * The largest quantity, price or trigger price an order may carry (exclusive), as a decimal string: 10^15, far
 * above any real order and well inside what the read models store (`numeric(38, 8)`). Without a bound a
 * 38-digit quantity was recorded (as a rejection) and the `orders` read model could not store it, which
 * stopped that read model for every account. The HTTP schema and the wallet decider both enforce it.
 */
export const MAX_ORDER_DECIMAL = '1000000000000000';

/** The gcd of two positive integers (Euclid). */
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

/**
 * The largest value on the grid of `step` (a decimal above 0 with at most 8 places: a pair's `step_size`, or the
 * ledger's unit 0.00000001 for prices) that an order may carry as its quantity, price or trigger price and that a
 * client reading it as a JavaScript number gets back exactly: strictly below {@link MAX_ORDER_DECIMAL} (the wallet
 * decider refuses 10^15 and more, `domain/wallet/decide.ts`) and exactly representable as an IEEE-754 double
 * (`Number("999999999999999.99999999")` is 10^15, which the decider refuses: ccxt parses Binance's filters so).
 * Every multiple of 1/8 below 2^50 (> 10^15) is a double, so this is the last multiple of lcm(`step`, 1/8) below
 * 10^15: 999999999999999.875 for 0.00000001 or 0.001, 999999999999999.5 for 0.1, 0 when that multiple is 10^15 or
 * more. Throws a RangeError for a step ≤ 0 or one with more than 8 places (no pair has one).
 */
export const largestOrderDecimal = (step: Dec): Dec => {
  const stepUnits = unitsOf(step);
  if (stepUnits === undefined || stepUnits <= 0n)
    throw new RangeError(`not a step of the 8-place grid: ${step.toFixed()}`);
  const eighthUnits = UNIT / 8n;
  const grid = (stepUnits / gcd(stepUnits, eighthUnits)) * eighthUnits;
  const limitUnits = BigInt(MAX_ORDER_DECIMAL) * UNIT;
  return decOfUnits(((limitUnits - 1n) / grid) * grid);
};

export const ORDER_TYPES = [
  'market',
  'limit',
  'stop_loss',
  'take_profit',
] as const satisfies readonly OrderType[];

/**
 * How long an order stays open (docs/trading-rules.md, "Time in force"; Binance's `timeInForce`): `GTC` (good till
 * cancelled, the default: what every order did before), `IOC` (immediate or cancel: what fills now, the rest is
 * cancelled), `FOK` (fill or kill: all now, or nothing and the order is cancelled).
 */
export type TimeInForce = 'GTC' | 'IOC' | 'FOK';
export const TIME_IN_FORCE = ['GTC', 'IOC', 'FOK'] as const satisfies readonly TimeInForce[];

/** The price that decides a pending order: the limit price of a limit order, the trigger of a stop. */
export interface PendingTerms {
  side: OrderSide;
  type: Exclude<OrderType, 'market'>;
  /** Limit price (limit) or trigger price (stop_loss, take_profit). */
  level: Dec;
}

/**
 * In which direction a pending order fires (ARCHITECTURE §8, §16: stops are side-aware):
 * - `at_or_below`: buy limit (price ≤ limit), sell stop_loss (price ≤ trigger), buy take_profit (price ≤ trigger);
 * - `at_or_above`: sell limit (price ≥ limit), buy stop_loss (price ≥ trigger), sell take_profit (price ≥ trigger).
 */
export const triggerDirection = (
  side: OrderSide,
  type: PendingTerms['type'],
): 'at_or_below' | 'at_or_above' => {
  const below = type === 'limit' ? side === 'buy' : type === 'stop_loss' ? side === 'sell' : side === 'buy';
  return below ? 'at_or_below' : 'at_or_above';
};

/** True when `price` reaches the order's limit or trigger. */
export const isTriggered = (terms: PendingTerms, price: Dec): boolean =>
  triggerDirection(terms.side, terms.type) === 'at_or_below'
    ? price.lte(terms.level)
    : price.gte(terms.level);

/**
 * The collateral a pending order locks (ARCHITECTURE §8 "Locks"), rounded up to 8 decimal places:
 * - buy limit: `qty × limit × (1 + fee rate)` USDT (the notional `qty × limit` rounded up first);
 * - buy stop_loss / take_profit: `qty × trigger × (1 + fee rate + max slippage)` USDT (max slippage 0.5%);
 * - any sell: the base quantity itself.
 */
export const lockFor = (terms: PendingTerms, quantity: Dec, feeRate: Dec): Dec => {
  if (terms.side === 'sell') return quantity;
  const margin = terms.type === 'limit' ? feeRate : feeRate.plus(MAX_SLIPPAGE_FRACTION);
  // Rounding the notional up first makes the lock cover the fill exactly: a limit buy's fill costs
  // round(qty × limit) + fee ≤ roundUp(qty × limit) × (1 + fee rate) ≤ lock.
  return roundUp8(roundUp8(quantity.times(terms.level)).times(ONE.plus(margin)));
};
