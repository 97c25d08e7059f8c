import { z } from 'zod';
import { FILL_MODELS } from '../../domain/fill-model/model';
import { DomainError } from '../../domain/shared/errors';
import { dec, decimalText } from '../../domain/trading/decimal';
import { MAX_ORDER_DECIMAL, ORDER_SIDES, ORDER_TYPES, TIME_IN_FORCE } from '../../domain/trading/orders';
import { CLIENT_ORDER_ID_PATTERN } from '../../domain/wallet/client-order-id';
import type { TradingModeState } from '../../domain/wallet/mode';
import type {
  BalanceLine,
  FillModelView,
  ModeView,
  PnlBreakdown,
  ResetOutcome,
} from '../application/account';
import type { OrderInput } from '../application/trading';
import type { WalletAuditReport } from '../audit/wallet-audit';
import {
  decimalInput,
  decimalOutput,
  pageFields,
  pageResponse,
  queryInt,
  startingBalanceInput,
  timestamp,
} from './common';

/** `{order_id}` path parameter (any string: an unknown id is `ORDER_NOT_FOUND`, never a validation error). */
export const orderIdParams = z.object({ order_id: z.string().min(1).max(100).describe('order id (UUID)') });

const PLAIN_DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** False for a well-formed decimal of magnitude ≥ {@link MAX_ORDER_DECIMAL} (the decider checks the form). */
const withinOrderBound = (value: string | number): boolean => {
  if (typeof value === 'number') return Math.abs(value) < Number(MAX_ORDER_DECIMAL);
  const text = value.trim();
  return !PLAIN_DECIMAL.test(text) || dec(text).abs().lt(MAX_ORDER_DECIMAL);
};

/** A decimal of an order: {@link decimalInput} below {@link MAX_ORDER_DECIMAL} in magnitude. */
const orderDecimal = decimalInput.refine(withinOrderBound, {
  message: `must be less than ${MAX_ORDER_DECIMAL} in absolute value`,
});

/**
 * A pair symbol on input: case-insensitive, trimmed, without control characters (PostgreSQL stores no NUL in
 * text or `jsonb`: a symbol with one was a 500 when recorded as a rejection or used as a filter). Any other
 * unknown symbol is `INVALID_SYMBOL` as the spec says.
 */
export const symbolInput = z
  .string()
  .trim()
  .min(1)
  .max(30)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  .regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters')
  .describe('pair symbol, case-insensitive, e.g. "BTCUSDT"');

/** `time_in_force` of an order body (docs/trading-rules.md, "Time in force"): optional, `GTC` by default. */
const timeInForceInput = z
  .enum(TIME_IN_FORCE)
  .optional()
  .describe(
    '`GTC` (default): rests until filled or cancelled; `IOC`: fills what it can now, the rest is cancelled; `FOK`: fills whole now or not at all (cancelled, nothing locked). A stop or take-profit applies it when triggered.',
  );

/** `time_in_force` of an order on the wire: present only when not `GTC`. */
const timeInForceOutput = z.enum(['IOC', 'FOK']).optional().describe('present when the order was IOC or FOK');

/** `client_order_id` of an order body (docs/trading-rules.md, "Client order ids"): optional. */
const clientOrderIdInput = z
  .string()
  .regex(CLIENT_ORDER_ID_PATTERN, 'must be 1 to 36 characters of letters, digits, "-", "_" or "."')
  .optional()
  .describe(
    'your own id of the order: 1 to 36 characters of `a-zA-Z0-9-_.` (Binance `newClientOrderId`), unique among your open orders (another open order with it: 409 `CONFLICT`); shown on the order and filterable in `GET /trade/orders?client_order_id=`',
  );

/** `client_order_id` of an order on the wire: present only when the order was placed with one. */
const clientOrderIdOutput = z.string().optional().describe('present when the order was placed with one');

/** A take-profit exit or leg (docs/trading-rules.md, "Order lists: OCO and bracket"). */
const takeProfitInput = z
  .object({
    type: z
      .enum(['limit', 'take_profit'])
      .default('limit')
      .describe(
        '`limit` (default): rests at `price` as a maker; `take_profit`: triggered at `trigger_price`, fills as a taker',
      ),
    price: orderDecimal.nullable().optional().describe('the limit price: required for a `limit` take-profit'),
    trigger_price: orderDecimal
      .nullable()
      .optional()
      .describe('the trigger price: required for a `take_profit` take-profit'),
  })
  .strict();

/** A stop-loss exit or leg: a `stop_loss` triggered at `trigger_price`. */
const stopLossInput = z
  .object({ trigger_price: orderDecimal.describe('the stop-loss trigger price') })
  .strict();

