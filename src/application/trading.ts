import { createHash } from 'node:crypto';
import { idempotencyKeyHash, type OrderPreviewOutcome, type PlaceOrderOutcome } from '../../commands/wallet';
import { normalizeSymbol } from '../../domain/market/pair';
import { DomainError, isDomainError } from '../../domain/shared/errors';
import { canonicalId } from '../../domain/shared/uuid';
import { parseDecimal } from '../../domain/trading/decimal';
import type { OrderSide, TimeInForce } from '../../domain/trading/orders';
import type { OrderListRequest, OrderRequest } from '../../domain/wallet/commands';
import type { OrderCancelledData } from '../../domain/wallet/events';
import type { OrderStatus } from '../../projections/orders';
import {
  findListIdByClientOrderId,
  getOrder as findOrder,
  findOrderByClientOrderId,
  findOrderByIdempotencyKey,
  listOrderLists as findOrderLists,
  listOrders as findOrders,
  listTrades as findTrades,
  getOrdersOfList,
  OPEN_STATUSES,
  type OrderRow,
  orderFills,
  type TradeRow,
} from '../../queries/trading';
import { ownerIdOf } from '../auth/principal';
import { trading } from '../trading/install';
import { type Call, timed } from './call';
import { commandMeta, ownerOf } from './caller';
import { acknowledgeTradeWrite, settleOwnWrites } from './read-your-writes';

/**
 * Trading use cases (spec "Trading endpoints"; ARCHITECTURE §8), one call per capability for every door. Every
 * figure is the caller's wallet's: the agent's with an agent key or `X-Agent-Id`, else the account's. Writes answer
 * once durable (read your writes: `acknowledgeTradeWrite`); reads first settle the caller's own writes into the
 * read models they read. An order of another wallet is `ORDER_NOT_FOUND` like an unknown one.
 */

/**
 * An order's terms: its pair, side, type, quantity and prices, decimals as strings — the decider's
 * {@link OrderRequest} fields, with both prices present (null where the type takes none).
 */
export type OrderTerms = Required<
  Pick<OrderRequest, 'symbol' | 'side' | 'type' | 'quantity' | 'price' | 'triggerPrice'>
>;

/**
 * An order request in the domain's terms: decimals as strings (as sent, validated by the decider), the symbol in
 * any case (normalised here).
 */
export interface OrderInput extends OrderTerms {
  /** `GTC` (absent: the default), `IOC` or `FOK` (docs/trading-rules.md, "Time in force"). */
  timeInForce?: TimeInForce | undefined;
  /**
   * The client's own id of the order (`client_order_id`, Binance `newClientOrderId`; docs/trading-rules.md,
   * "Client order ids"): `^[a-zA-Z0-9-_.]{1,36}$`, unique among the wallet's open orders (else `CONFLICT` 409).
   */
  clientOrderId?: string | undefined;
  /** An OCO's stop-loss leg, or a bracket's exits (`OrderRequest.list`; docs/trading-rules.md, "Order lists"). */
  list?: OrderListRequest | undefined;
}

/** Options of {@link placeOrder}. */
export interface PlaceOrderOptions {
  /**
   * The client's idempotency key (`Idempotency-Key`, MCP `idempotency_key`), scoped
   * to the wallet for 24 h: the same key and request again return the first answer; another request is `CONFLICT`.
   */
  idempotencyKey?: string | undefined;
}

/** A placed order: filled at once or pending (a rejection is thrown). */
export interface PlacedOrder {
  outcome: Extract<PlaceOrderOutcome, { kind: 'filled' | 'pending' }>;
  /** True when this answers a retry of an earlier request under the same idempotency key. */
  replayed: boolean;
}

/** A decimal of the order in canonical form (`"0.00100"`, `".001"` and `0.001` are one value), else as sent. */
const canonicalDecimal = (v: string | null): string | null => {
  const parsed = v == null ? undefined : parseDecimal(v);
  return parsed ? parsed.toFixed() : v;
};

