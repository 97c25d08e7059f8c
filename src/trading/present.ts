import type {
  ModelPreview,
  OrderPreviewOutcome,
  PlaceOrderOutcome,
  PreviewKind,
} from '../../commands/wallet';
import type { FillModelName } from '../../domain/fill-model/model';
import { DomainError } from '../../domain/shared/errors';
import { type Dec, dec, fmt, HUNDRED, roundHalfEven8, ZERO } from '../../domain/trading/decimal';
import type {
  OrderCancelledData,
  OrderFilledData,
  OrderPlacedData,
  WalletEvent,
} from '../../domain/wallet/events';
import type { Holding, WalletState } from '../../domain/wallet/state';
import type { OrderRow, PositionRow, TradeRow } from '../../queries/trading';

/**
 * The one mapping layer between the ledger (events, read-model rows, folded state) and the wire (STYLE:
 * snake_case on the wire, 8-place decimal strings, ISO timestamps).
 */

const d8 = (v: string | number | Dec): string => fmt(roundHalfEven8(dec(v)));
const d8OrNull = (v: string | null | undefined): string | null => (v == null ? null : d8(v));
const iso = (v: Date | string): string => (v instanceof Date ? v.toISOString() : new Date(v).toISOString());
const isoOrNull = (v: Date | string | null | undefined): string | null => (v == null ? null : iso(v));

/**
 * Response of an order that filled on placement (spec `POST /trade/order` 201 for a filled market order): its
 * figures are the order's after every fill of the placement (`order_after`). When the book could not hold the whole
 * order and the rest was cancelled in the same decision (a market order's or an IOC's remainder), `status` is
 * `cancelled`, as `GET /trade/order/{id}` says: `executed_quantity` is what filled, `cancel_reason` and
 * `cancelled_at` say why and when the rest was dropped (docs/trading-rules.md, "Partial fills"). Those two fields are
 * present only then, so a whole fill keeps the spec's shape.
 */
export const filledOrderOut = (
  placed: OrderPlacedData,
  fill: OrderFilledData,
  cancelled?: OrderCancelledData | undefined,
) => {
  const after = fill.order_after;
  return {
    order_id: placed.order_id,
    status: cancelled ? ('cancelled' as const) : ('filled' as const),
    symbol: placed.symbol,
    side: placed.side,
    type: placed.type,
    requested_quantity: placed.quantity,
    executed_quantity: after?.executed_quantity ?? fill.quantity,
    executed_price: after?.executed_price ?? fill.executed_price,
    slippage_pct: fill.slippage_pct,
    fee: after?.fee ?? fill.fee,
    total_cost: after?.total ?? fill.total,
    reference_price: fill.reference_price,
    price_source: fill.price_source,
    filled_at: fill.filled_at,
    ...optionalOut(placed, cancelled),
  };
};

/**
 * The fields a placed order's response has only when they apply, after its figures: `cancel_reason` and
 * `cancelled_at` when `cancelled`, `time_in_force` other than GTC, `client_order_id`, and the list fields.
 */
const optionalOut = (placed: OrderPlacedData, cancelled: OrderCancelledData | undefined) => ({
  ...(cancelled ? { cancel_reason: cancelled.reason, cancelled_at: cancelled.cancelled_at } : {}),
  ...timeInForceOut(placed.time_in_force),
  ...clientOrderIdOut(placed.client_order_id),
  ...listOut(placed),
});

/** An order's list fields on the wire, only for an order of a list (a lone order keeps the spec's shape). */
const listOut = (o: {
  order_list_id?: string | null | undefined;
  list_kind?: 'oco' | 'bracket' | null | undefined;
  list_role?: 'entry' | 'take_profit' | 'stop_loss' | null | undefined;
  list_client_order_id?: string | null | undefined;
}) =>
  o.order_list_id
    ? {
        order_list_id: o.order_list_id,
        ...(o.list_kind ? { list_kind: o.list_kind } : {}),
        ...(o.list_role ? { list_role: o.list_role } : {}),
        ...(o.list_client_order_id ? { list_client_order_id: o.list_client_order_id } : {}),
      }
    : {};

