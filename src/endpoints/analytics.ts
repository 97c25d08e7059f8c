import { leaderboard, performance, portfolioHistory } from '../application/analytics';
import {
  historyQuery,
  historyResponse,
  leaderboardOut,
  leaderboardQuery,
  leaderboardResponse,
  performanceOut,
  performanceQuery,
  performanceResponse,
  portfolioHistoryOut,
} from '../contract/analytics';
import { served } from './endpoint';

/**
 * The analytics endpoints (spec "Analytics endpoints", docs/analytics.md): `/analytics/*` and the analytics MCP
 * toolset serve these, each its use case of `src/application/analytics.ts` presented with `src/contract/analytics.ts`.
 */
export const analyticsEndpoints = {
  performance: served(
    { method: 'GET', path: '/analytics/performance', querystring: performanceQuery },
    performanceResponse,
    async (call, a) => {
      const { owner, result } = await performance(call, a.period);
      return performanceOut(a.period, owner, result);
    },
  ),
  history: served(
    { method: 'GET', path: '/analytics/portfolio/history', querystring: historyQuery },
    historyResponse,
    async (call, a) => {
      const { owner, rows } = await portfolioHistory(call, a);
      return portfolioHistoryOut(a.interval, owner, rows);
    },
  ),
  leaderboard: served(
    { method: 'GET', path: '/analytics/leaderboard', querystring: leaderboardQuery },
    leaderboardResponse,
    async (call, a) => leaderboardOut(a.period, await leaderboard(call, a.period)),
  ),
};
