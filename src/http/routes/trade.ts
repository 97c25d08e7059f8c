import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { errorResponses } from '../../contract/common';
import {
  historyQuery,
  idempotencyHeaders,
  listOrdersQuery,
  openOrdersQuery,
  orderIdParams,
  placeOcoBody,
  placeOrderBody,
} from '../../contract/trading';
import { tradingEndpoints as ep } from '../../endpoints/trading';
import { callOf } from '../call';
import { addServerTiming } from '../server-timing';
import { routeGroup } from './route-options';

/** Reads settle the caller's own writes in their use case, into the read models they read. */
const read = routeGroup('trade', { auth: 'key-or-jwt' });
/**
 * Placement and cancels share the order limit (spec "Limits": 100 per minute, combined). They decide from the
 * wallet's stream, so they need not wait for the caller's earlier writes to be folded.
 */
const write = routeGroup('trade', { auth: 'key-or-jwt', rateLimitGroup: 'orders' });
/** The errors of a placement or its preview. */
const placementErrors = () => errorResponses(400, 401, 403, 404, 409, 422, 429, 503);

/**
 * Trading endpoints (spec "Trading endpoints"; ARCHITECTURE §8): each serves its endpoint of
 * `src/endpoints/trading.ts`, which calls the use case in `src/application/trading.ts` (idempotency, read your
 * writes and ownership) and presents.
 */
export const tradeRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/trade/order',
    write(
      'Place an order: market orders fill at once, limit/stop_loss/take_profit wait with collateral locked',
      {
        description:
          'Passes the 8-step risk chain (docs/trading-rules.md); a rejection is recorded (status `rejected`) and ' +
          'answered with the error of the failing rule (`details.rule`). `Idempotency-Key` (scoped to the wallet, ' +
          'whichever credential sends it): the same key and body within 24 h return the original response; another ' +
          'body gives 409 `CONFLICT`.',
        headers: idempotencyHeaders,
        body: placeOrderBody,
        response: { 201: ep.place.output, ...placementErrors() },
      },
    ),
    async (request, reply) => {
      addServerTiming(reply, 'handler', reply.elapsedTime);
      const idempotency_key = request.headers['idempotency-key'];
      return reply
        .status(201)
        .send(await ep.place.run(callOf(request), { ...request.body, idempotency_key }));
    },
  );

  app.post(
    '/trade/order/oco',
    write(
      'Place an OCO: a take-profit and a stop-loss of one quantity; the first to fill cancels the other',
      {
        description:
          'Both legs pass the 8-step risk chain together and share one lock (a sell OCO locks its base quantity ' +
          'once). As soon as one leg starts to fill the other is cancelled in the same decision; cancelling either ' +
          'leg cancels both (docs/trading-rules.md, "Order lists: OCO and bracket"). `Idempotency-Key` as for ' +
          '`POST /trade/order`.',
        headers: idempotencyHeaders,
        body: placeOcoBody,
        response: { 201: ep.placeOco.output, ...placementErrors() },
      },
    ),
    async (request, reply) => {
      const idempotency_key = request.headers['idempotency-key'];
      return reply
        .status(201)
        .send(await ep.placeOco.run(callOf(request), { ...request.body, idempotency_key }));
    },
  );

  app.post(
    '/trade/order/oco/preview',
    read('What an OCO would do now (each leg, or the rule it breaks), without placing it', {
      description:
        'Same body as `POST /trade/order/oco`. Runs the same guards, 8-step risk chain (both legs together, one ' +
        'lock) and pricing on the wallet as it is, offers each leg the current price as the matching engine ' +
        'would, and records nothing: 200 with each leg as `POST /trade/order/preview` answers an order, or the ' +
        'error the list would get.',
      body: placeOcoBody,
      response: { 200: ep.previewOco.output, ...placementErrors() },
    }),
    async (request) => ep.previewOco.run(callOf(request), request.body),
  );

  app.post(
    '/trade/order/preview',
    read('What an order would do now (its fill, or the rule it breaks), without placing it', {
      description:
        'Same body as `POST /trade/order`. Runs the same guards, 8-step risk chain and pricing (live price, ' +
        'slippage, fee rate, risk profile) on the wallet as it is, and records nothing: 200 with the fill a ' +
        'market order would get or the lock a resting order would hold, or the error the order would get.',
      body: placeOrderBody,
      response: { 200: ep.preview.output, ...placementErrors() },
    }),
    async (request) => ep.preview.run(callOf(request), request.body),
  );

  app.get(
    '/trade/order/:order_id',
    read('One order of the caller', {
      params: orderIdParams,
      response: { 200: ep.get.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.get.run(callOf(request), request.params),
  );

  app.get(
    '/trade/orders',
    read('Orders of the caller, newest first (filter by status, symbol and client_order_id)', {
      querystring: listOrdersQuery,
      response: { 200: ep.list.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => ep.list.run(callOf(request), request.query),
  );

  app.get(
    '/trade/orders/open',
    read('Pending and partially filled orders of the caller, newest first (filter by symbol)', {
      querystring: openOrdersQuery,
      response: { 200: ep.listOpen.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => ep.listOpen.run(callOf(request), request.query),
  );

  app.delete(
    '/trade/order/:order_id',
    write('Cancel one open order; its whole lock is released', {
      params: orderIdParams,
      response: { 200: ep.cancel.output, ...errorResponses(401, 403, 404, 409, 429) },
    }),
    async (request) => ep.cancel.run(callOf(request), request.params),
  );

  app.delete(
    '/trade/orders/open',
    write('Cancel every open order of the caller atomically (one append)', {
      response: { 200: ep.cancelAll.output, ...errorResponses(401, 403, 429) },
    }),
    async (request) => ep.cancelAll.run(callOf(request), {}),
  );

  app.get(
    '/trade/history',
    read('Executed fills of the caller, newest first', {
      querystring: historyQuery,
      response: { 200: ep.history.output, ...errorResponses(401, 403, 422, 429) },
    }),
    async (request) => ep.history.run(callOf(request), request.query),
  );
};