/** `time_in_force` on the wire only when the client chose one other than the default, so GTC keeps the spec's shape. */
const timeInForceOut = (tif: 'IOC' | 'FOK' | null | undefined) => (tif ? { time_in_force: tif } : {});

/** `client_order_id` on the wire only when the order has one, so an order without keeps the spec's shape. */
const clientOrderIdOut = (id: string | null | undefined) => (id ? { client_order_id: id } : {});

/** The terms an order was placed with, on the wire: pair, side, type, quantity, limit and trigger prices. */
const orderTermsOut = (placed: OrderPlacedData) => ({
  symbol: placed.symbol,
  side: placed.side,
  type: placed.type,
  quantity: placed.quantity,
  price: placed.price,
  trigger_price: placed.trigger_price,
});

/**
 * Response of a pending order (spec `POST /trade/order` 201). An order that was cancelled in the decision that
 * placed it without any fill (a market order the book had no depth for; later an IOC or FOK that could not fill) is
 * `cancelled` with `cancel_reason` and `cancelled_at`, as the read model shows it.
 */
export const pendingOrderOut = (placed: OrderPlacedData, cancelled?: OrderCancelledData | undefined) => ({
  order_id: placed.order_id,
  status: cancelled ? ('cancelled' as const) : ('pending' as const),
  ...orderTermsOut(placed),
  locked_amount: placed.locked_amount,
  created_at: placed.placed_at,
  ...optionalOut(placed, cancelled),
});

/** One order's placement body from the events (see {@link placementOut}), without a bracket's exits. */
const singlePlacementOut = (events: readonly WalletEvent[], orderId: string) => {
  const placed = events.find((e) => e.type === 'OrderPlaced' && e.data.order_id === orderId)?.data as
    | OrderPlacedData
    | undefined;
  if (!placed) return undefined;
  const fill = events.findLast((e) => e.type === 'OrderFilled' && e.data.order_id === orderId)?.data as
    | OrderFilledData
    | undefined;
  const cancelled = events.find((e) => e.type === 'OrderCancelled' && e.data.order_id === orderId)?.data as
    | OrderCancelledData
    | undefined;
  return fill ? filledOrderOut(placed, fill, cancelled) : pendingOrderOut(placed, cancelled);
};

/**
 * The placement response from a command outcome's events (also for an in-memory idempotent replay): the order as
 * its placing decision left it — filled (the last fill of the placement carries the order's totals), cancelled
 * after a partial fill or none (the rest the book could not hold), or pending.
 */
export const placementOut = (events: readonly WalletEvent[], orderId: string) => {
  const body = singlePlacementOut(events, orderId);
  if (!body) return undefined;
  // A bracket's entry done as it was placed: its exits were placed in the same decision.
  const exits = events.flatMap((e) =>
    e.type === 'OrderPlaced' && e.data.parent_order_id === orderId ? [e.data.order_id] : [],
  );
  if (exits.length === 0) return body;
  return { ...body, exits: exits.map((id) => singlePlacementOut(events, id)!) };
};

/** The `OrderCancelled` of `orderId` among `events`, if the decision ended it. */
const cancelledIn = (events: readonly WalletEvent[], orderId: string) =>
  events.find((e) => e.type === 'OrderCancelled' && e.data.order_id === orderId)?.data as
    | OrderCancelledData
    | undefined;

/**
 * What one fill model would do with the previewed order: the fill it would get now (a market order's, or a pending
 * order's that the current price already reaches), how a resting one would fill later (`liquidity` maker, at most
 * `participation_cap_pct` % of each print's volume under `realistic`), or the error it would get.
 */
