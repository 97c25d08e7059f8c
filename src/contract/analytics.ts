import { z } from 'zod';
import type { SnapshotRow } from '../../queries/analytics';
import { decimal8, iso } from '../../queries/format';
import type { Ranking } from '../analytics/leaderboard';
import type { WalletPerformance } from '../analytics/performance';
import type { AnalyticsOwner } from '../application/analytics';
import { decimalOutput, queryInt, timestamp } from './common';

/**
 * Schemas of the analytics endpoints (spec "Analytics endpoints"; defaults and bounds from there and from
 * "Limits"). Metrics are decimal strings with 8 places except the integers the spec names (the spec allows `null`
 * only in a battle ranking). A metric that ARCHITECTURE §11 leaves undefined over the period (too few returns, no
 * losses, no closed trades) is answered as {@link UNDEFINED_METRIC_VALUE} and named in `undefined_metrics`, so a
 * client parsing every metric as a decimal never meets `null` and one that cares can tell "0" from "undefined".
 */

/** The value an undefined metric is answered with: zero, as a decimal string with 8 places. */
export const UNDEFINED_METRIC_VALUE = '0.00000000';

const undefinedMetrics = z
  .array(z.string())
  .describe(
    `the metrics of this object that are undefined over the period (answered as "${UNDEFINED_METRIC_VALUE}"), ` +
      'e.g. `sharpe_ratio` with fewer than 30 returns, `profit_factor` without a losing trade',
  );

/**
 * Replaces the undefined (`null`) metrics among `values` by {@link UNDEFINED_METRIC_VALUE} and lists their names,
 * in the order given: `{ metrics, undefined_metrics }`.
 */
export const definedMetrics = <K extends string>(
  values: Record<K, string | null>,
): { metrics: Record<K, string>; undefined_metrics: K[] } => {
  const metrics = {} as Record<K, string>;
  const missing: K[] = [];
  for (const key of Object.keys(values) as K[]) {
    const v = values[key];
    if (v === null) missing.push(key);
    metrics[key] = v ?? UNDEFINED_METRIC_VALUE;
  }
  return { metrics, undefined_metrics: missing };
};

const periods = ['1d', '7d', '30d', '90d', 'all'] as const;
const period = z.enum(periods);

export const performanceQuery = z.object({
  period: period.default('all').describe('`1d`, `7d`, `30d`, `90d` or `all` (the whole current session)'),
});

/** A metric that may be undefined over the period: then {@link UNDEFINED_METRIC_VALUE}, named in `undefined_metrics`. */
const metricDecimal = decimalOutput;

export const performanceResponse = z.object({
  period,
  account_id: z.uuid(),
  agent_id: z.uuid().nullable().describe('the agent this view is scoped to, else null'),
  sharpe_ratio: metricDecimal.describe('annualised, risk-free 0; undefined with fewer than 30 returns'),
  sortino_ratio: metricDecimal.describe(
    'annualised; undefined with fewer than 30 returns or no losing period',
  ),
  max_drawdown_pct: decimalOutput,
  max_drawdown_duration_days: z.number().int().describe('whole days from the peak to recovery (or to now)'),
  win_rate: metricDecimal.describe('wins / closed trades × 100; undefined without closed trades'),
  profit_factor: metricDecimal.describe('gross profit / |gross loss|; undefined without losses'),
  avg_win: metricDecimal,
  avg_loss: metricDecimal.describe('negative; undefined without losses'),
  total_trades: z.number().int().describe('fills in the period (every execution)'),
  avg_trades_per_day: metricDecimal.describe('fills per day of the period'),
  best_trade: metricDecimal.describe('largest realized PnL of one closed trade'),
  worst_trade: metricDecimal.describe('smallest realized PnL of one closed trade'),
  current_streak: z.number().int().describe('+k after k wins in a row, −k after k losses'),
  closed_trades: z.number().int().describe('fills that reduced a position (sells)'),
  winning_trades: z.number().int(),
  losing_trades: z.number().int(),
  snapshot_interval: z.enum(['1m', '1h']).describe('the equity snapshots the returns are taken between'),
  returns_count: z.number().int(),
  from: timestamp.describe('start of the period, clipped to the current session'),
  to: timestamp,
  undefined_metrics: undefinedMetrics,
});

export const historyQuery = z.object({
  interval: z.enum(['1m', '1h', '1d']).default('1h'),
  limit: queryInt({ min: 1, max: 1000, default: 100 }),
});

