import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { backtestEndpoints as ep } from '../../endpoints/backtest';
import { requiredSymbols } from '../symbols-query';
import { routeGroup, serve } from './route-options';

/** Every backtest route: API key or JWT (ARCHITECTURE §14b), the backtest rate-limit group (6,000/min). */
export const backtestRoute = routeGroup('backtest', { auth: 'key-or-jwt', rateLimitGroup: 'backtest' });
const route = backtestRoute;

/** The errors of a sandbox placement. */
const placementErrors = [400, 401, 403, 404, 409, 422, 429, 503];
/** The errors of a sandbox list read. */
const listErrors = [401, 403, 404, 422, 429];
/** The errors of a market read at virtual time (one pair; a list or a query: `marketQueryErrors`). */
const marketErrors = [400, 401, 403, 404, 409, 429, 503];
const marketQueryErrors = [400, 401, 403, 404, 409, 422, 429];

/**
 * The backtest sandbox endpoints (spec "Backtest endpoints"): trading, market data and account at a session's
 * virtual time. Each serves its endpoint of `src/endpoints/backtest.ts`.
 */
export const backtestSandboxRoutes: FastifyPluginAsyncZod = async (app) => {
  serve(app, route, ep.placeOrder, {
    summary: 'Sandbox order: the live order rules and risk chain at virtual time',
    description:
      'Same body and response as `POST /trade/order`. Market orders fill at the close of the last candle ' +
      'closed by virtual time (with slippage and fee); others wait for the candles of later steps. A ' +
      'rejection is recorded and answered with the error of the violated rule (`details.rule`).',
    errors: placementErrors,
    timed: true,
  });
  serve(app, route, ep.placeOco, {
    summary:
      'Sandbox OCO: a take-profit and a stop-loss, the first to fill cancels the other, at virtual time',
    description:
      'Same body and response as `POST /trade/order/oco`; the legs are matched on the candles of later steps ' +
      '(docs/trading-rules.md, "Order lists: OCO and bracket").',
    errors: placementErrors,
    timed: true,
  });
  serve(app, route, ep.orders, {
    summary: 'Sandbox orders, newest first (filter by status and symbol)',
    errors: listErrors,
  });
  serve(app, route, ep.openOrders, {
    summary: 'Open sandbox orders (pending or partially filled), newest first (filter by symbol)',
    errors: listErrors,
  });
  serve(app, route, ep.order, {
    summary: 'One sandbox order with its fills (several when it filled in parts), like GET /trade/order/{id}',
    errors: [401, 403, 404, 429],
  });
  serve(app, route, ep.cancelOrder, {
    summary: 'Cancel a pending sandbox order; its whole lock is released',
    errors: [401, 403, 404, 409, 429],
  });
  serve(app, route, ep.fills, { summary: 'Sandbox fills, newest first', errors: listErrors });
  serve(app, route, ep.price, {
    summary: 'Price at virtual time: the close of the last candle closed by then (forward-filled)',
    errors: marketErrors,
  });
  serve(
    app,
    route,
    ep.prices,
    { summary: 'Prices of the session pairs at virtual time', errors: marketQueryErrors },
    (request) => {
      const { symbols } = request.query as { symbols?: string };
      return {
        id: (request.params as { id: string }).id,
        symbols: symbols === undefined ? undefined : requiredSymbols(symbols),
      };
    },
  );
  serve(app, route, ep.ticker, {
    summary: '24h statistics at virtual time (candles closed in the 24 hours before it)',
    errors: marketErrors,
  });
  serve(app, route, ep.candles, {
    summary: 'Candles closed at or before virtual time, oldest first',
    description:
      '`interval` defaults to the session interval (any of 1m 5m 15m 1h 4h 1d the data has); `start_time`/' +
      '`end_time` bound the open time (inclusive); without `start_time` the newest `limit` candles. A candle ' +
      'still open at virtual time is never returned.',
    errors: marketQueryErrors,
  });
  serve(app, route, ep.indicators, {
    summary: 'Indicators of a session pair from the candles closed by virtual time (no look-ahead)',
    description:
      'As `GET /market/indicators/{symbol}` (docs/market-data.md "Indicators"), over the newest `limit` ' +
      'candles of `interval` (default: the session interval) closed at or before virtual time; candles ' +
      'before the session start count.',
    errors: marketQueryErrors,
  });
  const accountErrors = [401, 403, 404, 409, 429];
  serve(app, route, ep.balance, {
    summary: 'Sandbox balances and equity at virtual time',
    errors: accountErrors,
  });
  serve(app, route, ep.positions, {
    summary: 'Sandbox positions valued at virtual time',
    errors: accountErrors,
  });
  serve(app, route, ep.portfolio, {
    summary: 'Sandbox portfolio snapshot at virtual time',
    errors: accountErrors,
  });
};
