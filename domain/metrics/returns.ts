import { M_ZERO, type MDec, m } from './decimal';

/** Fewest returns for which Sharpe and Sortino are reported (ARCHITECTURE §11); below, both are `null`. */
export const MIN_RETURNS = 30;

/** Seconds in the metrics' year: crypto trades every day (365 × 86,400). */
export const SECONDS_PER_YEAR = 365 * 86_400;

/**
 * Periods per year of snapshots `intervalMs` apart: 365 × 86,400 / Δ with Δ in seconds (8,760 for hourly
 * snapshots, 525,600 for 1-minute ones). Throws `RangeError` for a non-positive interval.
 */
export const periodsPerYear = (intervalMs: number): MDec => {
  if (!(intervalMs > 0)) throw new RangeError(`interval must be positive, got ${intervalMs}`);
  return m(SECONDS_PER_YEAR).times(1000).div(intervalMs);
};

/**
 * Simple returns between consecutive equity snapshots: rᵢ = Eᵢ / Eᵢ₋₁ − 1, i = 1 … n. A snapshot that follows a
 * non-positive equity gives no return (a ruined account has no defined return).
 */
export const periodReturns = (equity: readonly MDec[]): MDec[] => {
  const out: MDec[] = [];
  for (let i = 1; i < equity.length; i++) {
    const prev = equity[i - 1]!;
    if (prev.lte(0)) continue;
    out.push(equity[i]!.div(prev).minus(1));
  }
  return out;
};

/** Arithmetic mean; 0 for no values. */
export const mean = (values: readonly MDec[]): MDec => {
  if (values.length === 0) return M_ZERO;
  let total = M_ZERO;
  for (const v of values) total = total.plus(v);
  return total.div(values.length);
};

/** Sample standard deviation √(Σ(rᵢ − r̄)² / (n − 1)); 0 for fewer than two values. */
export const sampleStd = (values: readonly MDec[]): MDec => {
  if (values.length < 2) return M_ZERO;
  const avg = mean(values);
  let squares = M_ZERO;
  for (const v of values) {
    const d = v.minus(avg);
    squares = squares.plus(d.times(d));
  }
  return squares.div(values.length - 1).sqrt();
};

/** Downside deviation √(mean(min(rᵢ, 0)²)) over all n returns (positive returns count as 0). */
export const downsideDeviation = (values: readonly MDec[]): MDec => {
  if (values.length === 0) return M_ZERO;
  let squares = M_ZERO;
  for (const v of values) if (v.isNegative()) squares = squares.plus(v.times(v));
  return squares.div(values.length).sqrt();
};

/**
 * Annualised Sharpe ratio, risk-free rate 0: mean(r) / sample std(r) × √(periods per year). `null` with fewer
 * than {@link MIN_RETURNS} returns or a zero deviation.
 */
export const sharpeRatio = (returns: readonly MDec[], intervalMs: number): MDec | null => {
  if (returns.length < MIN_RETURNS) return null;
  const std = sampleStd(returns);
  if (std.isZero()) return null;
  return mean(returns).div(std).times(periodsPerYear(intervalMs).sqrt());
};

/**
 * Annualised Sortino ratio: mean(r) / √(mean(min(rᵢ, 0)²)) × √(periods per year). `null` with fewer than
 * {@link MIN_RETURNS} returns or no negative return (zero downside deviation).
 */
export const sortinoRatio = (returns: readonly MDec[], intervalMs: number): MDec | null => {
  if (returns.length < MIN_RETURNS) return null;
  const dd = downsideDeviation(returns);
  if (dd.isZero()) return null;
  return mean(returns).div(dd).times(periodsPerYear(intervalMs).sqrt());
};
