import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { accountEndpoints as ep } from '../../endpoints/account';
import { routeGroup, serve } from './route-options';

const route = routeGroup('account', { auth: 'key-or-jwt' });

/**
 * `GET /account/info` and `PUT /account/risk-profile` (spec "Account endpoints", key/JWT): with an agent key, or a
 * JWT/account key plus `X-Agent-Id`, both act on that agent (spec "Authentication" rules 4 and 5); otherwise on the
 * account. Each serves its endpoint of `src/endpoints/account.ts`.
 */
export const accountRoutes: FastifyPluginAsyncZod = async (app) => {
  serve(app, route, ep.info, {
    summary: 'The account (or the scoped agent): status, starting balance, current session, risk profile',
    description:
      '`current_session` and `starting_balance` are those of the wallet session trading now: ' +
      '`POST /account/reset` starts a new session (optionally with `new_starting_balance`).',
    errors: [401, 403, 404, 429],
  });
  serve(app, route, ep.setRiskProfile, {
    summary: 'Replace the risk limits of the account (or the scoped agent); applies to the next order',
    description:
      "The spec's three fields are required; `max_order_size_pct` (1–100, default 50) is optional and " +
      'keeps its current value when omitted. The response shows all four fields.',
    errors: [401, 403, 404, 422, 429],
  });
};