const modelPreviewOut = (m: ModelPreview, participationPct: number, model: FillModelName, leg = 0) => {
  if (m.kind === 'rejected') {
    return {
      status: 'rejected' as const,
      cancel_reason: null,
      would_fill: false,
      executed_quantity: null,
      unfilled_quantity: null,
      executed_price: null,
      slippage_pct: null,
      notional: null,
      fee: null,
      total_cost: null,
      liquidity: null,
      fee_rate: null,
      book_levels: null,
      participation_cap_pct: null,
      error: { code: m.error.code, message: m.error.message, details: m.error.details ?? {} },
    };
  }
  const placed = placedIn(m.events, leg);
  const fill = m.events.find((e) => e.type === 'OrderFilled' && e.data.order_id === placed.order_id)?.data as
    | OrderFilledData
    | undefined;
  const ended = !fill ? cancelledIn(m.events, placed.order_id) : undefined;
  const resting = !fill && !ended && placed.type === 'limit' && !placed.marketable;
  return {
    status: (fill
      ? dec(fill.remaining_quantity ?? '0').gt(0)
        ? 'partially_filled'
        : 'filled'
      : ended
        ? 'cancelled'
        : 'pending') as 'partially_filled' | 'filled' | 'cancelled' | 'pending',
    cancel_reason: ended ? ended.reason : null,
    would_fill: fill !== undefined,
    executed_quantity: fill?.quantity ?? null,
    unfilled_quantity: fill ? d8(dec(placed.quantity).minus(fill.quantity)) : null,
    executed_price: fill?.executed_price ?? null,
    slippage_pct: fill?.slippage_pct ?? null,
    notional: fill?.notional ?? null,
    fee: fill?.fee ?? null,
    total_cost: fill?.total ?? null,
    liquidity: fill?.liquidity ?? (resting ? 'maker' : null),
    fee_rate: fill?.fee_rate ?? null,
    book_levels: fill?.book_levels ?? null,
    participation_cap_pct: resting && model === 'realistic' ? participationPct : null,
    error: null,
  };
};

/**
 * The answer of `POST /trade/order/preview` from the events the order would record (never recorded), under the
 * wallet's fill model (`fill_model`): the fill it would get now (`would_fill: true`, every fill figure; a market
 * order, or a pending order the current price already reaches, which the matching engine fills at once) or a
 * resting order's lock (fill figures null; `marketable` when the current price already reaches a limit); and under
 * each model (`models.realistic`, `models.instant`), the fill or the error it would get.
 */
export const previewOut = (p: OrderPreviewOutcome) => previewOfPlaced(p, 0);

/**
 * The preview of the `leg`-th order the previewed decision places (0: the order itself, or an OCO's take-profit;
 * 1: an OCO's stop-loss) under the wallet's model and each model: the figures of {@link previewOut}.
 */
const previewOfPlaced = (p: OrderPreviewOutcome, leg: number) => {
  const { events } = p;
  const placed = placedIn(events, leg);
  const fill = events.find((e) => e.type === 'OrderFilled' && e.data.order_id === placed.order_id)?.data as
    | OrderFilledData
    | undefined;
  const ended = fill ? undefined : cancelledIn(events, placed.order_id);
  return {
    preview: true as const,
    // The decision's own status of this order (`OrderPreviewOutcome.kind` for the first): filled at once, ended at
    // once without a fill (its time in force, or an OCO sibling's fill), or resting.
    status: (fill ? 'filled' : ended ? 'cancelled' : 'pending') as PreviewKind,
    ...(ended ? { cancel_reason: ended.reason } : {}),
    would_fill: fill !== undefined,
    ...orderTermsOut(placed),
    marketable: placed.marketable ?? false,
    executed_quantity: fill?.quantity ?? null,
    executed_price: fill?.executed_price ?? null,
    reference_price: fill?.reference_price ?? null,
    price_source: fill?.price_source ?? null,
    slippage_pct: fill?.slippage_pct ?? null,
    notional: fill?.notional ?? null,
    fee_rate: placed.fee_rate,
    fee: fill?.fee ?? null,
    total_cost: fill?.total ?? null,
    locked_amount: placed.locked_amount,
    lock_asset: placed.lock_asset,
    priced_at: placed.placed_at,
    fill_model: p.fillModel,
    models: {
      realistic: modelPreviewOut(p.models.realistic, p.participationPct, 'realistic', leg),
      instant: modelPreviewOut(p.models.instant, p.participationPct, 'instant', leg),
    },
  };
};

