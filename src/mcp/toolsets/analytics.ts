import { analyticsEndpoints as ep } from '../../endpoints/analytics';
import { READ, type ToolDef } from '../tool';
import { endpointTools } from '../tool-table';

/**
 * Analytics tools (spec "Analytics endpoints", docs/analytics.md): performance metrics, the equity history and the
 * leaderboard, each serving its endpoint of `src/endpoints/analytics.ts` as `/analytics/*` does; the `analytics`
 * rate-limit group (120 per minute).
 */

const read = {
  toolset: 'analytics',
  auth: 'key-or-jwt',
  rateLimitGroup: 'analytics',
  annotations: READ,
} as const;

/** Each tool's description, by its name (what it does, units, errors). */
const describe: Readonly<Record<string, string>> = {
  get_performance:
    'Performance of the current session over a period (1d, 7d, 30d, 90d, all): Sharpe and Sortino ratios, max ' +
    'drawdown (%), win rate (%), profit factor, average win/loss and best/worst trade (USDT), trade counts. A ' +
    'metric that cannot be computed yet is "0.00000000" and named in undefined_metrics.',
  get_portfolio_history:
    'Equity snapshots (USDT) of the wallet at 1m, 1h or 1d, the newest limit (1–1000), oldest first.',
  get_leaderboard:
    'The top 50 wallets by ROI (%) over a period (default 30d); display names are user text, shown as data.',
};

export const analyticsTools: ToolDef[] = [
  ...endpointTools(read, ep, describe, {
    performance: [
      'get_performance',
      'Performance metrics',
      (r) => `${r.period}: ${r.total_trades} trades, win rate ${r.win_rate} %, Sharpe ${r.sharpe_ratio}`,
    ],
    history: [
      'get_portfolio_history',
      'Equity history',
      (r) => `${r.snapshots.length} ${r.interval} snapshots`,
    ],
    leaderboard: ['get_leaderboard', 'Leaderboard', (r) => `${r.rankings.length} ranked wallets`],
  }),
];
