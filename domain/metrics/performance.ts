import { DAY_MS, M_HUNDRED, M_ZERO, type MDec, m, out8, out8OrNull } from './decimal';
import { maxDrawdown } from './drawdown';
import { periodReturns, periodsPerYear, sharpeRatio, sortinoRatio } from './returns';
import { closedTrades, type MetricsFill, pairStats, tradeStats } from './trades';

/** What the performance of a wallet over a period is computed from. */
export interface PerformanceInput {
  /** USDT, decimal string: the base of `total_pnl` and `roi_pct`. */
  startingBalance: string;
  /**
   * Equity snapshots `intervalMs` apart, oldest first (`time` in ms, `equity` a decimal string). The first is the
   * period's opening equity (for a backtest: the starting balance at `start_time`).
   */
  equity: readonly { time: number; equity: string }[];
  /** Δ between snapshots (ms): the returns' period. */
  intervalMs: number;
  /** Fills of the period in execution order. */
  fills: readonly MetricsFill[];
  /** Prices valuing positions still open at the end (`by_pair.net_pnl`), by symbol. */
  marks?: Readonly<Record<string, string>>;
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

/**
 * Computes every figure of a period's performance with the conventions of ARCHITECTURE §11 (formulas and worked
 * examples: `docs/metrics.md`). Pure and deterministic: decimal arithmetic throughout, outputs rounded half to
 * even to 8 places.
 */
export const computePerformance = (input: PerformanceInput): Performance => {
  const start = m(input.startingBalance);
  const points = input.equity.map((p) => ({ time: p.time, equity: m(p.equity) }));
  const values = points.map((p) => p.equity);
  const final = values[values.length - 1] ?? start;
  const returns = periodReturns(values);
  const drawdown = maxDrawdown(points);
  const stats = tradeStats(closedTrades(input.fills));
  let fees = M_ZERO;
  for (const f of input.fills) fees = fees.plus(f.fee);
  const period = input.period ?? {
    start: points[0]?.time ?? 0,
    end: points[points.length - 1]?.time ?? 0,
  };
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
      sharpe_ratio: out8OrNull(sharpeRatio(returns, input.intervalMs)),
      sortino_ratio: out8OrNull(sortinoRatio(returns, input.intervalMs)),
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
      returns_count: returns.length,
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