/** The `leg`-th `OrderPlaced` of a previewed decision (placement order: an OCO's take-profit, then its stop-loss). */
const placedIn = (events: readonly WalletEvent[], leg: number): OrderPlacedData => {
  const placed = events.filter((e) => e.type === 'OrderPlaced')[leg]?.data as OrderPlacedData | undefined;
  if (!placed) throw new DomainError('INTERNAL_ERROR', 'the previewed decision placed no such order');
  return placed;
};

/**
 * The answer of `POST /trade/order/oco/preview` (and MCP `place_oco_order` with `dry_run`): each leg of the OCO as
 * {@link previewOut} answers an order — the take-profit, then the stop-loss —, with its `list_role`. A leg the
 * current price already reaches previews as filled and its sibling as cancelled (`linked_fill`), as the matching
 * engine would decide the moment the list is placed. No list id: nothing was placed.
 */
export const ocoPreviewOut = (p: OrderPreviewOutcome) => {
  const legs = p.events.flatMap((e) =>
    e.type === 'OrderPlaced' && e.data.list_kind === 'oco' ? [e.data] : [],
  );
  if (legs.length !== 2) throw new DomainError('INTERNAL_ERROR', 'the previewed decision places no OCO');
  const listClientOrderId = legs[0]!.list_client_order_id;
  return {
    preview: true as const,
    list_kind: 'oco' as const,
    ...(listClientOrderId ? { list_client_order_id: listClientOrderId } : {}),
    fill_model: p.fillModel,
    orders: legs.map((leg, i) => {
      const { preview: _preview, fill_model: _model, ...figures } = previewOfPlaced(p, i);
      return {
        list_role: leg.list_role as 'take_profit' | 'stop_loss',
        ...(leg.client_order_id ? { client_order_id: leg.client_order_id } : {}),
        ...figures,
      };
    }),
  };
};

/** A cancelled order (spec `DELETE /trade/order/{id}`). */
export const cancelOut = (c: OrderCancelledData) => ({
  order_id: c.order_id,
  status: 'cancelled' as const,
  unlocked_amount: c.unlocked_amount,
  unlocked_asset: c.unlocked_asset,
  cancelled_at: c.cancelled_at,
});

/** Every open order cancelled at once (spec `DELETE /trade/orders/open`): the count and what was released. */
export const cancelAllOut = (cancelled: readonly OrderCancelledData[]) => {
  const unlocked = new Map<string, Dec>();
  for (const c of cancelled) {
    unlocked.set(c.unlocked_asset, (unlocked.get(c.unlocked_asset) ?? ZERO).plus(c.unlocked_amount));
  }
  return {
    cancelled_count: cancelled.length,
    total_unlocked: fmt(unlocked.get('USDT') ?? ZERO),
    unlocked: Object.fromEntries([...unlocked].map(([asset, v]) => [asset, fmt(v)])),
  };
};

/** An order (spec `GET /trade/order/{id}` and the lists). */
export const orderOut = (row: OrderRow) => ({
  order_id: row.order_id,
  status: row.status,
  symbol: row.symbol,
  side: row.side,
  type: row.type,
  quantity: d8(row.quantity),
  price: d8OrNull(row.price),
  trigger_price: d8OrNull(row.trigger_price),
  executed_price: d8OrNull(row.executed_price),
  executed_qty: d8OrNull(row.executed_qty),
  slippage_pct: d8OrNull(row.slippage_pct),
  fee: d8OrNull(row.fee),
  total_cost: d8OrNull(row.total_cost),
  locked_amount: d8(row.locked_amount),
  session_id: row.session_id,
  created_at: iso(row.created_at),
  filled_at: isoOrNull(row.filled_at),
  cancelled_at: isoOrNull(row.cancelled_at),
  cancel_reason: row.cancel_reason,
  ...timeInForceOut(row.time_in_force),
  ...clientOrderIdOut(row.client_order_id),
  ...listOut(row),
  rejection:
    row.status === 'rejected'
      ? {
          code: row.reject_code ?? '',
          rule: row.reject_rule ?? '',
          step: row.reject_step ?? 0,
          message: row.reject_message ?? '',
        }
      : null,
});

