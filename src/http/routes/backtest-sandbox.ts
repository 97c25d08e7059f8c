import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  candlesQuery,
  historyQuery,
  openOrdersQuery,
  ordersQuery,
  pricesQuery,
  sessionOrderParams,
  sessionParams,
  sessionSymbolParams,
} from '../../contract/backtest';
import { errorResponses } from '../../contract/common';
import { indicatorsQuery } from '../../contract/indicators';
import { placeOcoBody, placeOrderBody } from '../../contract/trading';
import { backtestEndpoints as ep } from '../../endpoints/backtest';
import { callOf } from '../call';
import { addServerTiming } from '../server-timing';
import { requiredSymbols } from '../symbols-query';
import { routeGroup } from './route-options';

/** Every backtest route: API key or JWT (ARCHITECTURE §14b), the backtest rate-limit group (6,000/min). */
const route = routeGroup('backtest', { auth: 'key-or-jwt', rateLimitGroup: 'backtest' });

/**
 * The backtest sandbox endpoints (spec "Backtest endpoints"): trading, market data and account at a session's
 * virtual time. Each serves its endpoint of `src/endpoints/backtest.ts`.
 */
export const backtestSandboxRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/backtest/:id/trade/order',
    route('Sandbox order: the live order rules and risk chain at virtual time', {
      description:
        'Same body and response as `POST /trade/order`. Market orders fill at the close of the last candle ' +
        'closed by virtual time (with slippage and fee); others wait for the candles of later steps. A ' +
        'rejection is recorded and answered with the error of the violated rule (`details.rule`).',
      params: sessionParams,
      body: placeOrderBody,
      response: { 201: ep.placeOrder.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503) },
    }),
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      return reply
        .status(201)
        .send(await ep.placeOrder.run(callOf(request), { ...request.params, ...request.body }));
    },
  );

  app.post(
    '/backtest/:id/trade/order/oco',
    route(
      'Sandbox OCO: a take-profit and a stop-loss, the first to fill cancels the other, at virtual time',
      {
        description:
          'Same body and response as `POST /trade/order/oco`; the legs are matched on the candles of later steps ' +
          '(docs/trading-rules.md, "Order lists: OCO and bracket").',
        params: sessionParams,
        body: placeOcoBody,
        response: { 201: ep.placeOco.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503) },
      },
    ),
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      return reply
        .status(201)
        .send(await ep.placeOco.run(callOf(request), { ...request.params, ...request.body }));
    },
  );

  app.get(
    '/backtest/:id/trade/orders',
    route('Sandbox orders, newest first (filter by status and symbol)', {
      params: sessionParams,
      querystring: ordersQuery,
      response: { 200: ep.orders.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.orders.run(callOf(request), { ...request.params, ...request.query }),
  );

  app.get(
    '/backtest/:id/trade/orders/open',
    route('Open sandbox orders (pending or partially filled), newest first (filter by symbol)', {
      params: sessionParams,
      querystring: openOrdersQuery,
      response: { 200: ep.openOrders.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.openOrders.run(callOf(request), { ...request.params, ...request.query }),
  );

  app.get(
    '/backtest/:id/trade/order/:order_id',
    route('One sandbox order with its fills (several when it filled in parts), like GET /trade/order/{id}', {
      params: sessionOrderParams,
      response: { 200: ep.order.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.order.run(callOf(request), request.params),
  );

  app.delete(
    '/backtest/:id/trade/order/:order_id',
    route('Cancel a pending sandbox order; its whole lock is released', {
      params: sessionOrderParams,
      response: { 200: ep.cancelOrder.output, ...errorResponses(401, 403, 404, 409, 429) },
    }),
    async (request) => ep.cancelOrder.run(callOf(request), request.params),
  );

  app.get(
    '/backtest/:id/trade/history',
    route('Sandbox fills, newest first', {
      params: sessionParams,
      querystring: historyQuery,
      response: { 200: ep.fills.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.fills.run(callOf(request), { ...request.params, ...request.query }),
  );

  app.get(
    '/backtest/:id/market/price/:symbol',
    route('Price at virtual time: the close of the last candle closed by then (forward-filled)', {
      params: sessionSymbolParams,
      response: { 200: ep.price.output, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
    }),
    async (request) => ep.price.run(callOf(request), request.params),
  );

  app.get(
    '/backtest/:id/market/prices',
    route('Prices of the session pairs at virtual time', {
      params: sessionParams,
      querystring: pricesQuery,
      response: { 200: ep.prices.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    }),
    async (request) => {
      const { symbols } = request.query;
      return ep.prices.run(callOf(request), {
        ...request.params,
        symbols: symbols === undefined ? undefined : requiredSymbols(symbols),
      });
    },
  );

  app.get(
    '/backtest/:id/market/ticker/:symbol',
    route('24h statistics at virtual time (candles closed in the 24 hours before it)', {
      params: sessionSymbolParams,
      response: { 200: ep.ticker.output, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
    }),
    async (request) => ep.ticker.run(callOf(request), request.params),
  );

  app.get(
    '/backtest/:id/market/candles/:symbol',
    route('Candles closed at or before virtual time, oldest first', {
      description:
        '`interval` defaults to the session interval (any of 1m 5m 15m 1h 4h 1d the data has); `start_time`/' +
        '`end_time` bound the open time (inclusive); without `start_time` the newest `limit` candles. A candle ' +
        'still open at virtual time is never returned.',
      params: sessionSymbolParams,
      querystring: candlesQuery,
      response: { 200: ep.candles.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    }),
    async (request) => ep.candles.run(callOf(request), { ...request.params, ...request.query }),
  );

  app.get(
    '/backtest/:id/market/indicators/:symbol',
    route('Indicators of a session pair from the candles closed by virtual time (no look-ahead)', {
      description:
        'As `GET /market/indicators/{symbol}` (docs/market-data.md "Indicators"), over the newest `limit` ' +
        'candles of `interval` (default: the session interval) closed at or before virtual time; candles ' +
        'before the session start count.',
      params: sessionSymbolParams,
      querystring: indicatorsQuery,
      response: { 200: ep.indicators.output, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
    }),
    async (request) => ep.indicators.run(callOf(request), { ...request.params, ...request.query }),
  );

  /** `GET /backtest/:id/account/{what}`: one of the session's account reads at virtual time, by the same rules. */
  for (const [what, summary] of [
    ['balance', 'Sandbox balances and equity at virtual time'],
    ['positions', 'Sandbox positions valued at virtual time'],
    ['portfolio', 'Sandbox portfolio snapshot at virtual time'],
  ] as const) {
    app.get(
      `/backtest/:id/account/${what}`,
      route(summary, {
        params: sessionParams,
        response: { 200: ep[what].output, ...errorResponses(401, 403, 404, 409, 429) },
      }),
      async (request) => ep[what].run(callOf(request), request.params),
    );
  }
};
