import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { backtestEndpoints as ep } from '../../endpoints/backtest';
import { backtestRoute as route } from './backtest-sandbox';
import { serve } from './route-options';

/** The errors of a read of one session's results. */
const resultErrors = [401, 403, 404, 422, 429, 503];

/**
 * Backtest results endpoints (spec "Backtest endpoints"): results, equity curve, trade log, list, compare, best.
 * Each serves its endpoint of `src/endpoints/backtest.ts`.
 */
export const backtestResultsRoutes: FastifyPluginAsyncZod = async (app) => {
  serve(app, route, ep.results, {
    summary: 'Full results of a completed or cancelled session (docs/metrics.md)',
    errors: [401, 403, 404, 409, 429, 503],
  });
  serve(app, route, ep.equityCurve, {
    summary: 'Equity at every step so far (step 0 = start), oldest first, paginated',
    errors: resultErrors,
  });
  serve(app, route, ep.trades, {
    summary: 'The complete trade log of a session, in execution order, paginated',
    errors: resultErrors,
  });
  serve(app, route, ep.list, {
    summary:
      "The caller's sessions (filter by label and status; sort by roi_pct, sharpe_ratio or created_at)",
    errors: [401, 403, 422, 429],
  });
  serve(
    app,
    route,
    ep.compare,
    {
      summary: 'Compare sessions: best by ROI, Sharpe and drawdown, and a recommendation',
      errors: resultErrors,
    },
    (request) => ({ sessions: (request.query as { sessions: string }).sessions.split(',') }),
  );
  serve(app, route, ep.best, {
    summary: "The caller's completed session with the highest value of a metric",
    errors: [401, 403, 404, 422, 429],
  });
};
