import { DAY_MS, M_HUNDRED, M_ZERO, type MDec } from './decimal';

/** The deepest drawdown of an equity curve. */
export interface Drawdown {
  /** max over t of (running peak − Eₜ) / running peak × 100; 0 when equity never fell below a peak. */
  pct: MDec;
  /** Time (ms) of the peak the deepest drawdown is measured from; null without a drawdown. */
  peakAt: number | null;
  /** Time (ms) of its lowest point. */
  troughAt: number | null;
  /** First time (ms) after the trough the equity is back at or above that peak; null if it never recovered. */
  recoveredAt: number | null;
  /** From the peak to the recovery, or to the last snapshot when it never recovered (ms). */
  durationMs: number;
  /** {@link durationMs} in whole days (rounded down). */
  durationDays: number;
}

/** The {@link Drawdown} of a curve that never fell below a peak (or has no points). */
export const noDrawdown = (): Drawdown => ({
  pct: M_ZERO,
  peakAt: null,
  troughAt: null,
  recoveredAt: null,
  durationMs: 0,
  durationDays: 0,
});

/**
 * The {@link Drawdown} of `pct` % measured from the peak reached at `peakAt` (ms) down to the point `troughIndex`
 * of a `curve` of `length` points (their times by `timeAt`): its recovery is the first later point at or above that
 * peak (`recovered`), and its duration runs to it, or to the last point when the curve never recovered.
 */
export const deepestDrawdown = (
  pct: MDec,
  peakAt: number,
  troughIndex: number,
  curve: { length: number; timeAt: (i: number) => number; recovered: (i: number) => boolean },
): Drawdown => {
  const { length, timeAt, recovered } = curve;
  let recoveredAt: number | null = null;
  for (let i = troughIndex + 1; i < length; i++) {
    if (recovered(i)) {
      recoveredAt = timeAt(i);
      break;
    }
  }
  const durationMs = (recoveredAt ?? timeAt(length - 1)) - peakAt;
  return {
    pct,
    peakAt,
    troughAt: timeAt(troughIndex),
    recoveredAt,
    durationMs,
    durationDays: Math.floor(durationMs / DAY_MS),
  };
};

/**
 * Maximum drawdown (ARCHITECTURE §11): the running peak is the highest equity so far (first reached at
 * `peakAt`); the drawdown at t is (peak − Eₜ) / peak × 100. The deepest one wins (the first, on a tie). Its
 * duration runs from its peak to the first later snapshot at or above that peak, or to the last snapshot if the
 * equity never recovered.
 */
export const maxDrawdown = (points: readonly { time: number; equity: MDec }[]): Drawdown => {
  const first = points[0];
  if (!first) return noDrawdown();
  let peak = first.equity;
  let peakAt = first.time;
  // The deepest drawdown so far as the fraction bestDrop / bestPeak, compared by cross-multiplication so that
  // only the winner is divided (one division instead of one per snapshot).
  let bestDrop = M_ZERO;
  let bestPeak = peak;
  let bestPeakAt = peakAt;
  let bestIndex = -1;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (p.equity.gt(peak)) {
      peak = p.equity;
      peakAt = p.time;
      continue;
    }
    if (peak.lte(0)) continue;
    const drop = peak.minus(p.equity);
    if (drop.gt(0) && drop.times(bestPeak).gt(bestDrop.times(peak))) {
      bestDrop = drop;
      bestPeak = peak;
      bestPeakAt = peakAt;
      bestIndex = i;
    }
  }
  if (bestIndex < 0) return noDrawdown();
  return deepestDrawdown(bestDrop.div(bestPeak).times(M_HUNDRED), bestPeakAt, bestIndex, {
    length: points.length,
    timeAt: (i) => points[i]!.time,
    recovered: (i) => points[i]!.equity.gte(bestPeak),
  });
};

/**
 * The drawdown at each point of an equity curve (ARCHITECTURE §11; the series whose deepest value
 * {@link maxDrawdown} reports): (running peak − Eₜ) / running peak × 100, in %, 0 at a new peak and while the
 * peak is ≤ 0. `peakBefore` is the highest equity before `equities[0]` when they are a page of a longer curve
 * (null at the curve's start), so pages give the same values as the whole.
 */
export const drawdownSeries = (equities: readonly MDec[], peakBefore: MDec | null = null): MDec[] => {
  let peak = peakBefore;
  return equities.map((equity) => {
    if (peak === null || equity.gt(peak)) {
      peak = equity;
      return M_ZERO;
    }
    return peak.lte(0) ? M_ZERO : peak.minus(equity).div(peak).times(M_HUNDRED);
  });
};
