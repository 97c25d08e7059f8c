import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { backtestEndpoints as ep } from '../../endpoints/backtest';
import { backtestRoute as route } from './backtest-sandbox';
import { serveAll } from './route-options';

/**
 * Backtest session endpoints (spec "Backtest endpoints"; ARCHITECTURE §9, §14b): create, start, step, step batch,
 * cancel, status. Each serves its endpoint of `src/endpoints/backtest.ts`.
 */
export const backtestSessionsRoutes: FastifyPluginAsyncZod = async (app) => {
  serveAll(app, route, ep, [401, 403, 404, 409, 429], {
    create: {
      summary: 'Create a backtest session (status `created`)',
      description:
        'Validates the configuration against the market data: `start_time` < `end_time` (at least one ' +
        'interval apart) inside the data range, `candle_interval` one of 1m 5m 15m 1h 4h 1d, `pairs` known ' +
        '(or null: every pair with data in the range), `agent_id` an agent of the caller (its risk profile is ' +
        'copied; with an agent key it may be omitted). `candle_interval` may also be integer seconds (60 … 86400). Errors: `VALIDATION_ERROR` 422, `INVALID_SYMBOL` 400, `BACKTEST_NO_DATA` 400, `PERMISSION_DENIED` 403.',
      errors: [400, 401, 403, 422, 429],
    },
    start: {
      summary: 'Load the candles into memory and start the virtual clock at start_time (status `running`)',
      description:
        'When the candles cannot be loaded the session is recorded as `failed` with the reason and the ' +
        'answer is `BACKTEST_NO_DATA` 400. A session that is not `created`: `BACKTEST_INVALID_STATE` 409.',
      errors: [400, 401, 403, 404, 409, 429],
    },
    step: {
      summary: 'Advance one candle',
      description:
        'Virtual time moves to start_time + step × interval; pending orders are checked against each candle ' +
        'passed along its path (O→L→H→C when close ≥ open, else O→H→L→C). `prices` are the last candles closed ' +
        'by the new virtual time; `is_complete` is true on the last step (the session is then `completed`).',
      errors: [400, 401, 403, 404, 409, 429],
    },
    stepBatch: {
      summary: 'Advance N candles (1 to 100,000; clamped at the last step)',
      description:
        '`orders_filled` holds every fill of the batch, each on the candle that reached it; `prices` shows the ' +
        'final candles. The batch is one append (fills, then `BacktestStepped` with the equity of every step).',
      errors: [400, 401, 403, 404, 409, 422, 429],
      timed: true,
    },
    cancel: 'Abort a created or running session; partial results are saved',
    status: { summary: 'Progress and state of a session', errors: [401, 403, 404, 429] },
  });
};
