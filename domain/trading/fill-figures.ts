import { fromUnits } from '../market/decimal';
import { type Dec, fmt, roundHalfEven8, ZERO } from './decimal';
import { decOfUnits, divRound, EXACT_DIVISOR_BOUND, exactOf, UNIT, unitsOf } from './units';

/**
 * The figures of a fill the ledger computes per order (notional, average entry, cost share, an order's average
 * executed price: domain/wallet/decide.ts), in integers where the values allow (domain/trading/units.ts), else by
 * the decimal formulas they replace; the same figures either way (property test:
 * test/fill-model/units.unit.test.ts, whose oracles are those formulas).
 */

/**
 * `(a × b + c × d) / e` of 8-place values, half-even to 8 places, as 1e-8 units: exact in integers (the products in
 * 1e-16 units over `e` in 1e-8), or `undefined` when a value is not a non-negative 8-place one or `e` is out of the
 * range where the decimal formula's 40-place division gives the same figure (domain/trading/units.ts). `a`/`b` or
 * `c`/`d` may be absent (a zero product).
 */
export const weighted8 = (
  a: Dec | undefined,
  b: Dec | undefined,
  c: Dec | undefined,
  d: Dec | undefined,
  e: Dec,
): bigint | undefined => {
  const den = unitsOf(e);
  if (den === undefined || den <= 0n || den >= EXACT_DIVISOR_BOUND) return undefined;
  const first = productUnits(a, b);
  const second = productUnits(c, d);
  if (first === undefined || second === undefined) return undefined;
  return divRound(first + second, den, 'half-even');
};

/** `x × y` in 1e-16 units (0 when either is absent), or `undefined` unless both are non-negative 8-place values. */
const productUnits = (x: Dec | undefined, y: Dec | undefined): bigint | undefined => {
  if (x === undefined || y === undefined) return 0n;
  const ux = unitsOf(x);
  const uy = unitsOf(y);
  return ux === undefined || uy === undefined || ux < 0n || uy < 0n ? undefined : ux * uy;
};

/**
 * The quantity-weighted average entry after a buy of `quantity` at `price` onto `held` bought at `average` (absent: no
 * position): `(average × held + quantity × price) / (held + quantity)`, half-even to 8 places (USDT per base unit).
 */
export const averageEntry8 = (
  average: Dec | undefined,
  held: Dec,
  quantity: Dec,
  price: Dec,
  after: Dec,
): Dec => {
  const units = weighted8(average, held, quantity, price, after);
  return units !== undefined
    ? decOfUnits(units)
    : roundHalfEven8((average ?? ZERO).times(held).plus(quantity.times(price)).div(after));
};

/**
 * The cost basis of selling `quantity` of `held` base units that cost `cost` USDT: `cost × quantity / held`,
 * half-even to 8 places (USDT).
 */
export const costShare8 = (cost: Dec, quantity: Dec, held: Dec): Dec => {
  const units = weighted8(cost, quantity, undefined, undefined, held);
  return units !== undefined ? decOfUnits(units) : roundHalfEven8(cost.times(quantity).div(held));
};

/** The notional `roundHalfEven8(a × b)` of two 8-place values (quantity × price): in integers when both are non-negative 8-place values. */
export const notional8 = (a: Dec, b: Dec): Dec => {
  const x = unitsOf(a);
  const y = unitsOf(b);
  if (x === undefined || y === undefined || x < 0n || y < 0n) return roundHalfEven8(a.times(b));
  return decOfUnits(divRound(x * y, UNIT, 'half-even'));
};

/**
 * An order's average executed price, `notional / executed` half-even to 8 places, as the event's text (USDT per base
 * unit). `notional` is Σ price × quantity of the order's fills, exact (up to 16 places: each a product of two 8-place
 * values, not the fills' notionals rounded to 8 places, which made a one-fill order's average differ from its fill's
 * price by up to 0.5e-8 / quantity); `executed` the quantity they filled. In integers (1e-16 units over 1e-8 units)
 * where the values allow, else the decimal formula.
 */
export const executedPriceText = (notional: Dec, executed: Dec): string => {
  if (executed.isZero()) return fmt(ZERO);
  const den = unitsOf(executed);
  const exact = exactOf(notional);
  if (
    den !== undefined &&
    den > 0n &&
    den < EXACT_DIVISOR_BOUND &&
    exact !== undefined &&
    exact.int >= 0n &&
    exact.scale <= 16
  ) {
    return fromUnits(divRound(exact.int * 10n ** BigInt(16 - exact.scale), den, 'half-even'));
  }
  return fmt(roundHalfEven8(notional.div(executed)));
};
