import { z } from 'zod';
import type { OrderPreviewOutcome } from '../../commands/wallet';
import {
  cancelAllOrders,
  cancelOrder,
  getOrderWithFills,
  listOpenOrders,
  listOrders,
  listTrades,
  type OrderInput,
  type PlacedOrder,
  placeOrder,
  previewOrder,
} from '../application/trading';
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
} from '../contract/trading';
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
} from '../trading/present';
import { endpoint, served } from './endpoint';

/**
 * `idempotency_key` of a placement: the REST door reads it from the `Idempotency-Key` header, the MCP tool from its
 * argument; scoped to the wallet for 24 h (`placeOrder`).
 */
const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .describe('retry-safe key (Idempotency-Key): the same key and order within 24 h answer the first result');

/**
 * The placement and the preview of one kind of order (one order, or an OCO): its body, the `OrderInput` it
 * becomes, and the presenters of the order placed and of the preview.
 */
const placementEndpoints = <
  B extends z.ZodObject,
  K extends z.ZodObject<{ idempotency_key: typeof idempotencyKey }>,
  P extends z.ZodType,
  V extends z.ZodType,
>(kind: {
  body: B;
  /** `body` with `idempotency_key`. */
  keyed: K;
  inputOf: (body: z.output<B>) => OrderInput;
  placed: P;
  placedOut: (outcome: PlacedOrder['outcome']) => z.input<P>;
  preview: V;
  previewOut: (preview: OrderPreviewOutcome) => z.input<V>;
  /** The placement's path (`/trade/order`); the preview's is it and `/preview`. */
  path: `/${string}`;
}) => ({
  place: endpoint({
    route: { method: 'POST', path: kind.path, status: 201, headers: idempotencyHeaders, body: kind.body },
    input: kind.keyed,
    output: kind.placed,
    run: async (call, a) => {
      const { idempotency_key, ...body } = a;
      const input = kind.inputOf(body as z.output<B>);
      const placed = await placeOrder(call, input, { idempotencyKey: idempotency_key });
      return kind.placedOut(placed.outcome);
    },
  }),
  preview: endpoint({
    route: { method: 'POST', path: `${kind.path}/preview`, body: kind.body },
    input: kind.body,
    output: kind.preview,
    run: async (call, a) => kind.previewOut(await previewOrder(call, kind.inputOf(a))),
  }),
});

const single = placementEndpoints({
  body: placeOrderBody,
  keyed: placeOrderBody.extend({ idempotency_key: idempotencyKey }),
  inputOf: orderInputOf,
  placed: placedOrderResponse,
  placedOut: placedOrderOut,
  preview: orderPreviewResponse,
  previewOut,
  path: '/trade/order',
});
const oco = placementEndpoints({
  body: placeOcoBody,
  keyed: placeOcoBody.extend({ idempotency_key: idempotencyKey }),
  inputOf: ocoInputOf,
  placed: ocoResponse,
  placedOut: placedOcoOut,
  preview: ocoPreviewResponse,
  previewOut: ocoPreviewOut,
  path: '/trade/order/oco',
});

/**
 * The trading endpoints (spec "Trading endpoints"; ARCHITECTURE §8): `/trade/*` and the trading MCP toolset serve
 * these, each its use case of `src/application/trading.ts` (which carries idempotency, read your writes and
 * ownership) presented with `src/trading/present.ts`. A retry answered from the idempotency record sets the call's
 * `receipt.replayed`.
 */
export const tradingEndpoints = {
  place: single.place,
  placeOco: oco.place,
  preview: single.preview,
  previewOco: oco.preview,
  get: served(
    { method: 'GET', path: '/trade/order/:order_id', params: orderIdParams },
    orderDetailResponse,
    async (call, a) => {
      const { order, fills } = await getOrderWithFills(call, a.order_id);
      return orderDetailOut(order, fills);
    },
  ),
  list: served(
    { method: 'GET', path: '/trade/orders', querystring: listOrdersQuery },
    orderListResponse,
    async (call, a) => orderListOut(await listOrders(call, { ...a, clientOrderId: a.client_order_id }), a),
  ),
  listOpen: served(
    { method: 'GET', path: '/trade/orders/open', querystring: openOrdersQuery },
    orderListResponse,
    async (call, a) =>
      orderListOut(await listOpenOrders(call, { ...a, clientOrderId: a.client_order_id }), a),
  ),
  cancel: served(
    { method: 'DELETE', path: '/trade/order/:order_id', params: orderIdParams },
    cancelResponse,
    async (call, a) => cancelOut(await cancelOrder(call, a.order_id)),
  ),
  cancelAll: served({ method: 'DELETE', path: '/trade/orders/open' }, cancelAllResponse, async (call) =>
    cancelAllOut(await cancelAllOrders(call)),
  ),
  history: served(
    { method: 'GET', path: '/trade/history', querystring: historyQuery },
    historyResponse,
    async (call, a) => tradeListOut(await listTrades(call, a), a),
  ),
};