/** `bracket` of an order body: the exits placed once the entry is done. */
const bracketInput = z
  .object({ take_profit: takeProfitInput.optional(), stop_loss: stopLossInput.optional() })
  .strict()
  .optional()
  .describe(
    'attach exits (a bracket; `market` or `limit` entries only): once the entry is done they are placed on the other side for the quantity it executed, both as an OCO (one filling cancels the other). docs/trading-rules.md, "Order lists: OCO and bracket"',
  );

/** `POST /trade/order` body (spec "Trading endpoints"); also the sandbox and historical battle order bodies. */
export const placeOrderBody = z
  .object({
    symbol: symbolInput,
    side: z.enum(ORDER_SIDES),
    type: z.enum(ORDER_TYPES),
    quantity: orderDecimal.describe(
      'base asset quantity: > 0, ≥ min_qty, a multiple of step_size, below 10^15',
    ),
    price: orderDecimal
      .nullable()
      .optional()
      .describe('limit price (below 10^15): required for `limit`, refused (422) on other types'),
    trigger_price: orderDecimal
      .nullable()
      .optional()
      .describe(
        'trigger price (below 10^15): required for `stop_loss` and `take_profit`, refused (422) on other types',
      ),
    stop_price: orderDecimal
      .nullable()
      .optional()
      .describe(
        "the original clients' name of `trigger_price` (docs/compatibility.md): the same value; both given must be equal",
      ),
    time_in_force: timeInForceInput,
    client_order_id: clientOrderIdInput,
    bracket: bracketInput,
  })
  .strict();

/** `POST /trade/order/oco` body: a take-profit and a stop-loss of one quantity, one cancelling the other. */
export const placeOcoBody = z
  .object({
    symbol: symbolInput,
    side: z
      .enum(ORDER_SIDES)
      .describe('both legs: `sell` exits a held position (take-profit above, stop below); `buy` the mirror'),
    quantity: orderDecimal.describe('base quantity of each leg (one lock for both)'),
    take_profit: takeProfitInput.extend({
      client_order_id: clientOrderIdInput.describe(
        "the take-profit leg's own client order id (Binance `limitClientOrderId`): as an order's `client_order_id`",
      ),
    }),
    stop_loss: stopLossInput.extend({
      client_order_id: clientOrderIdInput.describe(
        "the stop-loss leg's own client order id (Binance `stopClientOrderId`): as an order's `client_order_id`, and not the take-profit's",
      ),
    }),
    list_client_order_id: clientOrderIdInput.describe(
      'your own id of the whole list (Binance `listClientOrderId`): same characters as a `client_order_id`, shown on both legs; not required unique',
    ),
  })
  .strict();

/** `Idempotency-Key` header (ARCHITECTURE §8). */
export const idempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('same key and body within 24 h return the original response; another body → 409'),
});

/** The list fields of an order on the wire, present only for an order of a list (so lone orders keep the spec's shape). */
const listOutput = {
  order_list_id: z.string().optional().describe('the order list (an OCO, a bracket) the order belongs to'),
  list_kind: z.enum(['oco', 'bracket']).optional(),
  list_role: z.enum(['entry', 'take_profit', 'stop_loss']).optional(),
  list_client_order_id: z
    .string()
    .optional()
    .describe(
      "the list's own client id (an OCO's `list_client_order_id`), present when it was placed with one",
    ),
};

/**
 * `cancel_reason` and `cancelled_at` of a 201 whose order ended in the decision that placed it (present only then,
 * so the spec's shapes are unchanged otherwise; docs/trading-rules.md, "Partial fills").
 */
const endedOnPlacement = {
  cancel_reason: z
    .string()
    .optional()
    .describe(
      'present when the order ended as it was placed: `unfilled` (a market order or IOC whose rest the book could not hold), `fill_or_kill` (a FOK that could not fill whole)',
    ),
  cancelled_at: timestamp.optional().describe('present with cancel_reason'),
};

/**
 * Response 201 of an order that filled on placement (spec: a filled market order). `cancelled` when only part
 * filled and the rest was dropped at once (`executed_quantity` < `requested_quantity`, `cancel_reason`).
 */
export const filledOrderResponse = z.object({
  order_id: z.string(),
  status: z
    .enum(['filled', 'cancelled'])
    .describe('`filled`; `cancelled` when the book held only part of it and the rest was dropped'),
  symbol: z.string(),
  side: z.enum(ORDER_SIDES),
  type: z.enum(ORDER_TYPES),
  requested_quantity: decimalOutput,
  executed_quantity: decimalOutput,
  executed_price: decimalOutput,
  slippage_pct: decimalOutput,
  fee: decimalOutput,
  total_cost: decimalOutput.describe('buy: notional + fee; sell: notional − fee (proceeds)'),
  reference_price: decimalOutput.describe('the market price the fill was decided on'),
  price_source: z.string(),
  filled_at: timestamp,
  ...endedOnPlacement,
  time_in_force: timeInForceOutput,
  client_order_id: clientOrderIdOutput,
  ...listOutput,
});

