import { z } from 'zod';
import type { RateLimitGroup } from '../../application/rate-limits';
import {
  ocoPreviewResponse,
  ocoResponse,
  orderPreviewResponse,
  placedOrderResponse,
} from '../../contract/trading';
import type { RoutedEndpoint } from '../../endpoints/endpoint';
import { tradingEndpoints as ep } from '../../endpoints/trading';
import {
  authed,
  DESTRUCTIVE,
  defineTool,
  IDEMPOTENT_WRITE,
  READ,
  type RestClient,
  restOf,
  type ToolCall,
  type ToolDef,
  WRITE,
} from '../tool';
import { endpointTools } from '../tool-table';

/**
 * Trading tools (spec "Trading endpoints"): the caller's wallet (the agent's with an agent key or `X-Agent-Id`),
 * each serving its endpoint of `src/endpoints/trading.ts` as `/trade/*` does. Writes count in the `orders`
 * rate-limit group (100 per minute), reads and a placement's `dry_run` (its preview route) in `general`.
 */

const read = {
  toolset: 'trading',
  auth: 'key-or-jwt',
  rateLimitGroup: 'general',
  annotations: READ,
} as const;
const write = { toolset: 'trading', auth: 'key-or-jwt', rateLimitGroup: 'orders' } as const;

/** `confirm` of the destructive tools: must be `true`. */
export const confirmTrue = z.literal(true).describe('must be true: this cannot be undone');

const placeInput = ep.place.input.extend({
  dry_run: z
    .boolean()
    .optional()
    .describe('true: run the risk chain and price the order without placing it (POST /trade/order/preview)'),
});

const placeOutput = z.object({
  order: placedOrderResponse
    .optional()
    .describe('the order placed: filled at once (market) or pending with collateral locked'),
  preview: orderPreviewResponse.optional().describe('with dry_run: what the order would do; nothing placed'),
  idempotent_replay: z.boolean().optional().describe('true when this answers a retry under the same key'),
});

const orderSummary = (o: z.output<typeof placeOutput>): string => {
  if (o.preview) {
    const p = o.preview;
    return p.would_fill
      ? `dry run: would ${p.side} ${p.executed_quantity} ${p.symbol} at ${p.executed_price} USDT (fee ${p.fee}, total ${p.total_cost}); nothing placed`
      : `dry run: would rest as a pending ${p.type} ${p.side} of ${p.quantity} ${p.symbol}, locking ${p.locked_amount} ${p.lock_asset}; nothing placed`;
  }
  const order = o.order;
  if (!order) return 'no order';
  if ('executed_price' in order) {
    const done = `${order.side} ${order.executed_quantity} ${order.symbol} at ${order.executed_price} USDT (fee ${order.fee})`;
    return order.status === 'filled'
      ? `order ${order.order_id} filled: ${done}`
      : `order ${order.order_id} partly filled, the rest ${order.status} (${order.cancel_reason}): ${done} of ${order.requested_quantity}`;
  }
  return `order ${order.order_id} ${order.status}${order.cancel_reason ? ` (${order.cancel_reason})` : ''}: ${order.type} ${order.side} ${order.quantity} ${order.symbol}`;
};

/** `idempotent_replay: true` when the placement just run answered a retry under its key (`receipt.replayed`). */
const replayFlag = (call: ToolCall) => (call.receipt.replayed ? { idempotent_replay: true } : {});

/**
 * The in-venue `run` and the stdio door's `rest` of a placement tool with `dry_run` (`place_order`,
 * `place_oco_order`): with `dry_run: true` the `preview` endpoint, answered as `{ preview }`; otherwise the `place`
 * endpoint under the call's `idempotency_key`, answered as `{ [key]: placed }`, in the venue with
 * `idempotent_replay` when it answered a retry ({@link replayFlag}). Over REST each is its endpoint's route
 * ({@link restOf}: the key as the `Idempotency-Key` header, the other fields as the body).
 */
const placementBindings = <
  K extends string,
  PI extends z.ZodObject,
  PO extends z.ZodType,
  VI extends z.ZodObject,
  VO extends z.ZodType,
>(
  key: K,
  place: RoutedEndpoint<PI, PO>,
  preview: RoutedEndpoint<VI, VO>,
) => {
  const placeRest = restOf(place.route);
  const previewRest = restOf(preview.route);
  type Args = z.output<PI> & { idempotency_key?: string | undefined; dry_run?: boolean | undefined };
  type Answer = { preview?: z.input<VO> } & Partial<Record<K, z.input<PO>>> & { idempotent_replay?: true };
  return {
    run: async (call: ToolCall, a: Args): Promise<Answer> => {
      const { idempotency_key, dry_run, ...body } = a;
      if (dry_run) return { preview: await preview.run(authed(call), body as z.output<VI>) } as Answer;
      const placed = await place.run(authed(call), { ...body, idempotency_key } as z.output<PI>);
      return { [key]: placed, ...replayFlag(call) } as Answer;
    },
    rest: async (a: Record<string, unknown>, http: RestClient): Promise<unknown> => {
      const { idempotency_key, dry_run, ...body } = a;
      if (dry_run) return { preview: await previewRest(body, http) };
      return { [key]: await placeRest({ ...body, idempotency_key }, http) };
    },
    // A dry run is the preview route, which REST counts in `general`: a preview is not an order (spec "Limits").
    rateLimitGroupOf: (a: Args): RateLimitGroup => (a.dry_run ? 'general' : 'orders'),
  };
};

const ocoOutput = z.object({
  oco: ocoResponse.optional().describe('the list and its two legs as placed'),
  preview: ocoPreviewResponse.optional().describe('with dry_run: what each leg would do now; nothing placed'),
  idempotent_replay: z.boolean().optional().describe('true when this answers a retry under the same key'),
});

