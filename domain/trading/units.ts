import { fromUnits } from '../market/decimal';
import { type Dec, dec } from './decimal';

/**
 * Exact integer arithmetic for the per-order figures of a fill (issue 23): prices, quantities and money with at most 8
 * decimal places as `bigint` counts of 1e-8 units, so a book walk, an average price or a fee costs a few small
 * integers instead of `bignumber.js` values (a `div` alone allocated ~1.3 kB: docs/benchmarks.md, "Trading").
 * Products of two 8-place values are 1e-16 units, which can exceed 2^53: hence `bigint`, not `number`.
 *
 * Every result equals what the decimal formulation it replaces gives, rounding included. The decimal code divides to
 * 40 places (ROUND_HALF_EVEN) and then rounds to 8; the integer code rounds the exact quotient once. The two agree
 * whenever the quotient has at least 30 places below its last kept digit and the divisor (in the integer form) is
 * below 10^28 — a remainder r of a divisor D is then either 0 or at least 1/D of a unit, too far from 0, 1/2 and 1
 * for the 40-place step to move it onto one of them. Every site that divides by a variable checks {@link EXACT_DIVISOR_BOUND} and otherwise takes
 * the decimal formula (property tests: test/fill-model/units.unit.test.ts).
 */

/** 10^8: one unit of an 8-place value. */
export const UNIT = 100_000_000n;

/** Divisors (integer forms) at or above this take the decimal formula (see the module's comment). */
export const EXACT_DIVISOR_BOUND = 10n ** 28n;

const LIMB_BIG = 10n ** 14n;
/** 10^6: a base-10¹⁴ fraction limb holds an 8-place fraction × 10^6. */
const TO_UNITS = 1e6;

/**
 * `v` in 1e-8 units, or `undefined` when it is not finite or has more than 8 decimal places. Read from the value's
 * own limbs (`bignumber.js` keeps a coefficient `c` in base-10¹⁴ limbs aligned to the decimal point, the exponent `e`
 * of its first digit, the sign `s`), without printing it: the common values (an integer part below 9 × 10^7, or
 * below 10^14 with its fraction) cost one `bigint` below 9 × 10^7, a few above.
 */
export const unitsOf = (v: Dec): bigint | undefined => {
  const c = v.c;
  const e = v.e;
  if (c === null || e === null) return undefined;
  // The power (in limbs) of c[0]: 0 for 1 ≤ |v| < 10^14, −1 for the first 14 places after the point.
  const top = Math.floor(e / 14);
  const last = top - (c.length - 1);
  if (last < -1) return undefined; // a limb 15–28 places after the point: nonzero (limbs past the value are dropped)
  let units: bigint;
  if (top === 0 && c.length <= 2) {
    const fraction = c.length === 2 ? c[1]! : 0;
    if (fraction % TO_UNITS !== 0) return undefined;
    const whole = c[0]!;
    units =
      whole < 90_000_000
        ? BigInt(whole * 1e8 + fraction / TO_UNITS)
        : BigInt(whole) * UNIT + BigInt(fraction / TO_UNITS);
  } else if (top === -1) {
    const fraction = c[0]!;
    if (fraction % TO_UNITS !== 0) return undefined;
    units = BigInt(fraction / TO_UNITS);
  } else {
    // The integer limbs, then the fraction limb if there is one.
    let whole = 0n;
    const integerLimbs = last === -1 ? c.length - 1 : c.length;
    for (let i = 0; i < integerLimbs; i++) whole = whole * LIMB_BIG + BigInt(c[i]!);
    for (let p = last; p > 0; p--) whole *= LIMB_BIG;
    let fraction = 0;
    if (last === -1) {
      fraction = c[c.length - 1]!;
      if (fraction % TO_UNITS !== 0) return undefined;
    }
    units = whole * UNIT + BigInt(fraction / TO_UNITS);
  }
  return v.s! < 0 ? -units : units;
};

/** {@link unitsOf}, throwing `RangeError` where it answers `undefined` (an 8-place value the rules validated). */
export const unitsOfChecked = (v: Dec, what: string): bigint => {
  const units = unitsOf(v);
  if (units === undefined)
    throw new RangeError(`${what} is not a decimal with at most 8 places: ${v.toString()}`);
  return units;
};

/**
 * `v` exactly as `int × 10^−scale` (any finite decimal, however many places), or `undefined` when not finite. For
 * the factors the rules take as they come (a fee rate, a 24h volume).
 */
export const exactOf = (v: Dec): { int: bigint; scale: number } | undefined => {
  const c = v.c;
  const e = v.e;
  if (c === null || e === null) return undefined;
  const top = Math.floor(e / 14);
  const last = top - (c.length - 1);
  let int = 0n;
  for (const limb of c) int = int * LIMB_BIG + BigInt(limb);
  let scale = 0;
  if (last >= 0) int *= LIMB_BIG ** BigInt(last);
  else scale = -14 * last;
  // Trailing zeros of the last limb are padding: dropped, so the integer form (a divisor) stays small.
  while (scale > 0 && int % 10n === 0n) {
    int /= 10n;
    scale--;
  }
  return { int: v.s! < 0 ? -int : int, scale };
};

/**
 * A one-entry memo of {@link exactOf} keyed by the decimal's identity: a rule reads the same decimal object on every
 * order (a fee rate; a pair's 24h volume between two ticks), so its integer form is worked out once per change.
 */
export const lastExactOf = (): ((v: Dec) => { int: bigint; scale: number } | undefined) => {
  let last: { of: Dec; exact: { int: bigint; scale: number } | undefined } | undefined;
  return (v) => {
    if (last?.of !== v) last = { of: v, exact: exactOf(v) };
    return last.exact;
  };
};

/** 10^n as a bigint, for the small n of the rules (a memo: the same powers recur on every order). */
const POWERS: bigint[] = [];
export const pow10 = (n: number): bigint => {
  let p = POWERS[n];
  if (p === undefined) {
    p = 10n ** BigInt(n);
    if (n < 64) POWERS[n] = p;
  }
  return p;
};

/** How a quotient is rounded to an integer: toward zero, away from zero, half to even. */
export type Rounding = 'down' | 'up' | 'half-even';

/**
 * `num / den` rounded to an integer by `rounding`, exact (no intermediate rounding). `num ≥ 0`, `den > 0`; throws
 * `RangeError` otherwise (a negative figure is the caller's sign to handle).
 */
export const divRound = (num: bigint, den: bigint, rounding: Rounding): bigint => {
  if (num < 0n || den <= 0n) throw new RangeError(`divRound needs num ≥ 0 and den > 0: ${num} / ${den}`);
  const q = num / den;
  const r = num - q * den;
  if (r === 0n || rounding === 'down') return q;
  if (rounding === 'up') return q + 1n;
  const twice = r * 2n;
  return twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
};

/** The decimal of `units` 1e-16 units: a product of two 8-place values (a notional of quantity × price), exact. */
export const decOfProductUnits = (units: bigint): Dec => dec(fromUnits(units)).shiftedBy(-8);

/**
 * The decimal of `units` 1e-8 units, through the parse memo of {@link dec}: a price, a slippage or a fee recurs on
 * every order of a tick, and its text is what the events carry anyway.
 */
export const decOfUnits = (units: bigint): Dec => dec(fromUnits(units));