/** What an order asks for, on output: pair, side, type, quantity (base) and its price and trigger (USDT) if any. */
const orderTermsOut = {
  symbol: z.string(),
  side: z.enum(ORDER_SIDES),
  type: z.enum(ORDER_TYPES),
  quantity: decimalOutput,
  price: decimalOutput.nullable(),
  trigger_price: decimalOutput.nullable(),
};

/** Response 201 of a pending (limit, stop_loss, take_profit) order (spec). */
export const pendingOrderResponse = z.object({
  order_id: z.string(),
  status: z.enum(['pending', 'partially_filled', 'filled', 'cancelled']),
  ...orderTermsOut,
  locked_amount: decimalOutput.describe('USDT for buys, the base quantity for sells'),
  created_at: timestamp,
  ...endedOnPlacement,
  time_in_force: timeInForceOutput,
  client_order_id: clientOrderIdOutput,
  ...listOutput,
});

/** A bracket's exits placed in the decision that placed its entry (a market entry filled at once). */
const exitsOutput = z
  .array(z.union([filledOrderResponse, pendingOrderResponse]))
  .optional()
  .describe(
    "a bracket's exits, present when its entry was done as it was placed (a market entry): the take-profit and stop-loss placed as an OCO",
  );

/** Response 201 of an order placement (`POST /trade/order`, the sandbox's, a battle's): filled at once or pending. */
export const placedOrderResponse = z.union([
  filledOrderResponse.extend({ exits: exitsOutput }),
  pendingOrderResponse.extend({ exits: exitsOutput }),
]);

/** Response 200 of `POST /trade/order/preview`: what the order would do now; nothing is placed. */
/** What the previewed order would get under one fill model. */
const modelPreview = z.object({
  status: z
    .enum(['filled', 'partially_filled', 'cancelled', 'pending', 'rejected'])
    .describe(
      '`filled`/`partially_filled`: it would fill now (the rest of a market order or an IOC beyond the book is ' +
        "cancelled, a stop's rest stays open); `cancelled`: it would end now without any fill (`cancel_reason`: an " +
        'IOC or FOK limit the price does not reach, a FOK the book cannot fill whole); `pending`: it would rest; ' +
        '`rejected`: `error` is what it would get',
    ),
  cancel_reason: z
    .string()
    .nullable()
    .describe('why the order would end at once: `unfilled` (IOC, market), `fill_or_kill` (FOK); else null'),
  would_fill: z.boolean(),
  executed_quantity: decimalOutput.nullable(),
  unfilled_quantity: decimalOutput.nullable().describe('what the fill now would leave of the order'),
  executed_price: decimalOutput.nullable(),
  slippage_pct: decimalOutput.nullable(),
  notional: decimalOutput.nullable(),
  fee: decimalOutput.nullable(),
  total_cost: decimalOutput.nullable(),
  liquidity: z
    .enum(['maker', 'taker'])
    .nullable()
    .describe('the fill now (taker), or how a resting limit order would fill later (maker)'),
  fee_rate: z.string().nullable().describe('the rate of the fill now, by its liquidity flag'),
  book_levels: z
    .array(z.tuple([z.string(), z.string()]))
    .nullable()
    .describe('`realistic` taker: the book levels it would walk, `[price, quantity]`'),
  participation_cap_pct: z
    .number()
    .nullable()
    .describe("`realistic`, resting limit: the share (%) of each print's volume it would fill at most"),
  error: z
    .object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) })
    .nullable(),
});

export const orderPreviewResponse = z.object({
  preview: z.literal(true).describe('nothing was placed'),
  status: z
    .enum(['filled', 'cancelled', 'pending'])
    .describe(
      'what the order would be: `filled` at once (market), `cancelled` at once with no fill (its time in force: an IOC or FOK limit the price does not reach, a FOK the book cannot fill whole), or `pending` with collateral locked',
    ),
  cancel_reason: z
    .string()
    .optional()
    .describe('present with `cancelled`: `unfilled` (IOC, market), `fill_or_kill` (FOK)'),
  would_fill: z.boolean().describe('true when the order would fill at once (the fill figures below are set)'),
  ...orderTermsOut,
  marketable: z
    .boolean()
    .describe(
      'a limit order the current price already reaches: it would fill at the next tick, never beyond its limit',
    ),
  executed_quantity: decimalOutput.nullable(),
  executed_price: decimalOutput.nullable().describe('USDT per unit, after slippage'),
  reference_price: decimalOutput.nullable().describe('the market price the fill would be decided on'),
  price_source: z.string().nullable(),
  slippage_pct: decimalOutput.nullable(),
  notional: decimalOutput.nullable().describe('executed_quantity × executed_price, USDT'),
  fee_rate: z.string().describe('fee per fill as a fraction, e.g. "0.001"'),
  fee: decimalOutput.nullable().describe('USDT'),
  total_cost: decimalOutput.nullable().describe('buy: notional + fee; sell: notional − fee (proceeds)'),
  locked_amount: decimalOutput.describe(
    'collateral a resting order would lock: USDT for buys, the base for sells',
  ),
  lock_asset: z.string(),
  priced_at: timestamp,
  fill_model: z.enum(FILL_MODELS).describe("the wallet's fill model: the figures above are its"),
  models: z
    .object({ realistic: modelPreview, instant: modelPreview })
    .describe('what the order would get now under each fill model (docs/trading-rules.md, "The fill model")'),
});

