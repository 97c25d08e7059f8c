import BigNumber from 'bignumber.js';

/**
 * Exact money for the trading rules (ARCHITECTURE §2.3): a private `bignumber.js` constructor, so no other
 * module's `BigNumber.config` can change how the ledger divides or rounds. Every rounding is explicit at the
 * call site; {@link fmt} refuses to print a value with more than 8 decimal places, so nothing is silently lost.
 */
export const Decimal = BigNumber.clone({
  DECIMAL_PLACES: 40,
  ROUNDING_MODE: BigNumber.ROUND_HALF_EVEN,
  EXPONENTIAL_AT: [-1e9, 1e9],
});

/** A decimal value (an instance of {@link Decimal}). */
export type Dec = BigNumber;

/** Decimal places of money, prices and quantities (spec: up to 8). */
export const SCALE = 8;

/** Distinct decimal strings remembered by {@link dec} per generation (two generations are kept). */
const PARSED_PER_GENERATION = 4_096;
let parsed = new Map<string, Dec>();
let parsedBefore = new Map<string, Dec>();

/**
 * `value` as a {@link Decimal}. A string is parsed once while it stays in use: the same text gives the same value
 * (values are immutable, so sharing one is safe), from a two-generation memo of the last few thousand distinct
 * texts. Parsing is the costliest step of the ledger's arithmetic (~1 µs) and an order parses the same prices,
 * quantities, fee rates and zeros several times: its decision, the state's fold of its events, the read models'
 * folds (docs/benchmarks.md, "Trading", 2026-11-29). A `Decimal` is returned as it is (it cannot change).
 */
export const dec = (value: BigNumber.Value): Dec => {
  if (typeof value !== 'string') return value instanceof Decimal ? value : new Decimal(value);
  let v = parsed.get(value);
  if (v === undefined) {
    v = parsedBefore.get(value) ?? new Decimal(value);
    if (parsed.size >= PARSED_PER_GENERATION) {
      parsedBefore = parsed;
      parsed = new Map();
    }
    parsed.set(value, v);
  }
  return v;
};

export const ZERO: Dec = dec(0);
export const ONE: Dec = dec(1);
export const HUNDRED: Dec = dec(100);

/** Rounds down (toward zero) to 8 decimal places: fees, quantities. */
export const roundDown8 = (v: Dec): Dec => v.decimalPlaces(SCALE, BigNumber.ROUND_DOWN);
/** Rounds up (away from zero) to 8 decimal places: locks (a lock always covers its order). */
export const roundUp8 = (v: Dec): Dec => v.decimalPlaces(SCALE, BigNumber.ROUND_UP);
/** Rounds half to even to 8 decimal places: shares of a cost basis, equity, participation. */
export const roundHalfEven8 = (v: Dec): Dec => v.decimalPlaces(SCALE, BigNumber.ROUND_HALF_EVEN);

/**
 * The wire form: a decimal string with exactly 8 places (`"10000.00000000"`). Throws `RangeError` when the
 * value has more than 8 decimal places: every caller must round explicitly first.
 */
export const fmt = (v: Dec): string => {
  if (!v.isFinite()) throw new RangeError(`not a finite decimal: ${v.toString()}`);
  if ((v.decimalPlaces() ?? 0) > SCALE)
    throw new RangeError(`more than ${SCALE} decimal places: ${v.toFixed()}`);
  return v.isZero() ? '0.00000000' : v.toFixed(SCALE);
};

/** Like {@link fmt} for an optional value. */
export const fmtOrNull = (v: Dec | null | undefined): string | null => (v == null ? null : fmt(v));

const PLAIN = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/**
 * Parses a plain decimal string (no exponent, no spaces inside; sign allowed) into a value. Returns `undefined`
 * for anything else, or when it has more than 8 significant decimal places.
 */
export const parseDecimal = (text: string): Dec | undefined => {
  const t = text.trim();
  if (!PLAIN.test(t)) return undefined;
  const v = dec(t);
  if (!v.isFinite() || (v.decimalPlaces() ?? 0) > SCALE) return undefined;
  return v;
};

/** The smaller of two values. */
export const min = (a: Dec, b: Dec): Dec => (a.lte(b) ? a : b);
/** The larger of two values. */
export const max = (a: Dec, b: Dec): Dec => (a.gte(b) ? a : b);
