import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import {
  cancelSandboxOrder,
  openSandboxOrders,
  placeSandboxOco,
  placeSandboxOrder,
  sandboxBalance,
  sandboxCandles,
  sandboxFills,
  sandboxIndicators,
  sandboxOrder,
  sandboxOrders,
  sandboxPortfolio,
  sandboxPositions,
  sandboxPrice,
  sandboxPrices,
  sandboxTicker,
} from '../../application/backtest/sandbox';
import type { Call } from '../../application/call';
import {
  balanceResponse,
  candlesQuery,
  candlesResponse,
  historyQuery,
  historyResponse,
  openOrdersQuery,
  ordersQuery,
  ordersResponse,
  portfolioResponse,
  positionsResponse,
  priceResponse,
  pricesQuery,
  pricesResponse,
  sandboxCancelResponse,
  sandboxOrderDetail,
  sessionOrderParams,
  sessionParams,
  sessionSymbolParams,
  tickerResponse,
} from '../../contract/backtest';
import { errorResponses } from '../../contract/common';
import { indicatorsQuery, sandboxIndicatorsResponse } from '../../contract/indicators';
import {
  ocoInputOf,
  ocoResponse,
  orderInputOf,
  placedOrderResponse,
  placeOcoBody,
  placeOrderBody,
} from '../../contract/trading';
import { cancelOut } from '../../trading/present';
import { callOf } from '../call';
import { addServerTiming } from '../server-timing';

import { requiredSymbols } from '../symbols-query';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['backtest'];
/** The responses of the sandbox account reads (`GET /backtest/:id/account/...`). */
type AccountResponse = typeof balanceResponse | typeof positionsResponse | typeof portfolioResponse;
/** Every backtest route: API key or JWT (ARCHITECTURE §14b), the backtest rate-limit group (6,000/min). */
const config = { auth: 'key-or-jwt', rateLimitGroup: 'backtest' } as const;

/**
 * The backtest sandbox endpoints (spec "Backtest endpoints"): trading, market data and account at a session's
 * virtual time. Use cases in `src/application/backtest/sandbox.ts`.
 */