/**
 * Response 200 of `POST /trade/order/oco/preview`: each leg of the OCO as `POST /trade/order/preview` answers an
 * order (take-profit, then stop-loss), with its `list_role`; nothing placed, so no ids.
 */
export const ocoPreviewResponse = z.object({
  preview: z.literal(true).describe('nothing was placed'),
  list_kind: z.literal('oco'),
  list_client_order_id: z.string().optional().describe('present when the body gave one'),
  fill_model: orderPreviewResponse.shape.fill_model,
  orders: z
    .array(
      orderPreviewResponse.omit({ preview: true, fill_model: true }).extend({
        list_role: z.enum(['take_profit', 'stop_loss']),
        client_order_id: z.string().optional().describe('present when the body gave the leg one'),
      }),
    )
    .length(2)
    .describe(
      'the take-profit leg, then the stop-loss leg: a leg the current price already reaches is `filled` (`would_fill`) and the other `cancelled` (`cancel_reason` `linked_fill`), as if the list were placed now',
    ),
});

/**
 * What an order is and how it executed, on output, as a live order and a sandbox order both show it: quantity in
 * the base asset; prices, fee and total in USDT; `slippage_pct` in %; the execution fields null until it fills.
 */
export const orderFigures = {
  ...orderTermsOut,
  executed_price: decimalOutput.nullable(),
  executed_qty: decimalOutput.nullable(),
  slippage_pct: decimalOutput.nullable(),
  fee: decimalOutput.nullable(),
  total_cost: decimalOutput.nullable(),
};

/** An order as `GET /trade/order/{id}` and the lists return it (spec). */
export const orderResponse = z.object({
  order_id: z.string(),
  status: z.enum(['pending', 'partially_filled', 'filled', 'cancelled', 'rejected']),
  ...orderFigures,
  locked_amount: decimalOutput.describe(
    'collateral the order holds now: its lock while pending, the rest of it while partially filled, 0 once filled, cancelled or expired',
  ),
  session_id: z.string(),
  created_at: timestamp,
  filled_at: timestamp.nullable(),
  cancelled_at: timestamp.nullable(),
  cancel_reason: z.string().nullable(),
  time_in_force: timeInForceOutput,
  client_order_id: clientOrderIdOutput,
  ...listOutput,
  rejection: z
    .object({ code: z.string(), rule: z.string(), step: z.number().int(), message: z.string() })
    .nullable()
    .describe('for rejected orders: the risk rule that refused it'),
});

/**
 * The keyset cursor of an order or trade list (an addition to the spec's `limit`/`offset`, docs/api.md "Paging"):
 * the `next_cursor` of the previous page, opaque to clients. A page by cursor costs the same at any depth; with
 * it `offset` must be 0.
 */
const pageCursor = z
  .string()
  // `abort`: a cursor that is not digits is one issue, not a second one from the range check after it.
  .regex(/^(0|[1-9][0-9]{0,9})$/, { message: 'a next_cursor of a previous page', abort: true })
  .refine((v) => Number(v) <= 2_147_483_647, 'a next_cursor of a previous page')
  .optional()
  .describe(
    'next_cursor of the previous page: the page after it, at the same cost at any depth (offset must be 0)',
  );

/** Refuses `cursor` together with a non-zero `offset` (one way to say where the page starts). */
const oneStart = (q: { cursor?: string | undefined; offset: number }) =>
  q.cursor === undefined || q.offset === 0;
const ONE_START = { message: 'give either cursor or offset, not both', path: ['offset'] };

/** `next_cursor` of a list response: the cursor of the next page, null on the last one. */
const nextCursor = z
  .string()
  .nullable()
  .describe('send as cursor to get the next page (cost independent of depth); null on the last page');

/**
 * A keyset-paged list query: the list's `filters`, {@link pageFields} (`limit` up to `max`, default `fallback`;
 * `offset`) and `cursor`, refusing a cursor with a non-zero offset.
 */