/** An order with its fills and each fill's model record (`GET /trade/order/{id}`). */
export const orderDetailOut = (order: OrderRow, fills: readonly TradeRow[]) => ({
  ...orderOut(order),
  fills: fills.map((f) => ({
    trade_id: f.trade_id,
    quantity: d8(f.quantity),
    price: d8(f.price),
    fee: d8(f.fee),
    total: d8(f.total),
    reference_price: d8(f.reference_price),
    price_source: f.price_source,
    executed_at: iso(f.executed_at),
    fill: f.fill ?? null,
  })),
});

/** A fill (spec "Trade fill"). */
export const tradeOut = (row: TradeRow) => ({
  trade_id: row.trade_id,
  order_id: row.order_id,
  symbol: row.symbol,
  side: row.side,
  quantity: d8(row.quantity),
  price: d8(row.price),
  fee: d8(row.fee),
  total: d8(row.total),
  realized_pnl: d8(row.realized_pnl),
  slippage_pct: d8(row.slippage_pct),
  reference_price: d8(row.reference_price),
  price_source: row.price_source,
  trigger: row.fill_trigger,
  executed_at: iso(row.executed_at),
});

/** A price with where it came from. */
export interface Mark {
  price: Dec;
  source: string;
}

/** A holding valued at a mark (spec "Position"); without a mark, at its average entry price. */
export const positionOut = (
  p: { asset: string; symbol: string; quantity: Dec; cost: Dec; avgEntry: Dec; openedAt: string },
  mark: Mark | undefined,
) => {
  const avg = p.avgEntry;
  const price = mark?.price ?? avg;
  const value = roundHalfEven8(p.quantity.times(price));
  const unrealized = mark ? value.minus(p.cost) : ZERO;
  return {
    symbol: p.symbol,
    asset: p.asset,
    quantity: fmt(p.quantity),
    avg_entry_price: fmt(avg),
    current_price: fmt(roundHalfEven8(price)),
    market_value: fmt(value),
    unrealized_pnl: fmt(unrealized),
    unrealized_pnl_pct: fmt(p.cost.isZero() ? ZERO : roundHalfEven8(unrealized.div(p.cost).times(HUNDRED))),
    price_source: mark?.source ?? 'avg_entry',
    opened_at: iso(p.openedAt),
    // exact figures for totals
    _value: mark ? p.quantity.times(price) : p.cost,
    _unrealized: mark ? p.quantity.times(price).minus(p.cost) : ZERO,
  };
};

/** Strips the exact helper figures of {@link positionOut}. */
export const publicPosition = ({ _value, _unrealized, ...rest }: ReturnType<typeof positionOut>) => rest;

/** Holdings of a folded state or position rows, in one shape. */
export const holdingsOf = (source: WalletState | PositionRow[]) =>
  Array.isArray(source)
    ? source.map((r) => ({
        asset: r.asset,
        symbol: r.symbol,
        quantity: dec(r.quantity),
        cost: dec(r.cost_basis),
        avgEntry: dec(r.avg_entry_price),
        openedAt: iso(r.opened_at),
      }))
    : Object.values(source.holdings)
        .sort((a, b) => (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0))
        .map((h: Holding) => ({
          asset: h.asset,
          symbol: h.symbol,
          quantity: h.quantity,
          cost: h.cost,
          avgEntry: h.avgEntry,
          openedAt: h.openedAt,
        }));

