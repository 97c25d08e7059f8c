import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { analyticsEndpoints as ep } from '../../endpoints/analytics';
import { routeGroup, serveAll } from './route-options';

/** key/JWT, in the spec's analytics rate-limit group (120 per minute). */
const route = routeGroup('analytics', { auth: 'key-or-jwt', rateLimitGroup: 'analytics' });

/**
 * Analytics endpoints (spec "Analytics endpoints", docs/analytics.md): performance metrics of a period, the
 * equity history, the leaderboard. Scoped like the account endpoints: an agent key or a JWT with `X-Agent-Id`
 * gives that agent's wallet, otherwise the account's own (spec "Authentication" rules 4 and 5). Each serves its
 * endpoint of `src/endpoints/analytics.ts`.
 */
export const analyticsRoutes: FastifyPluginAsyncZod = async (app) => {
  serveAll(app, route, ep, [401, 403, 404, 422, 429], {
    performance: {
      summary: 'Performance metrics of the current session over a period (ARCHITECTURE §11)',
      description:
        'Ratios from the returns between equity snapshots (1-minute snapshots for `1d`, hourly ones otherwise); ' +
        'trade figures from the fills of the period. The period is clipped to the current session.',
    },
    history: {
      summary: 'Equity snapshots of the wallet, oldest first',
      description:
        'Each snapshot values cash, locked cash and positions at the marks recorded at its time (the first ' +
        'marks of each minute, hour or UTC day); `1m` snapshots are kept for 25 hours. Every session of the ' +
        'wallet is included (`session_id`).',
    },
    leaderboard: {
      summary: 'Top 50 wallets by ROI over a period (active accounts and agents with a closed trade in it)',
      description:
        "One entry per wallet: an account's own (`agent_id` null, the account's display name) or an agent's " +
        "(the agent's display name). ROI is measured from the equity the period opened with to now; no balance " +
        'figures are shown. Equal ROIs share a rank.',
      errors: [401, 403, 422, 429],
    },
  });
};
