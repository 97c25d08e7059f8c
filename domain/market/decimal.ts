/**
 * Exact decimal helpers for market values (ARCHITECTURE §2.3: never a float for a price or quantity).
 * Values on the wire are decimal strings with exactly 8 decimal places ("43250.12000000"). Inside, a value is
 * either that normalized string or an integer count of 1e-8 units: a `bigint` (volumes, sums) or a safe-integer
 * `number` (prices: 9e15 units is 90 million USDT, far above any USDT price).
 */

/** Decimal places of every market value (Binance spot uses 8). */
export const SCALE = 8;
const UNIT = 10n ** BigInt(SCALE);
const PLAIN = /^([+-]?)(\d+)(?:\.(\d*))?$/;
const NORMALIZED = /^(0|[1-9]\d*)\.\d{8}$/;

/**
 * Normalizes a plain decimal (`"7195.24"`, `"0.5"`, `"00012"`, `"-1.5"`) to 8 decimal places. Returns
 * `undefined` for anything else: exponents, empty strings, `NaN`, or more than 8 significant decimal places
 * (digits beyond the 8th must be zeros; nothing is silently rounded away).
 */
export const normalizeDecimal = (raw: string): string | undefined => {
  if (NORMALIZED.test(raw)) return raw;
  const m = PLAIN.exec(raw.trim());
  if (!m) return undefined;
  const sign = m[1] === '-' ? '-' : '';
  const int = m[2]!.replace(/^0+(?=\d)/, '');
  const fracRaw = m[3] ?? '';
  if (fracRaw.length > SCALE && /[^0]/.test(fracRaw.slice(SCALE))) return undefined;
  const frac = fracRaw.slice(0, SCALE).padEnd(SCALE, '0');
  const isZero = /^0+$/.test(int) && /^0+$/.test(frac);
  return `${isZero ? '' : sign}${int}.${frac}`;
};

/** Integer 1e-8 units of a decimal string (any plain decimal with at most 8 places). Throws otherwise. */
export const toUnits = (value: string): bigint => {
  if (NORMALIZED.test(value)) return BigInt(value.replace('.', ''));
  const n = normalizeDecimal(value);
  if (n === undefined) throw new RangeError(`not a decimal with at most ${SCALE} places: ${value}`);
  const negative = n.startsWith('-');
  const digits = (negative ? n.slice(1) : n).replace('.', '');
  const units = BigInt(digits);
  return negative ? -units : units;
};

/** Units as a safe-integer `number` (prices). Throws when the value does not fit exactly. */
export const toUnitsNumber = (value: string): number => {
  const units = toUnits(value);
  const n = Number(units);
  if (!Number.isSafeInteger(n)) throw new RangeError(`value too large for exact price arithmetic: ${value}`);
  return n;
};

/** The 8-decimal string of `units` (bigint or safe-integer number) 1e-8 units. */
export const fromUnits = (units: bigint | number): string => {
  const u = typeof units === 'bigint' ? units : BigInt(units);
  const negative = u < 0n;
  const abs = negative ? -u : u;
  const int = abs / UNIT;
  const frac = (abs % UNIT).toString().padStart(SCALE, '0');
  return `${negative ? '-' : ''}${int}.${frac}`;
};

/**
 * Compares two normalized non-negative decimals (the output of {@link normalizeDecimal}) without converting
 * them: -1, 0 or 1. Fast path for candle validation and aggregation.
 */
export const compareNormalized = (a: string, b: string): number => {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
};

/** The larger of two normalized non-negative decimals. */
export const maxNormalized = (a: string, b: string): string => (compareNormalized(a, b) >= 0 ? a : b);

/** The smaller of two normalized non-negative decimals. */
export const minNormalized = (a: string, b: string): string => (compareNormalized(a, b) <= 0 ? a : b);

/** Sum of decimal strings, exact, as an 8-decimal string. */
export const sumDecimals = (values: Iterable<string>): string => {
  let total = 0n;
  for (const v of values) total += toUnits(v);
  return fromUnits(total);
};
