import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  cancelAllOrders,
  cancelOrder,
  getOrderWithFills,
  listOpenOrders,
  listOrders,
  listTrades,
  placeOrder,
  previewOrder,
} from '../../application/trading';
import { errorResponses } from '../../contract/common';
import {
  cancelAllResponse,
  cancelResponse,
  historyQuery,
  historyResponse,
  idempotencyHeaders,
  listOrdersQuery,
  ocoInputOf,
  ocoPreviewResponse,
  ocoResponse,
  openOrdersQuery,
  orderDetailResponse,
  orderIdParams,
  orderInputOf,
  orderListResponse,
  orderPreviewResponse,
  placedOrderResponse,
  placeOcoBody,
  placeOrderBody,
} from '../../contract/trading';
import {
  cancelAllOut,
  cancelOut,
  ocoPreviewOut,
  orderDetailOut,
  orderListOut,
  placedOcoOut,
  placedOrderOut,
  previewOut,
  tradeListOut,
} from '../../trading/present';
import { callOf } from '../call';

import { addServerTiming } from '../server-timing';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['trade'];
/** Reads settle the caller's own writes in their use case, into the read models they read. */
const read = { auth: 'key-or-jwt' } as const;
/**
 * Placement and cancels share the order limit (spec "Limits": 100 per minute, combined). They decide from the
 * wallet's stream, so they need not wait for the caller's earlier writes to be folded.
 */
const write = { auth: 'key-or-jwt', rateLimitGroup: 'orders' } as const;

/**
 * Trading endpoints (spec "Trading endpoints"; ARCHITECTURE §8): each parses, calls its use case in
 * `src/application/trading.ts` (which carries idempotency, read your writes and ownership) and presents.
 */
export const tradeRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/trade/order',
    {
      config: write,
      schema: {
        tags,
        security,
        summary:
          'Place an order: market orders fill at once, limit/stop_loss/take_profit wait with collateral locked',
        description:
          'Passes the 8-step risk chain (docs/trading-rules.md); a rejection is recorded (status `rejected`) and ' +
          'answered with the error of the failing rule (`details.rule`). `Idempotency-Key` (scoped to the wallet, ' +
          'whichever credential sends it): the same key and body within 24 h return the original response; another ' +
          'body gives 409 `CONFLICT`.',
        headers: idempotencyHeaders,
        body: placeOrderBody,
        response: {
          201: placedOrderResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      const placed = await placeOrder(callOf(request), orderInputOf(request.body), {
        idempotencyKey: request.headers['idempotency-key'],
      });
      return reply.status(201).send(placedOrderOut(placed.outcome));
    },
  );

  app.post(
    '/trade/order/oco',
    {
      config: write,
      schema: {
        tags,
        security,
        summary:
          'Place an OCO: a take-profit and a stop-loss of one quantity; the first to fill cancels the other',
        description:
          'Both legs pass the 8-step risk chain together and share one lock (a sell OCO locks its base quantity ' +
          'once). As soon as one leg starts to fill the other is cancelled in the same decision; cancelling either ' +
          'leg cancels both (docs/trading-rules.md, "Order lists: OCO and bracket"). `Idempotency-Key` as for ' +
          '`POST /trade/order`.',
        headers: idempotencyHeaders,
        body: placeOcoBody,
        response: {
          201: ocoResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const placed = await placeOrder(callOf(request), ocoInputOf(request.body), {
        idempotencyKey: request.headers['idempotency-key'],
      });
      return reply.status(201).send(placedOcoOut(placed.outcome));
    },
  );

  app.post(
    '/trade/order/oco/preview',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'What an OCO would do now (each leg, or the rule it breaks), without placing it',
        description:
          'Same body as `POST /trade/order/oco`. Runs the same guards, 8-step risk chain (both legs together, one ' +
          'lock) and pricing on the wallet as it is, offers each leg the current price as the matching engine ' +
          'would, and records nothing: 200 with each leg as `POST /trade/order/preview` answers an order, or the ' +
          'error the list would get.',
        body: placeOcoBody,
        response: {
          200: ocoPreviewResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request) => ocoPreviewOut(await previewOrder(callOf(request), ocoInputOf(request.body))),
  );

  app.post(
    '/trade/order/preview',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'What an order would do now (its fill, or the rule it breaks), without placing it',
        description:
          'Same body as `POST /trade/order`. Runs the same guards, 8-step risk chain and pricing (live price, ' +
          'slippage, fee rate, risk profile) on the wallet as it is, and records nothing: 200 with the fill a ' +
          'market order would get or the lock a resting order would hold, or the error the order would get.',
        body: placeOrderBody,
        response: {
          200: orderPreviewResponse,
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request) => {
      const preview = await previewOrder(callOf(request), orderInputOf(request.body));
      return previewOut(preview);
    },
  );

  app.get(
    '/trade/order/:order_id',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'One order of the caller',
        params: orderIdParams,
        response: { 200: orderDetailResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const { order, fills } = await getOrderWithFills(callOf(request), request.params.order_id);
      return orderDetailOut(order, fills);
    },
  );

  app.get(
    '/trade/orders',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Orders of the caller, newest first (filter by status, symbol and client_order_id)',
        querystring: listOrdersQuery,
        response: { 200: orderListResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listOrders(callOf(request), { ...q, clientOrderId: q.client_order_id });
      return orderListOut(page, q);
    },
  );

  app.get(
    '/trade/orders/open',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Pending and partially filled orders of the caller, newest first (filter by symbol)',
        querystring: openOrdersQuery,
        response: { 200: orderListResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listOpenOrders(callOf(request), { ...q, clientOrderId: q.client_order_id });
      return orderListOut(page, q);
    },
  );

  app.delete(
    '/trade/order/:order_id',
    {
      config: write,
      schema: {
        tags,
        security,
        summary: 'Cancel one open order; its whole lock is released',
        params: orderIdParams,
        response: { 200: cancelResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      return cancelOut(await cancelOrder(callOf(request), request.params.order_id));
    },
  );

  app.delete(
    '/trade/orders/open',
    {
      config: write,
      schema: {
        tags,
        security,
        summary: 'Cancel every open order of the caller atomically (one append)',
        response: { 200: cancelAllResponse, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => {
      return cancelAllOut(await cancelAllOrders(callOf(request)));
    },
  );

  app.get(
    '/trade/history',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Executed fills of the caller, newest first',
        querystring: historyQuery,
        response: { 200: historyResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listTrades(callOf(request), q);
      return tradeListOut(page, q);
    },
  );
};
