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
 * A decimal from the request as plain text. A string is taken as written (more than 8 places is refused later);
 * a JSON number, which cannot carry an exact decimal, is read as the nearest 8-place decimal, half-even (spec
 * conventions: "floats are accepted on input but lose precision"): `0.030000000000000002`, what `0.01 * 3` gives
 * in JavaScript, is `0.03`. The one reading of a JSON number for every decimal of the venue: an order's quantity and
 * prices (src/contract/trading.ts) and a starting balance (domain/shared/starting-balance.ts). A non-finite number
 * is `'NaN'`, which every parser of decimal text refuses.
 */
export const decimalText = (value: string | number): string =>
  typeof value === 'number'
    ? Number.isFinite(value)
      ? roundHalfEven8(dec(value)).toFixed()
      : 'NaN'
    : value.trim();

/**
 * The wire form: a decimal string with exactly 8 places (`"10000.00000000"`). Throws `RangeError` when the
 * value has more than 8 decimal places: every caller must round explicitly first.
 */
export const fmt = (v: Dec): string => {
  if (!v.isFinite()) throw new RangeError(`not a finite decimal: ${v.toString()}`);
  if ((v.decimalPlaces() ?? 0) > SCALE)
    throw new RangeError(`more than ${SCALE} decimal places: ${v.toFixed()}`);
  return v.isZero() ? '0.00000000' : fixed8(v);
};

/** Zeros to pad a base-10¹⁴ limb of a coefficient to its 14 digits. */
const LIMB_PAD = '00000000000000';
/** Zeros to pad the fraction to {@link SCALE} places. */
const ZEROS = '00000000';

/**
 * `v.toFixed(8)` for a finite, non-zero value with at most 8 decimal places (what {@link fmt} checked), written
 * from the value's own digits: `bignumber.js` keeps a coefficient `c` in base-10¹⁴ limbs (most significant first,
 * no leading zeros in the first, the last without trailing zeros past the value's last digit), the exponent `e` (the
 * power of ten of the first digit) and the sign `s`. Its `toFixed` builds the same text through a rounding copy and
 * several intermediate strings: ~15 % of a market order's decision went there (docs/benchmarks.md, "Trading",
 * issue 23). Equal to `toFixed(8)` on every such value (property test in test/trading/decimal-memo.unit.test.ts).
 */
const fixed8 = (v: Dec): string => {
  const c = v.c!;
  const e = v.e!;
  let digits = String(c[0]);
  for (let i = 1; i < c.length; i++) {
    const limb = String(c[i]);
    digits += LIMB_PAD.slice(limb.length) + limb;
  }
  // The limbs after the first are zero-padded to 14 digits, so the text may run on with zeros past the value's last
  // digit: at most 8 places are digits of the value, the rest is cut.
  let text: string;
  if (e < 0) {
    // 0.000ddd: -e - 1 zeros after the point, then the digits.
    const fraction = (ZEROS.slice(0, -e - 1) + digits).slice(0, SCALE);
    text = `0.${fraction}${ZEROS.slice(0, SCALE - fraction.length)}`;
  } else if (digits.length <= e + 1) {
    // An integer: its digits, then zeros up to the units.
    text = `${digits}${'0'.repeat(e + 1 - digits.length)}.00000000`;
  } else {
    const fraction = digits.slice(e + 1, e + 1 + SCALE);
    text = `${digits.slice(0, e + 1)}.${fraction}${ZEROS.slice(0, SCALE - fraction.length)}`;
  }
  return v.s! < 0 ? `-${text}` : text;
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
