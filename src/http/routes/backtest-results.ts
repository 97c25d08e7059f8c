import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  bestQuery,
  compareQuery,
  listQuery,
  pageQuery,
  sessionParams,
  tradesQuery,
} from '../../contract/backtest';
import { errorResponses } from '../../contract/common';
import { backtestEndpoints as ep } from '../../endpoints/backtest';
import { callOf } from '../call';
import { routeGroup } from './route-options';

/** Every backtest route: API key or JWT (ARCHITECTURE §14b), the backtest rate-limit group (6,000/min). */
const route = routeGroup('backtest', { auth: 'key-or-jwt', rateLimitGroup: 'backtest' });

/**
 * Backtest results endpoints (spec "Backtest endpoints"): results, equity curve, trade log, list, compare, best.
 * Each serves its endpoint of `src/endpoints/backtest.ts`.
 */
export const backtestResultsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/backtest/:id/results',
    route('Full results of a completed or cancelled session (docs/metrics.md)', {
      params: sessionParams,
      response: { 200: ep.results.output, ...errorResponses(401, 403, 404, 409, 429, 503) },
    }),
    async (request) => ep.results.run(callOf(request), request.params),
  );

  app.get(
    '/backtest/:id/results/equity-curve',
    route('Equity at every step so far (step 0 = start), oldest first, paginated', {
      params: sessionParams,
      querystring: pageQuery(10_000, 1_000),
      response: { 200: ep.equityCurve.output, ...errorResponses(401, 403, 404, 422, 429, 503) },
    }),
    async (request) => ep.equityCurve.run(callOf(request), { ...request.params, ...request.query }),
  );

  app.get(
    '/backtest/:id/results/trades',
    route('The complete trade log of a session, in execution order, paginated', {
      params: sessionParams,
      querystring: tradesQuery,
      response: { 200: ep.trades.output, ...errorResponses(401, 403, 404, 422, 429, 503) },
    }),
    async (request) => ep.trades.run(callOf(request), { ...request.params, ...request.query }),
  );

  app.get(
    '/backtest/list',
    route("The caller's sessions (filter by label and status; sort by roi_pct, sharpe_ratio or created_at)", {
      querystring: listQuery,
      response: { 200: ep.list.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => ep.list.run(callOf(request), request.query),
  );

  app.get(
    '/backtest/compare',
    route('Compare sessions: best by ROI, Sharpe and drawdown, and a recommendation', {
      querystring: compareQuery,
      response: { 200: ep.compare.output, ...errorResponses(401, 403, 404, 422, 429, 503) },
    }),
    async (request) => ep.compare.run(callOf(request), { sessions: request.query.sessions.split(',') }),
  );

  app.get(
    '/backtest/best',
    route("The caller's completed session with the highest value of a metric", {
      querystring: bestQuery,
      response: { 200: ep.best.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.best.run(callOf(request), request.query),
  );
};
