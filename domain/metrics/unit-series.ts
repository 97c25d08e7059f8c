import { M_HUNDRED, type MDec, m } from './decimal';
import { type Drawdown, deepestDrawdown, noDrawdown } from './drawdown';
import { MIN_RETURNS, periodsPerYear } from './returns';

/**
 * The metrics over an equity curve held as integer 1e-8 units in numbers (exact below 2⁵³ units, ~90 million USDT),
 * without a decimal object per point (issue 24: a year of minutes is 525,600 points; `bignumber.js` per point cost
 * ~5 s of CPU per session). The figures are the decimal functions' (`returns.ts`, `drawdown.ts`) to the last digit,
 * not approximations: the only rounding those functions do per point is the division of a return, rounded to 20
 * places half to even; here each return is that same 20-place integer (exact `BigInt` division), their sums and
 * sums of squares are exact integers, and the few divisions and square roots after the sums are done by the same
 * `bignumber.js` operations on the same exact operands. `test/backtest/metrics-units.unit.test.ts` checks it on
 * random curves and on a long session over the real market data.
 */

const E20 = 10n ** 20n;

/** `n / d` rounded half to even to an integer (`d` > 0). */
const divHalfEven = (n: bigint, d: bigint): bigint => {
  let q = n / d;
  const r = n - q * d;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice > d || (twice === d && q % 2n !== 0n)) q += n < 0n ? -1n : 1n;
  return q;
};

/** The exact sums the ratios need: the returns rᵢ = Eᵢ / Eᵢ₋₁ − 1 as 20-place integers (`periodReturns`). */
interface ReturnSums {
  /** Number of returns (snapshots after a positive one). */
  count: number;
  /** Σ rᵢ × 10²⁰. */
  sum: bigint;
  /** Σ (rᵢ × 10²⁰)². */
  squares: bigint;
  /** Σ over negative rᵢ of (rᵢ × 10²⁰)². */
  downSquares: bigint;
}

const returnSums = (units: Float64Array): ReturnSums => {
  let count = 0;
  let sum = 0n;
  let squares = 0n;
  let downSquares = 0n;
  for (let i = 1; i < units.length; i++) {
    const prev = units[i - 1]!;
    if (prev <= 0) continue;
    count++;
    const diff = units[i]! - prev;
    if (diff === 0) continue;
    // round₂₀(Eᵢ / Eᵢ₋₁) − 1 = round₂₀((Eᵢ − Eᵢ₋₁) / Eᵢ₋₁): 1 is on the 20-place grid and even there.
    const r = divHalfEven(BigInt(diff) * E20, BigInt(prev));
    const sq = r * r;
    sum += r;
    squares += sq;
    if (r < 0n) downSquares += sq;
  }
  return { count, sum, squares, downSquares };
};

/** A decimal of `v` × 10^−`places`. */
const scaled = (v: bigint, places: number): MDec => m(v.toString()).shiftedBy(-places);

/**
 * Sharpe and Sortino ratios of the returns of `units` (as `sharpeRatio`/`sortinoRatio` of `periodReturns` over the
 * same equity), with the number of returns.
 */
export const ratiosOfUnits = (
  units: Float64Array,
  intervalMs: number,
): { sharpe: MDec | null; sortino: MDec | null; count: number } => {
  const s = returnSums(units);
  if (s.count < MIN_RETURNS) return { sharpe: null, sortino: null, count: s.count };
  const n = BigInt(s.count);
  // mean(): Σ rᵢ (exact) / n, rounded to 20 places.
  const mean = scaled(s.sum, 20).div(s.count);
  const avg = BigInt(mean.shiftedBy(20).toFixed(0));
  // sampleStd(): Σ (rᵢ − r̄)² exact = Σ rᵢ² − 2 r̄ Σ rᵢ + n r̄² (in 10⁻⁴⁰), / (n − 1), square root.
  const deviations = s.squares - 2n * avg * s.sum + n * avg * avg;
  const std = scaled(deviations, 40)
    .div(s.count - 1)
    .sqrt();
  const root = periodsPerYear(intervalMs).sqrt();
  const sharpe = std.isZero() ? null : mean.div(std).times(root);
  const down = scaled(s.downSquares, 40).div(s.count).sqrt();
  const sortino = down.isZero() ? null : mean.div(down).times(root);
  return { sharpe, sortino, count: s.count };
};

const TWO53 = 2 ** 53;

/** a × b > c × d exactly, for safe integers (a double compare when it cannot be wrong, else `BigInt`). */
const productGreater = (a: number, b: number, c: number, d: number): boolean => {
  const x = a * b;
  const y = c * d;
  if (Math.abs(x) < TWO53 && Math.abs(y) < TWO53) return x > y;
  // Each product is within a relative 2⁻⁵³ of the exact one: a gap wider than both errors decides.
  if (Math.abs(x - y) > 2 ** -50 * Math.max(Math.abs(x), Math.abs(y))) return x > y;
  return BigInt(a) * BigInt(b) > BigInt(c) * BigInt(d);
};

/** 8-place decimal of integer units. */
const fromUnits = (u: number): MDec => m(u).shiftedBy(-8);

/** `maxDrawdown` of the points (`times[i]`, `units[i]` × 10⁻⁸), the same result. */
export const maxDrawdownOfUnits = (times: Float64Array, units: Float64Array): Drawdown => {
  if (units.length === 0) return noDrawdown();
  let peak = units[0]!;
  let peakAt = times[0]!;
  let bestDrop = 0;
  let bestPeak = peak;
  let bestPeakAt = peakAt;
  let bestIndex = -1;
  for (let i = 0; i < units.length; i++) {
    const e = units[i]!;
    if (e > peak) {
      peak = e;
      peakAt = times[i]!;
      continue;
    }
    if (peak <= 0) continue;
    const drop = peak - e;
    if (drop > 0 && productGreater(drop, bestPeak, bestDrop, peak)) {
      bestDrop = drop;
      bestPeak = peak;
      bestPeakAt = peakAt;
      bestIndex = i;
    }
  }
  if (bestIndex < 0) return noDrawdown();
  return deepestDrawdown(
    fromUnits(bestDrop).div(fromUnits(bestPeak)).times(M_HUNDRED),
    bestPeakAt,
    bestIndex,
    { length: units.length, timeAt: (i) => times[i]!, recovered: (i) => units[i]! >= bestPeak },
  );
};