/** An order list request with its decimals canonical (see {@link canonicalDecimal}). */
const canonicalList = (list: OrderListRequest) => ({
  kind: list.kind,
  stopLoss: list.stopLoss ? canonicalDecimal(list.stopLoss.triggerPrice) : null,
  takeProfit:
    list.kind === 'bracket' && list.takeProfit
      ? {
          type: list.takeProfit.type,
          price: canonicalDecimal(list.takeProfit.price ?? null),
          triggerPrice: canonicalDecimal(list.takeProfit.triggerPrice ?? null),
        }
      : null,
  // The list's and the stop leg's client ids only when sent, so a list without them hashes as it always did.
  ...(list.kind === 'oco' && list.clientOrderId ? { listClientOrderId: list.clientOrderId } : {}),
  ...(list.stopLoss?.clientOrderId ? { stopClientOrderId: list.stopLoss.clientOrderId } : {}),
});

/**
 * SHA-256 of the canonical order: the same idempotency key with another order is a conflict. Canonical: the symbol
 * in upper case and the decimals by value, so a retry that spells the same order differently is still a replay.
 */
const requestHash = (o: OrderInput): string =>
  createHash('sha256')
    .update(
      JSON.stringify({
        symbol: o.symbol,
        side: o.side,
        type: o.type,
        quantity: canonicalDecimal(o.quantity),
        price: canonicalDecimal(o.price),
        triggerPrice: canonicalDecimal(o.triggerPrice),
        // Only when not the default, so a GTC order (sent with or without it) hashes as it always did.
        ...(o.timeInForce && o.timeInForce !== 'GTC' ? { timeInForce: o.timeInForce } : {}),
        ...(o.clientOrderId ? { clientOrderId: o.clientOrderId } : {}),
        // Only for an order of a list, so a lone order hashes as it always did.
        ...(o.list ? { list: canonicalList(o.list) } : {}),
      }),
    )
    .digest('hex');

/**
 * `ORDER_NOT_FOUND` 404 saying which wallet was searched: an account key (or a JWT without `X-Agent-Id`) reads the
 * account's own wallet, so an agent's order is not found there, and the message says where it is.
 */
const orderNotFound = (call: Call, orderId: string): DomainError =>
  new DomainError(
    'ORDER_NOT_FOUND',
    call.caller.agentId
      ? `order not found in this agent's wallet (the account's own orders are under the account's API key, or a JWT without X-Agent-Id)`
      : `order not found in the account's own wallet (an agent's orders are under the agent's API key, or a JWT with X-Agent-Id)`,
    { order_id: orderId },
  );

/**
 * An order id as the ledger keys it: order ids are lower-case UUIDs, and a UUID is case-insensitive (RFC 9562), so
 * either case (and surrounding spaces) names the same order, live and in the backtest and battle sandboxes
 * ({@link canonicalId}, as for account, agent and battle ids).
 */
export const orderIdOf = (raw: string): string => canonicalId(raw.trim());

/**
 * Places an order through the 8-step risk chain (docs/trading-rules.md). Market orders fill at once; limit,
 * stop-loss and take-profit orders wait with collateral locked. A rejection is recorded (status `rejected`) and
 * thrown as the failing rule's `DomainError` (`details.rule`, `details.order_id`); a retry under the same
 * idempotency key replays the first answer (or its rejection) from the log, in any process. Records `command`
 * (decision and durable append) in the receipt. Throws `CONFLICT` 409 for a key reused with another order.
 */
export const placeOrder = async (
  call: Call,
  input: OrderInput,
  options: PlaceOrderOptions = {},
): Promise<PlacedOrder> => {
  const order = { ...input, symbol: normalizeSymbol(input.symbol) };
  const idempotency = options.idempotencyKey
    ? { key: options.idempotencyKey, requestHash: requestHash(order) }
    : undefined;
  const outcome = await timed(call, 'command', () =>
    trading(call.services).wallets.placeOrder(ownerOf(call), order, commandMeta(call), idempotency),
  );
  if (outcome.kind === 'replayed') {
    call.receipt.replayed = true;
    const original = outcome.original;
    if (original.kind === 'rejected') throw original.error;
    if (original.kind === 'replayed') throw new DomainError('INTERNAL_ERROR', 'a replay of a replay');
    return { outcome: original, replayed: true };
  }
  await acknowledgeTradeWrite(call, outcome.position);
  if (outcome.kind === 'rejected') throw outcome.error;
  return { outcome, replayed: false };
};