const cursorPageQuery = <S extends z.ZodRawShape>(filters: S, max: number, fallback: number) =>
  z
    .object({ ...filters, ...pageFields(max, fallback), cursor: pageCursor })
    // A generic shape's output is not known to hold `cursor` and `offset`; the spread fields above are them.
    .refine((q) => oneStart(q as Parameters<typeof oneStart>[0]), ONE_START);

/** A keyset-paged list response: {@link pageResponse} of `item` under `key`, then `next_cursor`. */
const cursorPageResponse = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  pageResponse(key, item).extend({ next_cursor: nextCursor });

/** One fill of an order with the fill model's record (docs/trading-rules.md, "The fill model"). */
export const orderFillResponse = z.object({
  trade_id: z.string(),
  quantity: decimalOutput,
  price: decimalOutput,
  fee: decimalOutput,
  total: decimalOutput,
  reference_price: decimalOutput,
  price_source: z.string(),
  executed_at: timestamp,
  fill: z
    .object({
      fill_model: z.string(),
      fill_model_version: z.number().int(),
      liquidity: z.string().describe('`maker` (resting limit, maker fee rate) or `taker`'),
      fee_rate: z.string(),
      reference_price: z.string(),
      book_levels: z
        .array(z.tuple([z.string(), z.string()]))
        .nullable()
        .describe('a `realistic` taker: the levels walked, `[price, quantity]`'),
      book_taken: z.string().nullable(),
      volume_available: z.string().nullable().describe("a `realistic` maker: the print's base volume"),
      participation_cap_pct: z.string().nullable(),
      volume_taken: z.string().nullable(),
      remaining_quantity: z.string(),
    })
    .nullable()
    .describe('how the fill model decided it; null for fills recorded before fill models (`instant`)'),
});

/** `GET /trade/order/{id}`: the order and its fills. */
export const orderDetailResponse = orderResponse.extend({
  fills: z
    .array(orderFillResponse)
    .describe('the fills so far, oldest first (several when partially filled)'),
});

/** `client_order_id` filter of the order lists: the orders placed with that id (newest first). */
const clientOrderIdFilter = z
  .string()
  .regex(CLIENT_ORDER_ID_PATTERN, 'must be 1 to 36 characters of letters, digits, "-", "_" or "."')
  .optional()
  .describe('only the orders placed with this client_order_id');

/** `GET /trade/orders` query. */
export const listOrdersQuery = cursorPageQuery(
  {
    status: z.enum(['pending', 'partially_filled', 'filled', 'cancelled', 'rejected']).optional(),
    symbol: symbolInput.optional(),
    client_order_id: clientOrderIdFilter,
  },
  500,
  100,
);

/** `GET /trade/orders/open` query (spec: `limit`, `offset`; `symbol` filters like `GET /trade/orders`). */
export const openOrdersQuery = cursorPageQuery(
  { symbol: symbolInput.optional(), client_order_id: clientOrderIdFilter },
  200,
  100,
);

export const orderListResponse = cursorPageResponse('orders', orderResponse);

export const cancelResponse = z.object({
  order_id: z.string(),
  status: z.literal('cancelled'),
  unlocked_amount: decimalOutput,
  unlocked_asset: z.string(),
  cancelled_at: timestamp,
});

export const cancelAllResponse = z.object({
  cancelled_count: z.number().int(),
  total_unlocked: decimalOutput.describe('USDT released by the cancelled buy orders'),
  unlocked: z.record(z.string(), decimalOutput).describe('everything released, by asset'),
});

/** `GET /trade/history` query. */
export const historyQuery = cursorPageQuery(
  { symbol: symbolInput.optional(), side: z.enum(ORDER_SIDES).optional() },
  500,
  50,
);

export const tradeResponse = z.object({
  trade_id: z.string(),
  order_id: z.string(),
  symbol: z.string(),
  side: z.enum(ORDER_SIDES),
  quantity: decimalOutput,
  price: decimalOutput,
  fee: decimalOutput,
  total: decimalOutput,
  realized_pnl: decimalOutput,
  slippage_pct: decimalOutput,
  reference_price: decimalOutput,
  price_source: z.string(),
  trigger: z.string(),
  executed_at: timestamp,
});

export const historyResponse = cursorPageResponse('trades', tradeResponse);

/** Balance (spec "Balance"). */
export const balanceEntry = z.object({
  asset: z.string(),
  available: decimalOutput,
  locked: decimalOutput,
  total: decimalOutput,
});

export const balanceResponse = z.object({
  balances: z.array(balanceEntry),
  total_equity_usdt: decimalOutput,
});

/** Position (spec "Position"). */
export const positionEntry = z.object({
  symbol: z.string(),
  asset: z.string(),
  quantity: decimalOutput,
  avg_entry_price: decimalOutput,
  current_price: decimalOutput,
  market_value: decimalOutput,
  unrealized_pnl: decimalOutput,
  unrealized_pnl_pct: decimalOutput,
  price_source: z.string().describe('where current_price comes from (`avg_entry` when no price is known)'),
  opened_at: timestamp,
});

