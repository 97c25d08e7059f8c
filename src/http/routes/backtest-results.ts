import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  backtestEquityCurve,
  backtestResults,
  backtestTradeLog,
  bestBacktestOf,
  compareBacktests,
  listBacktests,
} from '../../application/backtest/results';
import {
  bestQuery,
  bestResponse,
  compareQuery,
  compareResponse,
  equityCurveResponse,
  listQuery,
  listResponse,
  pageQuery,
  resultsResponse,
  sessionParams,
  tradesQuery,
  tradesResponse,
} from '../../contract/backtest';
import { errorResponses } from '../../contract/common';
import { callOf } from '../call';
import { routeGroup } from './route-options';

/** Every backtest route: API key or JWT (ARCHITECTURE §14b), the backtest rate-limit group (6,000/min). */
const route = routeGroup('backtest', { auth: 'key-or-jwt', rateLimitGroup: 'backtest' });

/**
 * Backtest results endpoints (spec "Backtest endpoints"): results, equity curve, trade log, list, compare, best.
 * Use cases in `src/application/backtest/results.ts`.
 */
export const backtestResultsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/backtest/:id/results',
    route('Full results of a completed or cancelled session (docs/metrics.md)', {
      params: sessionParams,
      response: { 200: resultsResponse, ...errorResponses(401, 403, 404, 409, 429, 503) },
    }),
    async (request) => backtestResults(callOf(request), request.params.id),
  );

  app.get(
    '/backtest/:id/results/equity-curve',
    route('Equity at every step so far (step 0 = start), oldest first, paginated', {
      params: sessionParams,
      querystring: pageQuery(10_000, 1_000),
      response: { 200: equityCurveResponse, ...errorResponses(401, 403, 404, 422, 429, 503) },
    }),
    async (request) => backtestEquityCurve(callOf(request), request.params.id, request.query),
  );

  app.get(
    '/backtest/:id/results/trades',
    route('The complete trade log of a session, in execution order, paginated', {
      params: sessionParams,
      querystring: tradesQuery,
      response: { 200: tradesResponse, ...errorResponses(401, 403, 404, 422, 429, 503) },
    }),
    async (request) => backtestTradeLog(callOf(request), request.params.id, request.query),
  );

  app.get(
    '/backtest/list',
    route("The caller's sessions (filter by label and status; sort by roi_pct, sharpe_ratio or created_at)", {
      querystring: listQuery,
      response: { 200: listResponse, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => {
      const q = request.query;
      return listBacktests(callOf(request), {
        strategyLabel: q.strategy_label,
        status: q.status,
        sortBy: q.sort_by,
        limit: q.limit,
        offset: q.offset,
      });
    },
  );

  app.get(
    '/backtest/compare',
    route('Compare sessions: best by ROI, Sharpe and drawdown, and a recommendation', {
      querystring: compareQuery,
      response: { 200: compareResponse, ...errorResponses(401, 403, 404, 422, 429, 503) },
    }),
    async (request) => compareBacktests(callOf(request), request.query.sessions.split(',')),
  );

  app.get(
    '/backtest/best',
    route("The caller's completed session with the highest value of a metric", {
      querystring: bestQuery,
      response: { 200: bestResponse, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => bestBacktestOf(callOf(request), request.query.metric, request.query.strategy_label),
  );
};