/**
 * What an order would do now, without placing it (`POST /trade/order/preview`, MCP `place_order` with
 * `dry_run`): the wallet's own decider runs the same guards and 8-step risk chain on the wallet's current state with
 * the live price, pair filters, fee rate and risk profile `placeOrder` would use, and nothing is appended. Answers
 * the events the order would record (a market order's `OrderFilled`: price, quantity, fee, notional, slippage; a
 * resting order's lock), or throws the error the order would get (the failing rule's, `details.rule`, no
 * `order_id`). Settles nothing: it decides from the wallet's stream, like an order.
 */
export const previewOrder = (call: Call, input: OrderInput): Promise<OrderPreviewOutcome> =>
  timed(call, 'command', () =>
    trading(call.services).wallets.previewOrder(ownerOf(call), {
      ...input,
      symbol: normalizeSymbol(input.symbol),
    }),
  );

/**
 * Cancels one open order of the caller; its whole lock is released. Throws `ORDER_NOT_FOUND` (unknown, or of
 * another wallet) and `ORDER_NOT_CANCELLABLE` 409 (filled, cancelled or rejected).
 */
export const cancelOrder = async (call: Call, rawOrderId: string): Promise<OrderCancelledData> => {
  const orderId = orderIdOf(rawOrderId);
  const outcome = await trading(call.services)
    .wallets.cancelOrder(ownerOf(call), orderId, commandMeta(call))
    .catch((error: unknown) => {
      throw isDomainError(error) && error.code === 'ORDER_NOT_FOUND' ? orderNotFound(call, orderId) : error;
    });
  await acknowledgeTradeWrite(call, outcome.position);
  return outcome.cancelled;
};

/** Cancels every open order of the caller atomically (one append); the orders cancelled, possibly none. */
export const cancelAllOrders = async (call: Call): Promise<OrderCancelledData[]> => {
  const outcome = await trading(call.services).wallets.cancelAll(ownerOf(call), commandMeta(call));
  await acknowledgeTradeWrite(call, outcome.position);
  return outcome.cancelled;
};

/** One order of the caller (`orders` read model); `ORDER_NOT_FOUND` when unknown or another wallet's. */
export const getOrder = async (call: Call, rawOrderId: string): Promise<OrderRow> => {
  await settleOwnWrites(call, ['orders']);
  const orderId = orderIdOf(rawOrderId);
  const row = await findOrder(call.services.database.db, ownerIdOf(call.caller), orderId);
  if (!row) throw orderNotFound(call, orderId);
  return row;
};

/** {@link getOrder} with the order's fills, oldest first, each with the fill model's record (`GET /trade/order/{id}`). */
export const getOrderWithFills = async (
  call: Call,
  rawOrderId: string,
): Promise<{ order: OrderRow; fills: TradeRow[] }> => {
  const order = await getOrder(call, rawOrderId);
  return { order, fills: await orderFills(call.services.database.db, order.owner_id, order.order_id) };
};

/**
 * The order of the caller placed under an idempotency key (`Idempotency-Key`, Binance `origClientOrderId`);
 * `ORDER_NOT_FOUND` when none was. The key is matched as the wallet stored it (hashed with the wallet's scope); a
 * key used again after its 24 h finds the first order placed under it.
 */
export const getOrderByIdempotencyKey = async (call: Call, key: string): Promise<OrderRow> => {
  await settleOwnWrites(call, ['orders']);
  const ownerId = ownerIdOf(call.caller);
  const row = await findOrderByIdempotencyKey(
    call.services.database.db,
    ownerId,
    idempotencyKeyHash(`wallet:${ownerId}`, key),
    new Date(0),
  );
  if (!row) throw orderNotFound(call, key);
  return row;
};

