import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { dec } from '../../../domain/trading/decimal';
import { latestSnapshots } from '../../../queries/analytics';
import { decimal8, iso } from '../../../queries/format';
import { analytics } from '../../analytics/install';
import { leaderboard } from '../../analytics/leaderboard';
import { walletPerformance } from '../../analytics/performance';
import { principalOf } from '../../auth/plugin';
import type { Principal } from '../../auth/principal';
import {
  historyQuery,
  historyResponse,
  leaderboardQuery,
  leaderboardResponse,
  performanceQuery,
  performanceResponse,
} from '../../contract/analytics';
import { errorResponses } from '../../contract/common';
import { currentSession, prepareWallet } from '../portfolio-snapshot';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['analytics'];
/** key/JWT, in the spec's analytics rate-limit group (120 per minute). */
const config = { auth: 'key-or-jwt', rateLimitGroup: 'analytics' } as const;

const ownerOf = (p: Principal) => ({ accountId: p.accountId, agentId: p.agentId ?? null });
const meta = (p: Principal, requestId: string) => ({ actor: p.agentId ?? p.accountId, requestId });

/**
 * Analytics endpoints (spec "Analytics endpoints", docs/analytics.md): performance metrics of a period, the
 * equity history, the leaderboard. Scoped like the account endpoints: an agent key or a JWT with `X-Agent-Id`
 * gives that agent's wallet, otherwise the account's own (spec "Authentication" rules 4 and 5).
 */
export const analyticsRoutes: FastifyPluginAsyncZod = async (app) => {
  const services = app.services;
  const db = () => services.database.db;

  app.get(
    '/analytics/performance',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Performance metrics of the current session over a period (ARCHITECTURE §11)',
        description:
          'Ratios from the returns between equity snapshots (1-minute snapshots for `1d`, hourly ones otherwise); ' +
          'trade figures from the fills of the period. The period is clipped to the current session.',
        querystring: performanceQuery,
        response: { 200: performanceResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { period } = request.query;
      const { profile, wallet } = await prepareWallet(
        services,
        ownerOf(principal),
        meta(principal, request.id),
      );
      // The session as /account/info shows it: begun with the owner's session, not at the first order.
      const session = currentSession(profile, wallet);
      const result = await walletPerformance(
        db(),
        {
          ownerId: profile.ownerId,
          sessionId: session.sessionId,
          sessionStartedAt: Date.parse(session.startedAt),
          walletStartedAt: Date.parse(session.walletStartedAt),
          startingBalance: session.startingBalance,
        },
        period,
        analytics(services).now(),
      );
      const m = result.performance.metrics;
      return {
        period,
        account_id: profile.accountId,
        agent_id: profile.agentId,
        sharpe_ratio: m.sharpe_ratio,
        sortino_ratio: m.sortino_ratio,
        max_drawdown_pct: m.max_drawdown_pct,
        max_drawdown_duration_days: m.max_drawdown_duration_days,
        win_rate: m.win_rate,
        profit_factor: m.profit_factor,
        avg_win: m.avg_win,
        avg_loss: m.avg_loss,
        total_trades: result.performance.summary.total_trades,
        avg_trades_per_day: m.trades_per_day,
        best_trade: m.best_trade,
        worst_trade: m.worst_trade,
        current_streak: m.current_streak,
        closed_trades: m.closed_trades,
        winning_trades: m.winning_trades,
        losing_trades: m.losing_trades,
        snapshot_interval: result.interval as '1m' | '1h',
        returns_count: m.returns_count,
        from: new Date(result.window.from).toISOString(),
        to: new Date(result.window.to).toISOString(),
      };
    },
  );

  app.get(
    '/analytics/portfolio/history',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Equity snapshots of the wallet, oldest first',
        description:
          'Each snapshot values cash, locked cash and positions at the marks recorded at its time (the first ' +
          'marks of each minute, hour or UTC day); `1m` snapshots are kept for 25 hours. Every session of the ' +
          'wallet is included (`session_id`).',
        querystring: historyQuery,
        response: { 200: historyResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { interval, limit } = request.query;
      const { profile } = await prepareWallet(services, ownerOf(principal), meta(principal, request.id));
      const rows = await latestSnapshots(db(), profile.ownerId, interval, limit);
      return {
        account_id: profile.accountId,
        agent_id: profile.agentId,
        interval,
        snapshots: rows.map((r) => ({
          time: iso(r.time),
          total_equity: decimal8(r.total_equity),
          unrealized_pnl: decimal8(r.unrealized_pnl),
          realized_pnl: decimal8(r.realized_pnl),
          session_id: r.session_id,
        })),
      };
    },
  );

  app.get(
    '/analytics/leaderboard',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Top 50 wallets by ROI over a period (active accounts and agents with a closed trade in it)',
        description:
          "One entry per wallet: an account's own (`agent_id` null, the account's display name) or an agent's " +
          "(the agent's display name). ROI is measured from the equity the period opened with to now; no balance " +
          'figures are shown. Equal ROIs share a rank.',
        querystring: leaderboardQuery,
        response: { 200: leaderboardResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const { period } = request.query;
      const feed = services.market?.feed;
      const rankings = await leaderboard(db(), period, analytics(services).now(), (symbol) => {
        const p = feed?.prices.get(symbol);
        return p ? dec(p.price) : undefined;
      });
      return { period, rankings };
    },
  );
};
