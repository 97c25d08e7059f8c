import { DAY_MS, M_HUNDRED, M_ZERO, type MDec, m, out8, out8OrNull } from './decimal';
import { type Drawdown, maxDrawdown } from './drawdown';
import { decimalOfUnits, normalize8, unitsOf8, unitsOfPacked, unpackUnits } from './equity-points';
import { periodReturns, periodsPerYear, sharpeRatio, sortinoRatio } from './returns';
import { closedTrades, type MetricsFill, pairStats, tradeStats } from './trades';
import { maxDrawdownOfUnits, ratiosOfUnits } from './unit-series';

/**
 * An equity curve packed (a backtest's read model, `domain/metrics/equity-points.ts`): `times[i]` (ms) is the time of
 * the `i`-th point of the `chunks` read in order, each chunk a `packUnits` text (integer units and differences). Cheap to send to a
 * worker thread (a few strings and one typed array, not an object per point).
 */
export interface PackedEquity {
  times: Float64Array;
  chunks: readonly string[];
}

/** What the performance of a wallet over a period is computed from. */
export interface PerformanceInput {
  /** USDT, decimal string: the base of `total_pnl` and `roi_pct`. */
  startingBalance: string;
  /**
   * Equity snapshots `intervalMs` apart, oldest first (`time` in ms, `equity` a decimal string). The first is the
   * period's opening equity (for a backtest: the starting balance at `start_time`). Or packed
   * ({@link PackedEquity}).
   */
  equity: readonly { time: number; equity: string }[] | PackedEquity;
  /** Δ between snapshots (ms): the returns' period. */
  intervalMs: number;
  /** Fills of the period in execution order. */
  fills: readonly MetricsFill[];
  /** Prices valuing positions still open at the end (`by_pair.net_pnl`), by symbol. */
  marks?: Readonly<Record<string, string>>;
  /**
   * USDT, decimal string: the equity at the period's end when it was measured after the last snapshot (a backtest
   * cancelled after orders placed at its virtual time, whose fees and slippage no step recorded). It is the
   * summary's `final_equity`, `total_pnl` and `roi_pct`; the curve's figures (ratios, drawdown) stay those of the
   * snapshots. Default: the last snapshot (the starting balance without one).
   */
  finalEquity?: string;
  /** The period (ms) for `trades_per_day` and `duration_simulated_days`; default: first to last snapshot. */
  period?: { start: number; end: number };
}

/** Headline figures (spec backtest results `summary`). Decimal strings with 8 places. */
export interface PerformanceSummary {
  starting_balance: string;
  final_equity: string;
  total_pnl: string;
  roi_pct: string;
  /** Fills (every execution). */
  total_trades: number;
  total_fees: string;
  duration_simulated_days: string;
}

/** The metrics of ARCHITECTURE §11 (spec backtest results `metrics`, analytics `performance`). */
export interface PerformanceMetrics {
  sharpe_ratio: string | null;
  sortino_ratio: string | null;
  max_drawdown_pct: string;
  max_drawdown_duration_days: number;
  max_drawdown_peak_at: string | null;
  max_drawdown_trough_at: string | null;
  max_drawdown_recovered_at: string | null;
  win_rate: string | null;
  profit_factor: string | null;
  avg_win: string | null;
  avg_loss: string | null;
  best_trade: string | null;
  worst_trade: string | null;
  avg_trade_duration_minutes: string | null;
  trades_per_day: string | null;
  closed_trades: number;
  winning_trades: number;
  losing_trades: number;
  gross_profit: string;
  gross_loss: string;
  current_streak: number;
  longest_win_streak: number;
  longest_loss_streak: number;
  /** Number of returns the ratios were computed from, and the annualisation factor used. */
  returns_count: number;
  periods_per_year: string;
}

/** One pair's figures (spec backtest results `by_pair`). */
export interface PairPerformance {
  symbol: string;
  trades: number;
  closed_trades: number;
  win_rate: string | null;
  realized_pnl: string;
  fees: string;
  open_quantity: string;
  net_pnl: string;
}