export const positionsResponse = z.object({
  positions: z.array(positionEntry),
  total_unrealized_pnl: decimalOutput,
});

/**
 * The figures of a portfolio snapshot (spec "Portfolio"), in USDT: live (`GET /trade/portfolio`) and in a backtest
 * sandbox alike, to spread into each response.
 */
export const portfolioFigures = {
  total_equity: decimalOutput,
  available_cash: decimalOutput,
  locked_cash: decimalOutput,
  total_position_value: decimalOutput,
  unrealized_pnl: decimalOutput,
  realized_pnl: decimalOutput,
  total_pnl: decimalOutput,
  fees_paid: decimalOutput,
  net_pnl: decimalOutput,
  roi_pct: decimalOutput,
  starting_balance: decimalOutput,
};

/** Portfolio snapshot (spec). */
export const portfolioResponse = z.object({
  ...portfolioFigures,
  session_id: z
    .string()
    .nullable()
    .describe(
      "the owner's current session (as /account/info's current_session), also before the first trade; " +
        'with as_of, the session at that time (null before the wallet was opened)',
    ),
  positions: z.array(positionEntry),
  timestamp,
  as_of: timestamp.nullable().describe('the past time this snapshot was folded up to, or null for now'),
  revision: z.number().int().describe('the wallet stream revision the snapshot includes (-1: no events)'),
});

export const portfolioQuery = z.object({
  as_of: z
    // The union's own message would be zod's bare "Invalid input": name what it takes, for REST and MCP alike.
    .union([z.iso.datetime({ offset: true }), z.iso.date()], {
      error: 'expected an ISO 8601 date-time (with Z or an offset) or a date (YYYY-MM-DD)',
    })
    .optional()
    .describe('ISO 8601 date-time, or a date (00:00 UTC): fold the wallet history up to this time'),
});

export const pnlQuery = z.object({ period: z.enum(['1d', '7d', '30d', 'all']).default('all') });

export const pnlResponse = z.object({
  period: z.enum(['1d', '7d', '30d', 'all']),
  realized_pnl: decimalOutput,
  unrealized_pnl: decimalOutput,
  total_pnl: decimalOutput,
  fees_paid: decimalOutput,
  net_pnl: decimalOutput,
  winning_trades: z.number().int(),
  losing_trades: z.number().int(),
  win_rate: decimalOutput,
});

export const resetFields = z
  .object({
    confirm: z.boolean().nullable().optional().describe('must be true'),
    new_starting_balance: startingBalanceInput('default the original starting balance').optional(),
  })
  .strict();

/**
 * Without its confirmation a reset body is refused as such, whatever else it holds (spec "Account endpoints":
 * `VALIDATION_ERROR` 400 when `confirm` is false or missing): a body whose `confirm` is missing, `null` or `false` is
 * read as that confirmation alone, so an unknown or malformed other field does not turn the 400 into a 422. A
 * `confirm` of another type, or a confirmed body with a bad field, is still a schema failure (422).
 */
const confirmationFirst = (body: unknown): unknown => {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const confirm = (body as Record<string, unknown>)['confirm'];
  if (confirm === undefined || confirm === null || confirm === false) return { confirm: confirm ?? null };
  return body;
};

/**
 * `POST /account/reset` body (spec): `confirm` (must be true) and `new_starting_balance`; no body at all, `{}` or
 * `"confirm": null` is a missing confirmation (400 from the use case), not a schema failure.
 */
export const resetBody = z.preprocess(confirmationFirst, resetFields.nullish());

export const resetResponse = z.object({
  message: z.string(),
  previous_session: z.object({
    session_id: z.string(),
    ending_equity: decimalOutput,
    total_pnl: decimalOutput,
    duration_days: z.number(),
  }),
  new_session: z.object({ session_id: z.string(), starting_balance: decimalOutput, started_at: timestamp }),
});

export const eventsQuery = z.object({
  after: queryInt({ min: -1, default: -1 }).describe('return events after this stream revision'),
  limit: queryInt({ min: 1, max: 1000, default: 100 }),
});

export const eventsResponse = z.object({
  stream_id: z.string(),
  events: z.array(
    z.object({
      revision: z.number().int(),
      event_id: z.string(),
      type: z.string(),
      data: z.record(z.string(), z.unknown()),
      occurred_at: timestamp,
      recorded_at: timestamp,
      actor: z.string().nullable(),
      correlation_id: z.string().nullable(),
      prev_hash: z.string(),
      hash: z.string(),
    }),
  ),
  next_after: z.number().int().describe('pass as `after` for the next page'),
  has_more: z.boolean(),
});

