/**
 * A column of exact decimals (prices, volumes, quote volumes, trade counts) as the candle store holds them: integers
 * at a common number of decimal places, `value = int × 10^-scale` with `scale` 0–8. The scale is the fewest places
 * that write every value exactly (a BTC price column has 2, a lot-step volume column as many as the lot step), so
 * the integers stay small: they are numbers while every one fits in 2^53, otherwise bigints (a day of BTC quote
 * volume at 8 places, a meme coin's daily base volume). `null` (a source without Binance's columns 8 or 9) is NaN,
 * or −1n among bigints.
 */
export type DecimalColumn =
  | { scale: number; ints: Float64Array; big?: undefined }
  | { scale: number; big: bigint[]; ints?: undefined };

const MAX = Number.MAX_SAFE_INTEGER;
const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
const BIG_POW10 = POW10.map(BigInt);
const FRACTION_PAD = ['', '0', '00', '000', '0000', '00000', '000000', '0000000'];

/** Number of values. */
export const columnLength = (c: DecimalColumn): number => (c.ints ? c.ints.length : c.big.length);

/** True when value `i` is null. */
export const isNull = (c: DecimalColumn, i: number): boolean =>
  c.ints ? Number.isNaN(c.ints[i]!) : c.big[i]! < 0n;

/** Value `i` in 1e-8 units as a number (exact up to 2^53 units: any price); NaN for null. */
export const unitsAt = (c: DecimalColumn, i: number): number =>
  c.ints
    ? c.ints[i]! * POW10[8 - c.scale]!
    : c.big[i]! < 0n
      ? Number.NaN
      : Number(c.big[i]! * BIG_POW10[8 - c.scale]!);

/** Value `i` in 1e-8 units as a bigint (exact for any value); −1n for null. */
export const bigUnitsAt = (c: DecimalColumn, i: number): bigint => {
  if (c.ints) {
    const v = c.ints[i]!;
    return Number.isNaN(v) ? -1n : BigInt(v) * BIG_POW10[8 - c.scale]!;
  }
  const v = c.big[i]!;
  return v < 0n ? -1n : v * BIG_POW10[8 - c.scale]!;
};

/** Value `i` as the venue's 8-decimal text (`"43250.12000000"`); null for null. */
export const textAt = (c: DecimalColumn, i: number): string | null => {
  if (c.ints) {
    const v = c.ints[i]!;
    if (Number.isNaN(v)) return null;
    const p = POW10[c.scale]!;
    const int = Math.floor(v / p);
    const frac = String((v - int * p) * POW10[8 - c.scale]!);
    return `${int}.${FRACTION_PAD[8 - frac.length] ?? ''}${frac}`;
  }
  const v = c.big[i]!;
  if (v < 0n) return null;
  const digits = (v * BIG_POW10[8 - c.scale]!).toString().padStart(9, '0');
  return `${digits.slice(0, -8)}.${digits.slice(-8)}`;
};

/**
 * Builds a column from 1e-8 units, one value at a time (numbers where they fit, bigints otherwise), and chooses the
 * scale when finished: the values divided by the largest power of ten (≤ 10^8) that divides all of them.
 */
export class DecimalColumnBuilder {
  private ints: Float64Array;
  private big: bigint[] | undefined;
  private n = 0;

  constructor(capacity = 1024) {
    this.ints = new Float64Array(capacity);
  }

  get length(): number {
    return this.n;
  }

  private grow(): void {
    if (this.n < this.ints.length) return;
    const next = new Float64Array(this.ints.length * 2);
    next.set(this.ints);
    this.ints = next;
  }

  /** Appends a value in units (a safe integer ≥ 0), or NaN for null. */
  push(units: number): void {
    if (this.big) {
      this.big.push(Number.isNaN(units) ? -1n : BigInt(units));
      this.n++;
      return;
    }
    this.grow();
    this.ints[this.n++] = units;
  }

  /** Appends a value in units as a bigint (≥ 0; −1n for null), switching the column to bigints if needed. */
  pushBig(units: bigint): void {
    if (!this.big && units >= 0n && units <= BigInt(MAX)) {
      this.push(Number(units));
      return;
    }
    if (!this.big) {
      this.big = Array.from(this.ints.subarray(0, this.n), (v) => (Number.isNaN(v) ? -1n : BigInt(v)));
    }
    this.big.push(units);
    this.n++;
  }

  /** The finished column (the builder is spent). */
  finish(): DecimalColumn {
    if (!this.big) return reduceInts(this.ints.subarray(0, this.n));
    return reduceBig(this.big);
  }
}

/** Divides units by the largest power of ten dividing every value: the column's scale. */
const reduceInts = (units: Float64Array): DecimalColumn => {
  let k = 8;
  for (let i = 0; i < units.length && k > 0; i++) {
    const v = units[i]!;
    if (Number.isNaN(v) || v === 0) continue;
    while (k > 0 && v % POW10[k]! !== 0) k--;
  }
  const ints = new Float64Array(units.length);
  const p = POW10[k]!;
  for (let i = 0; i < units.length; i++) ints[i] = units[i]! / p;
  return { scale: 8 - k, ints };
};

const reduceBig = (units: readonly bigint[]): DecimalColumn => {
  let k = 8;
  for (const v of units) {
    if (v <= 0n) continue;
    while (k > 0 && v % BIG_POW10[k]! !== 0n) k--;
    if (k === 0) break;
  }
  const p = BIG_POW10[k]!;
  const reduced = units.map((v) => (v < 0n ? -1n : v / p));
  if (reduced.every((v) => v <= BigInt(MAX))) {
    return { scale: 8 - k, ints: Float64Array.from(reduced, (v) => (v < 0n ? Number.NaN : Number(v))) };
  }
  return { scale: 8 - k, big: reduced };
};

/** Values `from` (inclusive) to `to` (exclusive) of a column, as a column of the same scale. */
export const sliceColumn = (c: DecimalColumn, from: number, to: number): DecimalColumn =>
  c.ints ? { scale: c.scale, ints: c.ints.slice(from, to) } : { scale: c.scale, big: c.big.slice(from, to) };

/** Columns joined end to end (common scale: the largest). */
export const concatColumns = (parts: readonly DecimalColumn[]): DecimalColumn => {
  const b = new DecimalColumnBuilder(
    Math.max(
      1,
      parts.reduce((n, c) => n + columnLength(c), 0),
    ),
  );
  for (const c of parts) {
    const n = columnLength(c);
    if (c.ints && c.scale === 8) for (let i = 0; i < n; i++) b.push(c.ints[i]!);
    else if (c.ints) {
      const m = POW10[8 - c.scale]!;
      for (let i = 0; i < n; i++) {
        const v = c.ints[i]!;
        const u = v * m;
        if (Number.isNaN(v) || u <= MAX) b.push(u);
        else b.pushBig(BigInt(v) * BigInt(m));
      }
    } else for (let i = 0; i < n; i++) b.pushBig(bigUnitsAt(c, i));
  }
  return b.finish();
};
