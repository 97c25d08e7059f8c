import BigNumber from 'bignumber.js';

/**
 * Decimal arithmetic of the metrics (ARCHITECTURE §2.3, §11). A private `bignumber.js` constructor with 20
 * decimal places of working precision for every division and square root, rounding half to even: the results
 * are the same on every platform and in every run (no binary-float artefacts such as 0.1 + 0.2), and money
 * sums (fees, PnL) stay exact. 20 places are far below what a ratio printed with 8 places needs to be exact in
 * its last digit, and keep a 25,000-point equity curve to a few tens of milliseconds (see `docs/metrics.md`).
 */
export const MetricDecimal = BigNumber.clone({
  DECIMAL_PLACES: 20,
  ROUNDING_MODE: BigNumber.ROUND_HALF_EVEN,
  EXPONENTIAL_AT: [-1e9, 1e9],
});

/** A decimal value of the metrics. */
export type MDec = BigNumber;

/** `value` as a metrics decimal. */
export const m = (value: BigNumber.Value): MDec => new MetricDecimal(value);

export const M_ZERO: MDec = m(0);
export const M_HUNDRED: MDec = m(100);

/** Milliseconds per day and per minute. */
export const DAY_MS = 86_400_000;
export const MINUTE_MS = 60_000;

/** The wire form of a metric: rounded half to even to 8 decimal places, `"0.00000000"` for (negative) zero. */
export const out8 = (v: MDec): string => {
  const r = v.decimalPlaces(8, BigNumber.ROUND_HALF_EVEN);
  return r.isZero() ? '0.00000000' : r.toFixed(8);
};

/** {@link out8} of an optional value. */
export const out8OrNull = (v: MDec | null | undefined): string | null => (v == null ? null : out8(v));