/** `GET /account/audit`: the wallet's hash chain and read models checked against its event log. */
export const walletAuditResponse = z.object({
  stream_id: z.string(),
  events: z.number().int().describe('events in the stream, every one verified'),
  head_revision: z.number().int().describe('revision of the last event (-1: no events yet)'),
  last_hash: z.string().nullable().describe("the last event's hash: keep it to notice a rewritten history"),
  chain: z.object({
    intact: z
      .boolean()
      .describe('every hash recomputes and links to the previous one, none missing at the end'),
    break: z
      .object({
        revision: z.number().int(),
        reason: z.enum(['hash_mismatch', 'prev_hash_mismatch', 'revision_gap']),
        expected: z.string(),
        actual: z.string(),
      })
      .nullable()
      .describe('the first break, or null'),
  }),
  read_models: z.object({
    revision: z
      .number()
      .int()
      .describe('the last revision of the stream the read models include (they may lag the log briefly)'),
    agree: z
      .boolean()
      .describe('balances, positions, open orders and session figures equal the fold of the log'),
    mismatches: z.array(z.string()).describe('each difference in words'),
  }),
  verified_at: timestamp,
});

export const modeBody = z
  .object({
    mode: z.enum(['live', 'backtest']),
    strategy_label: z
      .string()
      .trim()
      .max(100)
      .nullable()
      .optional()
      .describe('free label, up to 100 characters'),
  })
  .strict();

/** `PUT /account/fill-model` (docs/trading-rules.md, "Choosing a model"). */
export const fillModelBody = z
  .object({
    fill_model: z
      .enum(['realistic', 'instant'])
      .describe(
        '`realistic`: book walk and participation-capped resting fills; `instant`: touch and fill in full',
      ),
    participation_pct: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe("share (%) of a print's volume resting orders may take under `realistic`; default 10"),
  })
  .strict();

/** The wallet's fill model (`GET` / `PUT /account/fill-model`). */
export const fillModelResponse = z.object({
  fill_model: z.enum(['realistic', 'instant']),
  participation_pct: z.number().int(),
});

/** The wire form of {@link FillModelView}. */
export const fillModelOut = (v: FillModelView): z.infer<typeof fillModelResponse> => ({
  fill_model: v.fillModel,
  participation_pct: v.participationPct,
});

export const modeSetResponse = z.object({
  mode: z.enum(['live', 'backtest']),
  strategy_label: z.string().nullable(),
  changed_at: timestamp,
});

export const modeResponse = z.object({
  mode: z.enum(['live', 'backtest']),
  live_session: z.object({
    started_at: timestamp,
    current_equity: decimalOutput,
    strategy_label: z.string().nullable(),
  }),
  active_backtests: z.number().int(),
  total_backtests_completed: z.number().int(),
});

/** The wire form of the account's balances (`GET /account/balance`). */
export const balanceOut = (b: { balances: BalanceLine[]; totalEquityUsdt: string }) => ({
  balances: b.balances,
  total_equity_usdt: b.totalEquityUsdt,
});

/** The wire form of a PnL breakdown (`GET /account/pnl`). */
export const pnlOut = (p: PnlBreakdown): z.infer<typeof pnlResponse> => ({
  period: p.period,
  realized_pnl: p.realizedPnl,
  unrealized_pnl: p.unrealizedPnl,
  total_pnl: p.totalPnl,
  fees_paid: p.feesPaid,
  net_pnl: p.netPnl,
  winning_trades: p.winningTrades,
  losing_trades: p.losingTrades,
  win_rate: p.winRate,
});

/** The wire form of a reset (`POST /account/reset`). */
export const resetOut = (r: ResetOutcome): z.infer<typeof resetResponse> => ({
  message: 'positions closed at market, orders cancelled, a new session started; history is kept',
  previous_session: {
    session_id: r.previousSession.sessionId,
    ending_equity: r.previousSession.endingEquity,
    total_pnl: r.previousSession.totalPnl,
    duration_days: r.previousSession.durationDays,
  },
  new_session: {
    session_id: r.newSession.sessionId,
    starting_balance: r.newSession.startingBalance,
    started_at: r.newSession.startedAt,
  },
});

/** The wire form of the mode view (`GET /account/mode`). */
export const modeOut = (m: ModeView): z.infer<typeof modeResponse> => ({
  mode: m.mode,
  live_session: {
    started_at: m.liveSession.startedAt,
    current_equity: m.liveSession.currentEquity,
    strategy_label: m.strategyLabel,
  },
  active_backtests: m.activeBacktests,
  total_backtests_completed: m.completedBacktests,
});

