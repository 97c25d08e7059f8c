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
import { endpoint } from './endpoint';

/**
 * The analytics endpoints (spec "Analytics endpoints", docs/analytics.md): `/analytics/*` and the analytics MCP
 * toolset serve these, each its use case of `src/application/analytics.ts` presented with `src/contract/analytics.ts`.
 */
export const analyticsEndpoints = {
  performance: endpoint({
    route: { method: 'GET', path: '/analytics/performance', querystring: performanceQuery },
    input: performanceQuery,
    output: performanceResponse,
    run: async (call, a) => {
      const { owner, result } = await performance(call, a.period);
      return performanceOut(a.period, owner, result);
    },
  }),
  history: endpoint({
    route: { method: 'GET', path: '/analytics/portfolio/history', querystring: historyQuery },
    input: historyQuery,
    output: historyResponse,
    run: async (call, a) => {
      const { owner, rows } = await portfolioHistory(call, a);
      return portfolioHistoryOut(a.interval, owner, rows);
    },
  }),
  leaderboard: endpoint({
    route: { method: 'GET', path: '/analytics/leaderboard', querystring: leaderboardQuery },
    input: leaderboardQuery,
    output: leaderboardResponse,
    run: async (call, a) => leaderboardOut(a.period, await leaderboard(call, a.period)),
  }),
};