export const historyResponse = z.object({
  account_id: z.uuid(),
  agent_id: z.uuid().nullable().describe('the agent this view is scoped to, else null'),
  interval: z.enum(['1m', '1h', '1d']),
  snapshots: z
    .array(
      z.object({
        time: timestamp,
        total_equity: decimalOutput,
        unrealized_pnl: decimalOutput,
        realized_pnl: decimalOutput,
        session_id: z.string(),
      }),
    )
    .describe('oldest first: the newest `limit` snapshots'),
});

export const leaderboardQuery = z.object({
  period: period.default('30d').describe('`1d`, `7d`, `30d`, `90d` or `all`'),
});

export const leaderboardResponse = z.object({
  period,
  rankings: z
    .array(
      z.object({
        rank: z.number().int(),
        account_id: z.uuid(),
        agent_id: z
          .uuid()
          .nullable()
          .describe("the agent whose wallet this is, or null for the account's own"),
        display_name: z.string(),
        roi_pct: decimalOutput,
        sharpe_ratio: metricDecimal,
        total_trades: z.number().int(),
        win_rate: metricDecimal,
        undefined_metrics: undefinedMetrics,
      }),
    )
    .max(50),
});

/**
 * The wire form of a wallet's performance over `period` (`GET /analytics/performance`): the metrics of
 * ARCHITECTURE §11 with the window and the snapshot interval they were computed over.
 */
export const performanceOut = (
  period: z.infer<typeof performanceQuery>['period'],
  owner: AnalyticsOwner,
  result: WalletPerformance,
): z.infer<typeof performanceResponse> => {
  const m = result.performance.metrics;
  const { metrics, undefined_metrics } = definedMetrics({
    sharpe_ratio: m.sharpe_ratio,
    sortino_ratio: m.sortino_ratio,
    win_rate: m.win_rate,
    profit_factor: m.profit_factor,
    avg_win: m.avg_win,
    avg_loss: m.avg_loss,
    avg_trades_per_day: m.trades_per_day,
    best_trade: m.best_trade,
    worst_trade: m.worst_trade,
  });
  return {
    period,
    account_id: owner.accountId,
    agent_id: owner.agentId,
    sharpe_ratio: metrics.sharpe_ratio,
    sortino_ratio: metrics.sortino_ratio,
    max_drawdown_pct: m.max_drawdown_pct,
    max_drawdown_duration_days: m.max_drawdown_duration_days,
    win_rate: metrics.win_rate,
    profit_factor: metrics.profit_factor,
    avg_win: metrics.avg_win,
    avg_loss: metrics.avg_loss,
    total_trades: result.performance.summary.total_trades,
    avg_trades_per_day: metrics.avg_trades_per_day,
    best_trade: metrics.best_trade,
    worst_trade: metrics.worst_trade,
    current_streak: m.current_streak,
    closed_trades: m.closed_trades,
    winning_trades: m.winning_trades,
    losing_trades: m.losing_trades,
    snapshot_interval: result.interval as '1m' | '1h',
    returns_count: m.returns_count,
    from: new Date(result.window.from).toISOString(),
    to: new Date(result.window.to).toISOString(),
    undefined_metrics,
  };
};

/** The wire form of the leaderboard (`GET /analytics/leaderboard`): undefined metrics as on the performance. */
export const leaderboardOut = (
  period: z.infer<typeof leaderboardQuery>['period'],
  rankings: readonly Ranking[],
): z.infer<typeof leaderboardResponse> => ({
  period,
  rankings: rankings.map((r) => {
    const { metrics, undefined_metrics } = definedMetrics({
      sharpe_ratio: r.sharpe_ratio,
      win_rate: r.win_rate,
    });
    return { ...r, ...metrics, undefined_metrics };
  }),
});

/** The wire form of a wallet's equity history (`GET /analytics/portfolio/history`). */
export const portfolioHistoryOut = (
  interval: z.infer<typeof historyQuery>['interval'],
  owner: AnalyticsOwner,
  rows: SnapshotRow[],
): z.infer<typeof historyResponse> => ({
  account_id: owner.accountId,
  agent_id: owner.agentId,
  interval,
  snapshots: rows.map((r) => ({
    time: iso(r.time),
    total_equity: decimal8(r.total_equity),
    unrealized_pnl: decimal8(r.unrealized_pnl),
    realized_pnl: decimal8(r.realized_pnl),
    session_id: r.session_id,
  })),
});
