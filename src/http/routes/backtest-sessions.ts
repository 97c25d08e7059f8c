import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  backtestStatus,
  cancelBacktest,
  createBacktest,
  startBacktest,
  stepBacktest,
} from '../../application/backtest/sessions';
import {
  backtestRequestOf,
  batchBody,
  cancelResponse,
  createBody,
  createResponse,
  sessionParams,
  startResponse,
  statusResponse,
  stepResponse,
} from '../../contract/backtest';
import { errorResponses } from '../../contract/common';
import { callOf } from '../call';
import { addServerTiming } from '../server-timing';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['backtest'];
/** Every backtest route: API key or JWT (ARCHITECTURE §14b), the backtest rate-limit group (6,000/min). */
const config = { auth: 'key-or-jwt', rateLimitGroup: 'backtest' } as const;

/**
 * Backtest session endpoints (spec "Backtest endpoints"; ARCHITECTURE §9, §14b): create, start, step, step batch,
 * cancel, status. Each parses, calls its use case in `src/application/backtest/sessions.ts` and presents.
 */
export const backtestSessionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/backtest/create',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Create a backtest session (status `created`)',
        description:
          'Validates the configuration against the market data: `start_time` < `end_time` (at least one ' +
          'interval apart) inside the data range, `candle_interval` one of 1m 5m 15m 1h 4h 1d, `pairs` known ' +
          '(or null: every pair with data in the range), `agent_id` an agent of the caller (its risk profile is ' +
          'copied; with an agent key it may be omitted). `candle_interval` may also be integer seconds (60 … 86400). Errors: `VALIDATION_ERROR` 422, `INVALID_SYMBOL` 400, `BACKTEST_NO_DATA` 400, `PERMISSION_DENIED` 403.',
        body: createBody,
        response: { 200: createResponse, ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (request) => createBacktest(callOf(request), backtestRequestOf(request.body)),
  );

  app.post(
    '/backtest/:id/start',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Load the candles into memory and start the virtual clock at start_time (status `running`)',
        description:
          'When the candles cannot be loaded the session is recorded as `failed` with the reason and the ' +
          'answer is `BACKTEST_NO_DATA` 400. A session that is not `created`: `BACKTEST_INVALID_STATE` 409.',
        params: sessionParams,
        response: { 200: startResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => startBacktest(callOf(request), request.params.id),
  );

  app.post(
    '/backtest/:id/step',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Advance one candle',
        description:
          'Virtual time moves to start_time + step × interval; pending orders are checked against each candle ' +
          'passed along its path (O→L→H→C when close ≥ open, else O→H→L→C). `prices` are the last candles closed ' +
          'by the new virtual time; `is_complete` is true on the last step (the session is then `completed`).',
        params: sessionParams,
        response: { 200: stepResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => stepBacktest(callOf(request), request.params.id, 1),
  );

  app.post(
    '/backtest/:id/step/batch',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Advance N candles (1 to 100,000; clamped at the last step)',
        description:
          '`orders_filled` holds every fill of the batch, each on the candle that reached it; `prices` shows the ' +
          'final candles. The batch is one append (fills, then `BacktestStepped` with the equity of every step).',
        params: sessionParams,
        body: batchBody,
        response: { 200: stepResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      return stepBacktest(callOf(request), request.params.id, request.body.steps);
    },
  );

  app.post(
    '/backtest/:id/cancel',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Abort a created or running session; partial results are saved',
        params: sessionParams,
        response: { 200: cancelResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => cancelBacktest(callOf(request), request.params.id),
  );

  app.get(
    '/backtest/:id/status',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Progress and state of a session',
        params: sessionParams,
        response: { 200: statusResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => backtestStatus(callOf(request), request.params.id),
  );
};