export const backtestSandboxRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/backtest/:id/trade/order',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox order: the live order rules and risk chain at virtual time',
        description:
          'Same body and response as `POST /trade/order`. Market orders fill at the close of the last candle ' +
          'closed by virtual time (with slippage and fee); others wait for the candles of later steps. A ' +
          'rejection is recorded and answered with the error of the violated rule (`details.rule`).',
        params: sessionParams,
        body: placeOrderBody,
        response: {
          201: placedOrderResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      const placed = await placeSandboxOrder(callOf(request), request.params.id, orderInputOf(request.body));
      return reply.status(201).send(placed);
    },
  );

  app.post(
    '/backtest/:id/trade/order/oco',
    {
      config,
      schema: {
        tags,
        security,
        summary:
          'Sandbox OCO: a take-profit and a stop-loss, the first to fill cancels the other, at virtual time',
        description:
          'Same body and response as `POST /trade/order/oco`; the legs are matched on the candles of later steps ' +
          '(docs/trading-rules.md, "Order lists: OCO and bracket").',
        params: sessionParams,
        body: placeOcoBody,
        response: {
          201: ocoResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      const placed = await placeSandboxOco(callOf(request), request.params.id, ocoInputOf(request.body));
      return reply.status(201).send(placed);
    },
  );

  app.get(
    '/backtest/:id/trade/orders',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox orders, newest first (filter by status and symbol)',
        params: sessionParams,
        querystring: ordersQuery,
        response: { 200: ordersResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => sandboxOrders(callOf(request), request.params.id, request.query),
  );

  app.get(
    '/backtest/:id/trade/orders/open',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Open sandbox orders (pending or partially filled), newest first (filter by symbol)',
        params: sessionParams,
        querystring: openOrdersQuery,
        response: { 200: ordersResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => openSandboxOrders(callOf(request), request.params.id, request.query),
  );

  app.get(
    '/backtest/:id/trade/order/:order_id',
    {
      config,
      schema: {
        tags,
        security,
        summary:
          'One sandbox order with its fills (several when it filled in parts), like GET /trade/order/{id}',
        params: sessionOrderParams,
        response: { 200: sandboxOrderDetail, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => sandboxOrder(callOf(request), request.params.id, request.params.order_id),
  );

  app.delete(
    '/backtest/:id/trade/order/:order_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Cancel a pending sandbox order; its whole lock is released',
        params: sessionOrderParams,
        response: { 200: sandboxCancelResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      return cancelOut(await cancelSandboxOrder(callOf(request), request.params.id, request.params.order_id));
    },
  );

  app.get(
    '/backtest/:id/trade/history',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox fills, newest first',
        params: sessionParams,
        querystring: historyQuery,
        response: { 200: historyResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => sandboxFills(callOf(request), request.params.id, request.query),
  );

  app.get(
    '/backtest/:id/market/price/:symbol',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Price at virtual time: the close of the last candle closed by then (forward-filled)',
        params: sessionSymbolParams,
        response: { 200: priceResponse, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => sandboxPrice(callOf(request), request.params.id, request.params.symbol),
  );

  app.get(
    '/backtest/:id/market/prices',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Prices of the session pairs at virtual time',
        params: sessionParams,
        querystring: pricesQuery,
        response: { 200: pricesResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => {
      const { symbols } = request.query;
      return sandboxPrices(
        callOf(request),
        request.params.id,
        symbols === undefined ? undefined : requiredSymbols(symbols),
      );
    },
  );

  app.get(
    '/backtest/:id/market/ticker/:symbol',
    {
      config,
      schema: {
        tags,
        security,
        summary: '24h statistics at virtual time (candles closed in the 24 hours before it)',
        params: sessionSymbolParams,
        response: { 200: tickerResponse, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => sandboxTicker(callOf(request), request.params.id, request.params.symbol),
  );

  app.get(
    '/backtest/:id/market/candles/:symbol',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Candles closed at or before virtual time, oldest first',
        description:
          '`interval` defaults to the session interval (any of 1m 5m 15m 1h 4h 1d the data has); `start_time`/' +
          '`end_time` bound the open time (inclusive); without `start_time` the newest `limit` candles. A candle ' +
          'still open at virtual time is never returned.',
        params: sessionSymbolParams,
        querystring: candlesQuery,
        response: { 200: candlesResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      return sandboxCandles(callOf(request), request.params.id, request.params.symbol, {
        interval: q.interval,
        startTime: q.start_time,
        endTime: q.end_time,
        limit: q.limit,
      });
    },
  );

  app.get(
    '/backtest/:id/market/indicators/:symbol',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Indicators of a session pair from the candles closed by virtual time (no look-ahead)',
        description:
          'As `GET /market/indicators/{symbol}` (docs/market-data.md "Indicators"), over the newest `limit` ' +
          'candles of `interval` (default: the session interval) closed at or before virtual time; candles ' +
          'before the session start count.',
        params: sessionSymbolParams,
        querystring: indicatorsQuery,
        response: { 200: sandboxIndicatorsResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) =>
      sandboxIndicators(callOf(request), request.params.id, request.params.symbol, request.query),
  );

  /** `GET /backtest/:id/account/{what}`: one of the session's account reads at virtual time, by the same rules. */
  const accountRead = <R extends AccountResponse>(
    what: string,
    summary: string,
    response: R,
    read: (call: Call, id: string) => Promise<z.input<R>>,
  ) =>
    app.get(
      `/backtest/:id/account/${what}`,
      {
        config,
        schema: {
          tags,
          security,
          summary,
          params: sessionParams,
          response: { 200: response as AccountResponse, ...errorResponses(401, 403, 404, 409, 429) },
        },
      },
      async (request): Promise<z.input<AccountResponse>> => read(callOf(request), request.params.id),
    );
  accountRead('balance', 'Sandbox balances and equity at virtual time', balanceResponse, sandboxBalance);
  accountRead('positions', 'Sandbox positions valued at virtual time', positionsResponse, sandboxPositions);
  accountRead('portfolio', 'Sandbox portfolio snapshot at virtual time', portfolioResponse, sandboxPortfolio);
};