/** Figures of a portfolio snapshot (spec "Portfolio snapshot"). */
export const portfolioOut = (input: {
  cash: Dec;
  locked: Dec;
  holdings: ReturnType<typeof holdingsOf>;
  markOf: (symbol: string) => Mark | undefined;
  realizedPnl: Dec;
  feesPaid: Dec;
  startingBalance: Dec;
  sessionId: string | null;
  timestamp: string;
  asOf: string | null;
  revision: number;
}) => {
  const positions = input.holdings.map((h) => positionOut(h, input.markOf(h.symbol)));
  const positionValue = positions.reduce((s, p) => s.plus(p._value), ZERO);
  const unrealized = positions.reduce((s, p) => s.plus(p._unrealized), ZERO);
  const equity = input.cash.plus(input.locked).plus(positionValue);
  const totalPnl = input.realizedPnl.plus(unrealized);
  const start = input.startingBalance;
  return {
    total_equity: d8(equity),
    available_cash: d8(input.cash),
    locked_cash: d8(input.locked),
    total_position_value: d8(positionValue),
    unrealized_pnl: d8(unrealized),
    realized_pnl: d8(input.realizedPnl),
    total_pnl: d8(totalPnl),
    fees_paid: d8(input.feesPaid),
    net_pnl: d8(totalPnl.minus(input.feesPaid)),
    roi_pct: d8(start.isZero() ? ZERO : equity.minus(start).div(start).times(HUNDRED)),
    starting_balance: d8(start),
    session_id: input.sessionId,
    positions: positions.map(publicPosition),
    timestamp: input.timestamp,
    as_of: input.asOf,
    revision: input.revision,
  };
};

/** The 201 body of a placed order (spec `POST /trade/order`): filled at once or pending. */
export const placedOrderOut = (outcome: Extract<PlaceOrderOutcome, { kind: 'filled' | 'pending' }>) => {
  const body = placementOut(outcome.events, outcome.orderId);
  if (!body) throw new Error(`order ${outcome.orderId} has no placement among its events`);
  return body;
};

/**
 * The 201 body of a placed OCO (`POST /trade/order/oco`): the list's id and both legs as the placing decision left
 * them (a leg the current price already reached is filled, the other then cancelled).
 */
export const placedOcoOut = (outcome: Extract<PlaceOrderOutcome, { kind: 'filled' | 'pending' }>) =>
  ocoPlacementOut(outcome.events);

/** {@link placedOcoOut} from the placing decision's events (also a sandbox's); throws when they place no OCO. */
export const ocoPlacementOut = (events: readonly WalletEvent[]) => {
  const legs = events.flatMap((e) =>
    e.type === 'OrderPlaced' && e.data.list_kind === 'oco' ? [e.data] : [],
  );
  const listId = legs[0]?.order_list_id;
  if (!listId) throw new Error('the events place no OCO');
  const listClientOrderId = legs[0]?.list_client_order_id;
  return {
    order_list_id: listId,
    list_kind: 'oco' as const,
    ...(listClientOrderId ? { list_client_order_id: listClientOrderId } : {}),
    orders: legs.map((leg) => placementOut(events, leg.order_id)!),
  };
};

/** The request's paging as a list answers it (`limit`, `offset`). */
interface Paging {
  limit: number;
  offset: number;
}

/** A page as the use cases answer it (`Page` of src/application/trading.ts). */
interface RowsPage<Row> {
  rows: readonly Row[];
  total: number;
  nextCursor: string | null;
}

/**
 * The order list envelope of `GET /trade/orders` and `/trade/orders/open` (and their MCP tools): the spec's
 * `{orders, total, limit, offset}` plus `next_cursor` (keyset paging; null on the last page).
 */
export const orderListOut = (page: RowsPage<OrderRow>, paging: Paging) => ({
  orders: page.rows.map(orderOut),
  total: page.total,
  limit: paging.limit,
  offset: paging.offset,
  next_cursor: page.nextCursor,
});

/** The fill list envelope of `GET /trade/history` (and its MCP tool), as {@link orderListOut}. */
export const tradeListOut = (page: RowsPage<TradeRow>, paging: Paging) => ({
  trades: page.rows.map(tradeOut),
  total: page.total,
  limit: paging.limit,
  offset: paging.offset,
  next_cursor: page.nextCursor,
});