/**
 * The newest order of the caller placed with this client order id (`client_order_id`, Binance
 * `origClientOrderId`); `ORDER_NOT_FOUND` when none was. An id is unique among open orders only, so a reused one
 * names its latest order, as on Binance.
 */
export const getOrderByClientOrderId = async (call: Call, clientOrderId: string): Promise<OrderRow> => {
  await settleOwnWrites(call, ['orders']);
  const row = await findOrderByClientOrderId(
    call.services.database.db,
    ownerIdOf(call.caller),
    clientOrderId,
  );
  if (!row) throw orderNotFound(call, clientOrderId);
  return row;
};

/** `ORDER_NOT_FOUND` for an order list the caller's wallet does not have. */
const listNotFound = (call: Call, listId: string): DomainError =>
  new DomainError(
    'ORDER_NOT_FOUND',
    `order list not found in ${call.caller.agentId ? "this agent's wallet" : "the account's own wallet"}`,
    { order_list_id: listId },
  );

/**
 * The orders of one order list of the caller (docs/trading-rules.md, "Order lists: OCO and bracket"), oldest
 * first: an OCO's legs (a rejected OCO: the rejected leg), a bracket's entry and the exits it placed.
 * `ORDER_NOT_FOUND` (`details.order_list_id`) when the wallet has no such list.
 */
export const getOrderList = async (call: Call, rawListId: string): Promise<OrderRow[]> => {
  await settleOwnWrites(call, ['orders']);
  const listId = orderIdOf(rawListId);
  const rows = await getOrdersOfList(call.services.database.db, ownerIdOf(call.caller), listId);
  if (rows.length === 0) throw listNotFound(call, listId);
  return rows;
};

/**
 * The caller's newest order list placed with this list client order id (`list_client_order_id`, Binance
 * `listClientOrderId`), as {@link getOrderList}; `ORDER_NOT_FOUND` when none was.
 */
export const getOrderListByClientOrderId = async (
  call: Call,
  listClientOrderId: string,
): Promise<OrderRow[]> => {
  await settleOwnWrites(call, ['orders']);
  const ownerId = ownerIdOf(call.caller);
  const listId = await findListIdByClientOrderId(call.services.database.db, ownerId, listClientOrderId);
  if (!listId) throw listNotFound(call, listClientOrderId);
  return getOrdersOfList(call.services.database.db, ownerId, listId);
};

/**
 * The caller's newest `limit` order lists (each its orders oldest first), newest first; `open`: only those with an
 * order still open.
 */
export const listOrderLists = async (
  call: Call,
  query: { open: boolean; limit: number },
): Promise<OrderRow[][]> => {
  await settleOwnWrites(call, ['orders']);
  return findOrderLists(call.services.database.db, ownerIdOf(call.caller), query);
};

/**
 * Cancels an order list of the caller: each of its open orders by {@link cancelOrder} (an OCO leg's cancel cancels
 * the other leg in the same append, `linked_cancel`; a bracket's entry cancelled places no exits), so the wallet's
 * rules, not this function, decide what a list's cancel does. Answers the list's orders as they are after it.
 * `ORDER_NOT_FOUND` for an unknown list, `ORDER_NOT_CANCELLABLE` 409 when none of its orders is open.
 */
export const cancelOrderList = async (call: Call, rawListId: string): Promise<OrderRow[]> => {
  const before = await getOrderList(call, rawListId);
  const open = before.filter((r) => OPEN_STATUSES.includes(r.status));
  if (open.length === 0) {
    throw new DomainError('ORDER_NOT_CANCELLABLE', 'no order of this list is open', {
      order_list_id: before[0]!.order_list_id,
    });
  }
  for (const row of open) {
    try {
      await cancelOrder(call, row.order_id);
    } catch (error) {
      // The other leg of an OCO is already cancelled by the first cancel.
      if (!(isDomainError(error) && error.code === 'ORDER_NOT_CANCELLABLE')) throw error;
    }
  }
  return getOrderList(call, rawListId);
};

/**
 * Cancels every open order of the caller on one symbol (Binance `DELETE /openOrders`), one cancel per order; an
 * order that filled meanwhile is left out. The cancelled orders, possibly none. `INVALID_SYMBOL` is not checked
 * here: an unknown symbol simply has no open orders.
 */