/** Summary, metrics and per-pair figures, all from the same input. */
export interface Performance {
  summary: PerformanceSummary;
  metrics: PerformanceMetrics;
  by_pair: PairPerformance[];
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** An equity curve as the figures read it: points, or packed. */
type Curve = readonly { time: number; equity: string }[] | PackedEquity;

/** The points as times and integer units (8-place), or undefined when a value is beyond 2⁵² units. */
const unitColumns = (
  equity: Curve,
): { times: Float64Array; units: Float64Array; last: string | undefined } | undefined => {
  const LIMIT = 2 ** 52;
  if ('chunks' in equity) {
    const units = new Float64Array(equity.times.length);
    let k = 0;
    for (const chunk of equity.chunks) {
      const n = unitsOfPacked(chunk, units, k);
      if (n === undefined) return undefined;
      k += n;
    }
    if (k !== units.length) throw new RangeError(`${k} equity points for ${units.length} times`);
    const lastUnits = k > 0 ? units[k - 1]! : undefined;
    return {
      times: equity.times,
      units,
      last: lastUnits === undefined ? undefined : decimalOfUnits(lastUnits),
    };
  }
  const times = new Float64Array(equity.length);
  const units = new Float64Array(equity.length);
  for (let i = 0; i < equity.length; i++) {
    const u = unitsOf8(normalize8(equity[i]!.equity));
    // A value with more than 8 places is not exactly units: the decimal way.
    if (u === undefined || Math.abs(u) >= LIMIT || !/^-?\d+(\.\d{0,8})?$/.test(equity[i]!.equity)) {
      return undefined;
    }
    times[i] = equity[i]!.time;
    units[i] = u;
  }
  return { times, units, last: equity[equity.length - 1]?.equity };
};

/** Snapshots as `{ time, equity }` objects (the decimal way). */
const equityObjects = (equity: Curve): { time: number; equity: string }[] => {
  if (!('chunks' in equity)) return [...equity];
  const values = equity.chunks.flatMap(unpackUnits);
  return values.map((v, i) => ({ time: equity.times[i]!, equity: v }));
};

/** The curve's final equity, returns count, ratios and drawdown. */
interface CurveFigures {
  final: MDec | undefined;
  returnsCount: number;
  sharpe: MDec | null;
  sortino: MDec | null;
  drawdown: Drawdown;
  first: number | undefined;
  lastTime: number | undefined;
}

/**
 * The curve's figures over integer units (`unit-series.ts`: the same digits, no decimal object per point) when
 * every value fits, else over decimals (`decimal: true` forces it; the reference of the tests).
 */
const curveFigures = (input: PerformanceInput & { equity: Curve }, decimal: boolean): CurveFigures => {
  const columns = decimal ? undefined : unitColumns(input.equity);
  if (columns) {
    const ratios = ratiosOfUnits(columns.units, input.intervalMs);
    const n = columns.times.length;
    return {
      final: columns.last === undefined ? undefined : m(columns.last),
      returnsCount: ratios.count,
      sharpe: ratios.sharpe,
      sortino: ratios.sortino,
      drawdown: maxDrawdownOfUnits(columns.times, columns.units),
      first: n > 0 ? columns.times[0] : undefined,
      lastTime: n > 0 ? columns.times[n - 1] : undefined,
    };
  }
  const points = equityObjects(input.equity).map((p) => ({ time: p.time, equity: m(p.equity) }));
  const values = points.map((p) => p.equity);
  const returns = periodReturns(values);
  return {
    final: values[values.length - 1],
    returnsCount: returns.length,
    sharpe: sharpeRatio(returns, input.intervalMs),
    sortino: sortinoRatio(returns, input.intervalMs),
    drawdown: maxDrawdown(points),
    first: points[0]?.time,
    lastTime: points[points.length - 1]?.time,
  };
};

/**
 * Computes every figure of a period's performance with the conventions of ARCHITECTURE §11 (formulas and worked
 * examples: `docs/metrics.md`). Pure and deterministic: decimal arithmetic, outputs rounded half to even to 8
 * places. The equity curve's figures are computed over integer units when every value fits (`unit-series.ts`: the
 * same digits as the decimal way, without a decimal object per point; `options.decimal` forces the decimal way,
 * the reference the tests compare with).
 */
export const computePerformance = (
  input: PerformanceInput,
  options: { decimal?: boolean } = {},
): Performance => {
  const start = m(input.startingBalance);
  const curve = curveFigures(input, options.decimal ?? false);
  const final = input.finalEquity !== undefined ? m(input.finalEquity) : (curve.final ?? start);
  const drawdown = curve.drawdown;
  const stats = tradeStats(closedTrades(input.fills));
  let fees = M_ZERO;
  for (const f of input.fills) fees = fees.plus(f.fee);
  const period = input.period ?? { start: curve.first ?? 0, end: curve.lastTime ?? 0 };
  const days: MDec = m(period.end - period.start).div(DAY_MS);
  const pnl = final.minus(start);
  return {
    summary: {
      starting_balance: out8(start),
      final_equity: out8(final),
      total_pnl: out8(pnl),
      roi_pct: out8(start.isZero() ? M_ZERO : pnl.div(start).times(M_HUNDRED)),
      total_trades: input.fills.length,
      total_fees: out8(fees),
      duration_simulated_days: out8(days),
    },
    metrics: {
      sharpe_ratio: out8OrNull(curve.sharpe),
      sortino_ratio: out8OrNull(curve.sortino),
      max_drawdown_pct: out8(drawdown.pct),
      max_drawdown_duration_days: drawdown.durationDays,
      max_drawdown_peak_at: iso(drawdown.peakAt),
      max_drawdown_trough_at: iso(drawdown.troughAt),
      max_drawdown_recovered_at: iso(drawdown.recoveredAt),
      win_rate: out8OrNull(stats.winRate),
      profit_factor: out8OrNull(stats.profitFactor),
      avg_win: out8OrNull(stats.avgWin),
      avg_loss: out8OrNull(stats.avgLoss),
      best_trade: out8OrNull(stats.bestTrade),
      worst_trade: out8OrNull(stats.worstTrade),
      avg_trade_duration_minutes: out8OrNull(stats.avgDurationMinutes),
      trades_per_day: days.gt(0) ? out8(m(input.fills.length).div(days)) : null,
      closed_trades: stats.closedTrades,
      winning_trades: stats.wins,
      losing_trades: stats.losses,
      gross_profit: out8(stats.grossProfit),
      gross_loss: out8(stats.grossLoss),
      current_streak: stats.currentStreak,
      longest_win_streak: stats.longestWinStreak,
      longest_loss_streak: stats.longestLossStreak,
      returns_count: curve.returnsCount,
      periods_per_year: out8(periodsPerYear(input.intervalMs)),
    },
    by_pair: pairStats(input.fills, input.marks).map((p) => ({
      symbol: p.symbol,
      trades: p.trades,
      closed_trades: p.closedTrades,
      win_rate: out8OrNull(p.winRate),
      realized_pnl: out8(p.realizedPnl),
      fees: out8(p.fees),
      open_quantity: out8(p.openQuantity),
      net_pnl: out8(p.netPnl),
    })),
  };
};