/** Each tool's description, by its name (what it does, units, errors). */
const describe: Readonly<Record<string, string>> = {
  get_order:
    'One order of the caller by id: status, prices (USDT), executed quantity, fee, lock, and the risk rule for a ' +
    'rejected one. ORDER_NOT_FOUND when unknown or of another wallet.',
  list_orders:
    'Orders of the caller, newest first, filtered by status (pending, partially_filled, filled, cancelled, ' +
    'rejected), symbol and client_order_id; limit 1–500 (default 100), offset, or cursor (next_cursor of the previous page: ' +
    'the same cost at any depth).',
  list_open_orders:
    'Pending and partially filled orders of the caller, newest first (optionally of one symbol); limit 1–200, ' +
    'offset or cursor (next_cursor of the previous page).',
  cancel_order:
    'Cancels one open order of the caller and releases its whole lock. ORDER_NOT_FOUND (unknown or another ' +
    "wallet's), ORDER_NOT_CANCELLABLE (already filled, cancelled or rejected).",
  get_trade_history:
    'Executed fills of the caller, newest first (filter by symbol and side; limit 1–500, default 50): price, fee ' +
    'and total in USDT, realized PnL, slippage. Deep pages: cursor = next_cursor of the previous page.',
};

export const tradingTools: ToolDef[] = [
  defineTool({
    ...write,
    name: 'place_oco_order',
    routes: ['POST /trade/order/oco', 'POST /trade/order/oco/preview'],
    title: 'Place an OCO (take-profit + stop-loss, one cancels the other)',
    description:
      'Places two linked orders of one quantity: a take_profit leg (type limit at price, the default, or ' +
      'take_profit at trigger_price) and a stop_loss leg (trigger_price). For side sell (exiting a held position) ' +
      'the take-profit is above and the stop below; for buy the mirror. Both pass the risk chain and share one ' +
      'lock (a sell OCO locks its quantity once). As soon as one leg starts to fill the other is cancelled ' +
      '(linked_fill); cancel_order on either leg cancels both. For exits attached to a new entry, use place_order ' +
      'with bracket. dry_run: true previews both legs through the same risk chain without placing them.',
    input: ep.placeOco.input.extend({
      dry_run: z
        .boolean()
        .optional()
        .describe(
          'true: run the risk chain and price both legs without placing them (POST /trade/order/oco/preview)',
        ),
    }),
    output: ocoOutput,
    annotations: WRITE,
    ...placementBindings('oco', ep.placeOco, ep.previewOco),
    summary: (r) =>
      r.preview
        ? `dry run: OCO ${r.preview.orders.map((o) => `${o.list_role} ${o.status}${o.would_fill ? ` at ${o.executed_price} USDT` : ''}`).join(', ')}; nothing placed`
        : r.oco
          ? `OCO ${r.oco.order_list_id}: ${r.oco.orders.map((o) => `${o.list_role} ${o.order_id} ${o.status}`).join(', ')}`
          : 'no OCO',
  }),
  defineTool({
    ...write,
    name: 'place_order',
    routes: ['POST /trade/order', 'POST /trade/order/preview'],
    title: 'Place an order',
    description:
      'Places a market, limit, stop_loss or take_profit order (quantity in the base asset; price and trigger_price ' +
      'in USDT). Market orders fill at once with slippage and a fee; the others wait with collateral locked. ' +
      'dry_run: true prices it through the same risk chain without placing. A refusal names the rule ' +
      '(details.rule): INVALID_SYMBOL, INVALID_QUANTITY, INSUFFICIENT_BALANCE, POSITION_LIMIT_EXCEEDED, ' +
      'DAILY_LOSS_LIMIT, ORDER_REJECTED, PRICE_NOT_AVAILABLE.',
    input: placeInput,
    output: placeOutput,
    annotations: WRITE,
    ...placementBindings('order', ep.place, ep.preview),
    summary: orderSummary,
  }),
  ...endpointTools(read, ep, describe, {
    get: [
      'get_order',
      'One order',
      (r) => `order ${r.order_id}: ${r.status} ${r.type} ${r.side} ${r.quantity} ${r.symbol}`,
    ],
    list: ['list_orders', 'Orders', (r) => `${r.orders.length} of ${r.total} orders`],
    listOpen: ['list_open_orders', 'Open orders', (r) => `${r.total} open orders`],
  }),
  ...endpointTools(write, ep, describe, {
    cancel: [
      'cancel_order',
      'Cancel an order',
      (r) => `order ${r.order_id} cancelled, ${r.unlocked_amount} ${r.unlocked_asset} released`,
      IDEMPOTENT_WRITE,
    ],
  }),
  defineTool({
    ...write,
    name: 'cancel_all_orders',
    routes: ['DELETE /trade/orders/open'],
    title: 'Cancel every open order',
    description:
      'Cancels every open order of the caller at once and releases their locks. Destructive: needs confirm: true.',
    input: z.strictObject({ confirm: confirmTrue }),
    output: ep.cancelAll.output,
    annotations: DESTRUCTIVE,
    run: (call) => ep.cancelAll.run(authed(call), {}),
    rest: (_a, http) => http({ method: 'DELETE', path: '/trade/orders/open' }),
    summary: (r) => `${r.cancelled_count} orders cancelled, ${r.total_unlocked} USDT released`,
  }),
  ...endpointTools(read, ep, describe, {
    history: ['get_trade_history', 'Trade history', (r) => `${r.trades.length} of ${r.total} fills`],
  }),
];