export const cancelOpenOrdersOf = async (call: Call, symbol: string): Promise<OrderCancelledData[]> => {
  const open = await listOpenOrders(call, { symbol, limit: 1000, offset: 0 });
  const cancelled: OrderCancelledData[] = [];
  for (const row of open.rows) {
    try {
      cancelled.push(await cancelOrder(call, row.order_id));
    } catch (error) {
      if (!(isDomainError(error) && error.code === 'ORDER_NOT_CANCELLABLE')) throw error;
    }
  }
  return cancelled;
};

/**
 * A page of results with the total count (spec list envelopes) and `nextCursor`, the keyset cursor of the next page
 * (opaque to clients: the `seq` of this page's last row, as a string), null on the last page.
 */
export interface Page<Row> {
  rows: Row[];
  total: number;
  nextCursor: string | null;
}

/** The repository's page in the use cases' terms (the cursor as the string clients send back). */
const pageOut = <Row>(page: { rows: Row[]; total: number; next: number | null }): Page<Row> => ({
  rows: page.rows,
  total: page.total,
  nextCursor: page.next === null ? null : String(page.next),
});

/** The repository filter of a page: `offset`, and the keyset `cursor` when the client sent one. */
const pageFilter = (query: { limit: number; offset: number; cursor?: string | undefined }) => ({
  limit: query.limit,
  offset: query.offset,
  ...(query.cursor !== undefined ? { before: Number(query.cursor) } : {}),
});

/** Filter and page of {@link listOrders}. */
export interface OrderListQuery {
  status?: OrderStatus | undefined;
  /** Any case; normalised here. */
  symbol?: string | undefined;
  /** Only the orders placed with this client order id (exact). */
  clientOrderId?: string | undefined;
  limit: number;
  offset: number;
  /** Keyset cursor (`next_cursor` of the previous page): the page starts after it, in O(limit). */
  cursor?: string | undefined;
}

/**
 * A page of the caller's orders, newest first, once its own writes are in the orders read model: those in
 * `statuses` (every status when undefined), of the query's symbol (normalised) and client order id.
 */
const ordersPage = async (
  call: Call,
  statuses: readonly OrderStatus[] | undefined,
  query: Omit<OrderListQuery, 'status'>,
): Promise<Page<OrderRow>> => {
  await settleOwnWrites(call, ['orders']);
  return pageOut(
    await findOrders(call.services.database.db, ownerIdOf(call.caller), {
      ...(statuses ? { statuses } : {}),
      ...(query.symbol ? { symbol: normalizeSymbol(query.symbol) } : {}),
      ...(query.clientOrderId ? { clientOrderId: query.clientOrderId } : {}),
      ...pageFilter(query),
    }),
  );
};

/** Orders of the caller, newest first, filtered by status and symbol. */
export const listOrders = (call: Call, query: OrderListQuery): Promise<Page<OrderRow>> =>
  ordersPage(call, query.status ? [query.status] : undefined, query);

/** Pending and partially filled orders of the caller, newest first (optionally of one symbol). */
export const listOpenOrders = (call: Call, query: Omit<OrderListQuery, 'status'>): Promise<Page<OrderRow>> =>
  ordersPage(call, OPEN_STATUSES, query);

/** Filter and page of {@link listTrades}. */
export interface TradeListQuery {
  symbol?: string | undefined;
  side?: OrderSide | undefined;
  limit: number;
  offset: number;
  /** Keyset cursor (`next_cursor` of the previous page). */
  cursor?: string | undefined;
}

/** Executed fills of the caller, newest first. */
export const listTrades = async (call: Call, query: TradeListQuery): Promise<Page<TradeRow>> => {
  await settleOwnWrites(call, ['orders']);
  return pageOut(
    await findTrades(call.services.database.db, ownerIdOf(call.caller), {
      ...(query.symbol ? { symbol: normalizeSymbol(query.symbol) } : {}),
      ...(query.side ? { side: query.side } : {}),
      ...pageFilter(query),
    }),
  );
};
