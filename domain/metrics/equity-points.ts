/**
 * Equity points in the packed form of the `backtest_equity` read model (issue 24): a run of points as one text, the
 * 8-place decimals joined by commas (`"1000000.00000000,999998.51234567"`), so a batch of 100,000 steps is one row,
 * one string, not 100,000 rows and objects. Every value is in the form PostgreSQL prints a `numeric(38, 8)` in
 * (`-?digits.8 digits`), so a point read back is the text the row-per-step table answered.
 */

const NORMAL = /^-?(?:0|[1-9]\d*)\.\d{8}$/;
const SCALE = 100_000_000n;

/**
 * `value` (a decimal string) in the form of PostgreSQL's `numeric(38, 8)` text: exactly 8 places, rounded half away
 * from zero as PostgreSQL rounds on the cast (the row-per-step table stored the events' strings through that cast).
 * Throws `RangeError` for a string that is not a decimal.
 */
export const normalize8 = (value: string): string => {
  if (NORMAL.test(value) && value !== '-0.00000000') return value;
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value.trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) {
    throw new RangeError(`not a decimal: ${JSON.stringify(value)}`);
  }
  const negative = match[1] === '-';
  const fraction = match[3] ?? '';
  let units = BigInt((match[2] || '0') + fraction.slice(0, 8).padEnd(8, '0'));
  if (fraction.length > 8 && fraction.charCodeAt(8) >= 53 /* '5' */) units += 1n;
  const int = units / SCALE;
  const frac = (units % SCALE).toString().padStart(8, '0');
  return `${negative && units !== 0n ? '-' : ''}${int}.${frac}`;
};

/** The values each normalized by {@link normalize8} (the same array when they all are already). */
export const normalizeAll = (values: readonly string[]): readonly string[] => {
  for (const v of values) {
    if (!NORMAL.test(v) || v === '-0.00000000') return values.map(normalize8);
  }
  return values;
};

/** The points (decimal strings) as one packed text, each normalized by {@link normalize8}. */
export const packPoints = (values: readonly string[]): string => normalizeAll(values).join(',');

/** The points of a packed text, oldest first (an empty text has none). */
export const unpackPoints = (packed: string): string[] => (packed === '' ? [] : packed.split(','));

/**
 * Integer 1e-8 units of a normalized 8-place decimal as a number, or `undefined` when it is beyond
 * `Number.MAX_SAFE_INTEGER` (over ~90 million): the caller then takes the exact decimal way.
 */
export const unitsOf8 = (value: string): number | undefined => {
  const u = Number(value.slice(0, -9) + value.slice(-8));
  return Number.isSafeInteger(u) ? u : undefined;
};

/** Compares two normalized 8-place decimals exactly: −1, 0 or 1. */
export const compare8 = (a: string, b: string): number => {
  const na = a.charCodeAt(0) === 45;
  const nb = b.charCodeAt(0) === 45;
  if (na !== nb) return na ? -1 : 1;
  const sign = na ? -1 : 1;
  if (a.length !== b.length) return (a.length < b.length ? -1 : 1) * sign;
  return a === b ? 0 : (a < b ? -1 : 1) * sign;
};

/** The highest of packed points (normalized decimals), or null for none. */
export const maxOf8 = (values: readonly string[]): string | null => {
  let best: string | null = null;
  for (const v of values) if (best === null || compare8(v, best) > 0) best = v;
  return best;
};