/** The wire form of a mode change (`POST /account/mode`). */
export const modeSetOut = (state: TradingModeState): z.infer<typeof modeSetResponse> => ({
  mode: state.mode,
  strategy_label: state.strategyLabel,
  changed_at: state.changedAt ?? new Date().toISOString(),
});

/**
 * An order body as the use cases take it (`OrderInput`): the wire's snake_case fields, decimals sent as JSON numbers
 * read to 8 places and strings kept as sent (the decider validates them). One parser for the live order, the
 * backtest sandbox's and a historical battle's.
 */
export const orderInputOf = (b: z.output<typeof placeOrderBody>): OrderInput => ({
  symbol: b.symbol,
  side: b.side,
  type: b.type,
  quantity: decimalText(b.quantity),
  price: b.price == null ? null : decimalText(b.price),
  triggerPrice: triggerPriceOf(b),
  ...(b.time_in_force ? { timeInForce: b.time_in_force } : {}),
  ...(b.client_order_id ? { clientOrderId: b.client_order_id } : {}),
  ...(b.bracket
    ? {
        list: {
          kind: 'bracket' as const,
          ...(b.bracket.take_profit ? { takeProfit: takeProfitOf(b.bracket.take_profit) } : {}),
          ...(b.bracket.stop_loss
            ? { stopLoss: { triggerPrice: decimalText(b.bracket.stop_loss.trigger_price) } }
            : {}),
        },
      }
    : {}),
});

const takeProfitOf = (t: z.output<typeof takeProfitInput>) => ({
  type: t.type,
  price: t.price == null ? null : decimalText(t.price),
  triggerPrice: t.trigger_price == null ? null : decimalText(t.trigger_price),
});

/**
 * An OCO body in the domain's terms: the take-profit leg as the order, the stop-loss as its linked leg
 * (`OrderRequest.list`, kind `oco`).
 */
export const ocoInputOf = (b: z.output<typeof placeOcoBody>): OrderInput => {
  const tp = takeProfitOf(b.take_profit);
  return {
    symbol: b.symbol,
    side: b.side,
    type: tp.type,
    quantity: decimalText(b.quantity),
    price: tp.price,
    triggerPrice: tp.triggerPrice,
    ...(b.take_profit.client_order_id ? { clientOrderId: b.take_profit.client_order_id } : {}),
    list: {
      kind: 'oco',
      stopLoss: {
        triggerPrice: decimalText(b.stop_loss.trigger_price),
        ...(b.stop_loss.client_order_id ? { clientOrderId: b.stop_loss.client_order_id } : {}),
      },
      ...(b.list_client_order_id ? { clientOrderId: b.list_client_order_id } : {}),
    },
  };
};

/** Response 201 of `POST /trade/order/oco`: the list and its two legs as placed (each as `POST /trade/order` answers). */
export const ocoResponse = z.object({
  order_list_id: z.string(),
  list_kind: z.literal('oco'),
  list_client_order_id: z.string().optional().describe('present when the list was placed with one'),
  orders: z.array(z.union([filledOrderResponse, pendingOrderResponse])),
});

/**
 * The trigger price of an order body: `trigger_price` (the spec) or `stop_price` (the original clients' name for
 * it, docs/compatibility.md). Both given with different values: `VALIDATION_ERROR` naming `stop_price`, rather
 * than silently picking one.
 */
const triggerPriceOf = (b: z.output<typeof placeOrderBody>): string | null => {
  const trigger = b.trigger_price == null ? null : decimalText(b.trigger_price);
  const stop = b.stop_price == null ? null : decimalText(b.stop_price);
  if (trigger !== null && stop !== null && !sameDecimal(trigger, stop)) {
    throw new DomainError(
      'VALIDATION_ERROR',
      'stop_price is another name of trigger_price: give one, or equal values',
      {
        field: 'stop_price',
      },
    );
  }
  return trigger ?? stop;
};

/** True when two decimal texts are the same number (a malformed one compares as text; the decider refuses it). */
const sameDecimal = (a: string, b: string): boolean => {
  if (!PLAIN_DECIMAL.test(a.trim()) || !PLAIN_DECIMAL.test(b.trim())) return a === b;
  return dec(a.trim()).eq(dec(b.trim()));
};

/** The wire form of a wallet audit (`GET /account/audit`). */
export const walletAuditOut = (report: WalletAuditReport): z.infer<typeof walletAuditResponse> => {
  const b = report.chainBreak;
  return {
    stream_id: report.streamId,
    events: report.events,
    head_revision: report.headRevision,
    last_hash: report.lastHash,
    chain: {
      intact: b === null,
      break: b && { revision: b.revision, reason: b.reason, expected: b.expected, actual: b.actual },
    },
    read_models: {
      revision: report.readModels.revision,
      agree: report.readModels.mismatches.length === 0,
      mismatches: report.readModels.mismatches,
    },
    verified_at: new Date().toISOString(),
  };
};
