import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { normalizeSymbol } from '../../domain/market/pair';
import { isDomainError } from '../../domain/shared/errors';
import { isUuid } from '../../domain/shared/uuid';
import { type OrderType, TIME_IN_FORCE } from '../../domain/trading/orders';
import { CLIENT_ORDER_ID_PATTERN } from '../../domain/wallet/client-order-id';
import { balances, feeRatesIn } from '../application/account';
import type { Call } from '../application/call';
import { RATE_LIMIT_WINDOW_MS, rateLimitKeyOf, rateLimitUsage } from '../application/rate-limits';
import {
  cancelOpenOrdersOf,
  cancelOrder,
  cancelOrderList,
  getOrder,
  getOrderByClientOrderId,
  getOrderByIdempotencyKey,
  getOrderList,
  getOrderListByClientOrderId,
  listOpenOrders,
  listOrderLists,
  listOrders,
  listTrades,
  type OrderInput,
  orderIdOf,
  placeOrder,
  previewOrder,
} from '../application/trading';
import { signedEndpoint } from './door';
import { BinanceError, CODES, invalidParam, missingParam } from './errors';
import { type BinanceParams, decimalParam, intParam, optional, required, timeWindowParams } from './params';
import {
  cancelledListOut,
  cancelledOut,
  myTrade,
  type OrderResponseType,
  ocoPlacedOut,
  orderListOut,
  orderOut,
  placedOut,
  ZERO8,
} from './present';

/**
 * Binance's `SIGNED` account and trading endpoints (Spot API "Trading endpoints", "Account endpoints") over the
 * trading use cases of `src/application/trading.ts` and `account.ts` — the ones the REST door calls, so the same
 * risk chain, fees, client order ids (`newClientOrderId` is the order's `client_order_id`, unique among the wallet's
 * open orders as on Binance) and read-your-writes apply.
 * Orders and cancels count in the `orders` group, reads in `general`, against the key's wallet owner.
 */

/** Binance order types we map onto ours, and the Binance ones we do not serve (a clear -1116). */
const TYPE_OF: Record<string, OrderType> = {
  MARKET: 'market',
  LIMIT: 'limit',
  STOP_LOSS: 'stop_loss',
  TAKE_PROFIT: 'take_profit',
};
const UNSERVED_TYPES = new Set(['STOP_LOSS_LIMIT', 'TAKE_PROFIT_LIMIT', 'LIMIT_MAKER']);

/** Parameters Binance knows that the venue does not serve: refused rather than silently ignored. */
const UNSERVED_PARAMS = [
  'quoteOrderQty',
  'icebergQty',
  'trailingDelta',
  'strategyId',
  'strategyType',
  'pegPriceType',
];

/** A new order's parameters read as Binance defines them, in the venue's terms. */
interface NewOrder {
  /** The order, with `clientOrderId`: the `newClientOrderId` sent, else one generated as Binance does. */
  input: OrderInput & { clientOrderId: string };
  respType: OrderResponseType;
}

const notRequired = (name: string) =>
  new BinanceError(CODES.PARAM_NOT_REQUIRED, `Parameter '${name}' sent when not required.`);

/**
 * Reads `POST /order`: `symbol`, `side` (BUY/SELL, else -1117), `type` (MARKET, LIMIT, STOP_LOSS, TAKE_PROFIT;
 * STOP_LOSS_LIMIT, TAKE_PROFIT_LIMIT and LIMIT_MAKER are not served and any other is invalid: -1116), `quantity`
 * (mandatory: -1102), `price` (LIMIT only), `stopPrice` (STOP_LOSS and TAKE_PROFIT only; -1106 when sent
 * elsewhere), `timeInForce` (GTC, IOC or FOK, docs/trading-rules.md "Time in force"; -1115 otherwise), `newClientOrderId`,
 * `newOrderRespType` (ACK, RESULT, FULL; FULL by default for MARKET and LIMIT, ACK for the others).
 */
const newOrderOf = (p: BinanceParams): NewOrder => {
  const symbol = normalizeSymbol(required(p, 'symbol'));
  const sideText = required(p, 'side').toUpperCase();
  if (sideText !== 'BUY' && sideText !== 'SELL') throw new BinanceError(CODES.INVALID_SIDE, 'Invalid side.');
  const typeText = required(p, 'type').toUpperCase();
  const type = TYPE_OF[typeText];
  if (!type) {
    throw new BinanceError(
      CODES.INVALID_ORDER_TYPE,
      UNSERVED_TYPES.has(typeText)
        ? `Unsupported order type ${typeText}: this venue serves MARKET, LIMIT, STOP_LOSS and TAKE_PROFIT (docs/binance-compatibility.md).`
        : 'Invalid orderType.',
    );
  }
  for (const name of UNSERVED_PARAMS) if (optional(p, name) !== undefined) throw notRequired(name);
  const tifText = optional(p, 'timeInForce')?.toUpperCase();
  const timeInForce = TIME_IN_FORCE.find((t) => t === tifText);
  if (tifText !== undefined && !timeInForce) {
    throw new BinanceError(
      CODES.INVALID_TIME_IN_FORCE,
      `Invalid timeInForce ${tifText}: this venue serves GTC, IOC and FOK (docs/binance-compatibility.md).`,
    );
  }
  const quantity = decimalParam(p, 'quantity');
  if (quantity === undefined) throw missingParam('quantity');
  const price = decimalParam(p, 'price');
  const stopPrice = decimalParam(p, 'stopPrice');
  if (type === 'limit' && price === undefined) throw missingParam('price');
  if (type !== 'limit' && price !== undefined) throw notRequired('price');
  const triggered = type === 'stop_loss' || type === 'take_profit';
  if (triggered && stopPrice === undefined) throw missingParam('stopPrice');
  if (!triggered && stopPrice !== undefined) throw notRequired('stopPrice');
  const given = optional(p, 'newClientOrderId');
  if (given !== undefined && !CLIENT_ORDER_ID_PATTERN.test(given)) {
    throw new BinanceError(
      CODES.ILLEGAL_CHARS,
      "Illegal characters found in parameter 'newClientOrderId'; legal range is '^[a-zA-Z0-9-_.]{1,36}$'.",
    );
  }
  const respText = optional(p, 'newOrderRespType')?.toUpperCase();
  if (respText !== undefined && respText !== 'ACK' && respText !== 'RESULT' && respText !== 'FULL') {
    throw invalidParam('newOrderRespType', 'use ACK, RESULT or FULL');
  }
  return {
    input: {
      symbol,
      side: sideText === 'BUY' ? 'buy' : 'sell',
      type,
      quantity,
      price: price ?? null,
      triggerPrice: stopPrice ?? null,
      ...(timeInForce ? { timeInForce } : {}),
      // Binance generates one when none is sent; recorded, so later queries show the id the placement answered.
      clientOrderId: given ?? `web_${randomBytes(16).toString('hex')}`,
    },
    respType: (respText as OrderResponseType | undefined) ?? (triggered ? 'ACK' : 'FULL'),
  };
};

/** A client order id parameter checked as Binance checks it (`^[a-zA-Z0-9-_.]{1,36}$`), or undefined. */
const clientIdParam = (p: BinanceParams, name: string): string | undefined => {
  const given = optional(p, name);
  if (given !== undefined && !CLIENT_ORDER_ID_PATTERN.test(given)) {
    throw new BinanceError(
      CODES.ILLEGAL_CHARS,
      `Illegal characters found in parameter '${name}'; legal range is '^[a-zA-Z0-9-_.]{1,36}$'.`,
    );
  }
  return given;
};

/** Binance's OCO parameters the venue does not serve: a stop-limit leg and iceberg legs. */
const UNSERVED_OCO_PARAMS = [
  'stopLimitPrice',
  'stopLimitTimeInForce',
  'limitIcebergQty',
  'stopIcebergQty',
  'trailingDelta',
];

/**
 * The legacy `POST /api/v3/order/oco` parameters in the venue's terms (docs/binance-compatibility.md): `price` is
 * the limit (take-profit) leg, `stopPrice` the stop-loss leg (a `STOP_LOSS`; a stop-limit leg is refused), one
 * `quantity` and `side` for both; each leg's client order id is `limitClientOrderId` / `stopClientOrderId` (else
 * one generated as Binance does).
 */
const newOcoOf = (p: BinanceParams) => {
  const symbol = normalizeSymbol(required(p, 'symbol'));
  const sideText = required(p, 'side').toUpperCase();
  if (sideText !== 'BUY' && sideText !== 'SELL') throw new BinanceError(CODES.INVALID_SIDE, 'Invalid side.');
  for (const name of UNSERVED_OCO_PARAMS) {
    if (optional(p, name) !== undefined) {
      throw new BinanceError(
        CODES.PARAM_NOT_REQUIRED,
        `Parameter '${name}' sent when not required: this venue's OCO stop leg is a STOP_LOSS (docs/binance-compatibility.md).`,
      );
    }
  }
  const quantity = decimalParam(p, 'quantity');
  if (quantity === undefined) throw missingParam('quantity');
  const price = decimalParam(p, 'price');
  if (price === undefined) throw missingParam('price');
  const stopPrice = decimalParam(p, 'stopPrice');
  if (stopPrice === undefined) throw missingParam('stopPrice');
  const generated = () => `web_${randomBytes(16).toString('hex')}`;
  const limitId = clientIdParam(p, 'limitClientOrderId') ?? generated();
  const stopId = clientIdParam(p, 'stopClientOrderId') ?? generated();
  const listClientOrderId = clientIdParam(p, 'listClientOrderId') ?? generated();
  const input: OrderInput & { clientOrderId: string } = {
    symbol,
    side: sideText === 'BUY' ? 'buy' : 'sell',
    type: 'limit',
    quantity,
    price,
    triggerPrice: null,
    clientOrderId: limitId,
    list: {
      kind: 'oco',
      stopLoss: { triggerPrice: stopPrice, clientOrderId: stopId },
      // Recorded on both legs: `GET /orderList` and `DELETE /orderList` find the list by it.
      clientOrderId: listClientOrderId,
    },
  };
  return { input, limitId, stopId, listClientOrderId };
};

/**
 * An order or order-list id parameter in the form the ledger keys it ({@link orderIdOf}, the application's one rule
 * for order ids through every door: trimmed, lower-cased), or undefined when absent or empty. The door never
 * canonicalises ids itself, so a Binance client's `orderId` names the order `/api/v1` and MCP name with it.
 */
const optionalOrderId = (p: BinanceParams, name: string): string | undefined => {
  const raw = optional(p, name);
  const id = raw === undefined ? '' : orderIdOf(raw);
  // Only spaces is no id: -1102 (missing), as an absent one, not an order that does not exist.
  return id === '' ? undefined : id;
};

/**
 * The order a query or cancel names: `orderId` (the venue's order id) or `origClientOrderId` (the
 * `newClientOrderId` it was placed with: its newest order with that id, as on Binance; an order placed before
 * client order ids were recorded is found by the idempotency key its `newClientOrderId` was then); -1102 when
 * neither is sent; an order of another `symbol` does not exist.
 */
const namedOrder = async (call: Call, p: BinanceParams) => {
  const symbol = normalizeSymbol(required(p, 'symbol'));
  const orderId = optionalOrderId(p, 'orderId');
  const clientOrderId = optional(p, 'origClientOrderId');
  if (orderId === undefined && clientOrderId === undefined) {
    throw new BinanceError(
      CODES.MANDATORY_PARAM_EMPTY_OR_MALFORMED,
      "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!",
    );
  }
  // Order ids are UUIDs: anything else names no order (and never reaches a uuid column).
  if (orderId !== undefined && !isUuid(orderId))
    throw new BinanceError(CODES.NO_SUCH_ORDER, 'Order does not exist.');
  const row =
    orderId !== undefined ? await getOrder(call, orderId) : await byClientOrderId(call, clientOrderId!);
  if (row.symbol !== symbol) {
    throw new BinanceError(CODES.NO_SUCH_ORDER, 'Order does not exist.');
  }
  return { row, clientOrderId };
};

/**
 * The order list a query or cancel names (Binance "Query Order list", "Cancel Order list"): `orderListId` (the
 * venue's list id) or the list's client order id (`origClientOrderId` on a query, `listClientOrderId` on a cancel:
 * Binance's names), -1102 when neither is sent; its orders, oldest first. An unknown list (or one of another
 * `symbol`, when the request names one) is -2013 `Order list does not exist.` on a query and -2011 `Unknown order
 * list sent.` on a cancel, as on Binance.
 */
const namedList = async (call: Call, p: BinanceParams, at: 'query' | 'cancel') => {
  const clientIdName = at === 'query' ? 'origClientOrderId' : 'listClientOrderId';
  const symbol = at === 'cancel' ? normalizeSymbol(required(p, 'symbol')) : undefined;
  const listId = optionalOrderId(p, 'orderListId');
  const clientId = optional(p, clientIdName);
  if (listId === undefined && clientId === undefined) {
    throw new BinanceError(
      CODES.MANDATORY_PARAM_EMPTY_OR_MALFORMED,
      `Param '${clientIdName}' or 'orderListId' must be sent, but both were empty/null!`,
    );
  }
  const unknown = () =>
    at === 'query'
      ? new BinanceError(CODES.NO_SUCH_ORDER, 'Order list does not exist.')
      : new BinanceError(CODES.CANCEL_REJECTED, 'Unknown order list sent.');
  // List ids are UUIDs, as order ids: anything else names no list.
  if (listId !== undefined && !isUuid(listId)) throw unknown();
  const rows = await (listId !== undefined
    ? getOrderList(call, listId)
    : getOrderListByClientOrderId(call, clientId!)
  ).catch((error: unknown) => {
    throw isDomainError(error) && error.code === 'ORDER_NOT_FOUND' ? unknown() : error;
  });
  if (symbol !== undefined && rows[0]!.symbol !== symbol) throw unknown();
  return { rows, unknown };
};

/** The newest order with this client order id, else (orders recorded before 2026-11-28) the one keyed with it. */
const byClientOrderId = (call: Call, clientOrderId: string) =>
  getOrderByClientOrderId(call, clientOrderId).catch((error: unknown) => {
    if (isDomainError(error) && error.code === 'ORDER_NOT_FOUND')
      return getOrderByIdempotencyKey(call, clientOrderId);
    throw error;
  });

/**
 * The fee rates the key's account or agent pays (a fraction of notional, 8-place decimal strings), in Binance's
 * names: `maker` and `taker`, from the use case `GET /api/v1/account/info` reads them with (`feeRatesIn`).
 */
export const feeRates = (call: Call): { maker: string; taker: string } => {
  const { makerFeeRate, feeRate } = feeRatesIn(call);
  return { maker: makerFeeRate, taker: feeRate };
};

/** Binance's commission discount (paying fees in BNB): the venue has none, fees are always in USDT. */
const NO_DISCOUNT = {
  enabledForAccount: false,
  enabledForSymbol: false,
  discountAsset: 'BNB',
  discount: ZERO8,
} as const;

/** A fee rate in basis points, as Binance's integer `makerCommission`/`takerCommission`. */
const bps = (rate: string): number => Math.round(Number(rate) * 10_000);

/** `limit` of the list endpoints: default 500, at most 1,000 (Binance's bounds). */
const listLimit = (p: BinanceParams) => intParam(p, 'limit', { min: 1, max: 1000 }, 500);

/** The request's `symbol` (-1102 without one), normalised, and a listed pair where market data runs (-1121). */
export const listedSymbol = (call: Call, p: BinanceParams): string => {
  const symbol = normalizeSymbol(required(p, 'symbol'));
  call.services.market?.requirePair(symbol);
  return symbol;
};

/** Keeps the rows within Binance's optional `startTime`/`endTime` (ms, inclusive) and returns them oldest first. */
const inTimeRange = <R>(rows: R[], p: BinanceParams, timeOf: (r: R) => number): R[] => {
  const { start, end } = timeWindowParams(p);
  return rows
    .filter((r) => (start === undefined || timeOf(r) >= start) && (end === undefined || timeOf(r) <= end))
    .reverse();
};

/** Registers the signed endpoints on the `/binance/api/v3` scope. */
export const tradeRoutes = async (app: FastifyInstance): Promise<void> => {
  // Binance's "Query Unfilled Order Count": the caller's ORDERS budget of the venue's one limiter (shared by every
  // door), as exchangeInfo's `rateLimits` states it; reading it counts in `general`, not in `orders`.
  app.get(
    '/rateLimit/order',
    signedEndpoint('general', 'read', async ({ call, request }) => {
      const u = await rateLimitUsage(app.services, rateLimitKeyOf(call.caller, request.ip), 'orders');
      return [
        {
          rateLimitType: 'ORDERS',
          interval: 'MINUTE',
          intervalNum: RATE_LIMIT_WINDOW_MS / 60_000,
          limit: u.limit,
          count: u.used,
        },
      ];
    }),
  );
  app.get(
    '/account',
    signedEndpoint('general', 'read', async ({ call, params }) => {
      const { balances: lines } = await balances(call);
      const omitZero = optional(params, 'omitZeroBalances') === 'true';
      const rates = feeRates(call);
      return {
        makerCommission: bps(rates.maker),
        takerCommission: bps(rates.taker),
        buyerCommission: 0,
        sellerCommission: 0,
        commissionRates: { ...rates, buyer: ZERO8, seller: ZERO8 },
        canTrade: true,
        canWithdraw: false,
        canDeposit: false,
        brokered: false,
        requireSelfTradePrevention: false,
        preventSor: false,
        updateTime: Date.now(),
        accountType: 'SPOT',
        balances: lines
          .filter((b) => !omitZero || b.total !== '0.00000000')
          .map((b) => ({ asset: b.asset, free: b.available, locked: b.locked })),
        permissions: ['SPOT'],
      };
    }),
  );

  // Binance's "Query Commission Rates" (`GET /account/commission`, Spot API "Account endpoints"): the rates the
  // key's account or agent pays on `symbol` (-1102 without one, -1121 when it is not listed), from the same
  // `feeRatesIn` use case as `GET /account`'s `commissionRates` and `/sapi/v1/asset/tradeFee`. The venue charges
  // no buyer/seller, special or tax commission and grants no BNB discount: those are zero, as Binance states them.
  app.get(
    '/account/commission',
    signedEndpoint('general', 'read', ({ call, params }) => {
      const symbol = listedSymbol(call, params);
      const none = { maker: ZERO8, taker: ZERO8, buyer: ZERO8, seller: ZERO8 };
      return {
        symbol,
        standardCommission: { ...feeRates(call), buyer: ZERO8, seller: ZERO8 },
        specialCommission: none,
        taxCommission: none,
        discount: NO_DISCOUNT,
      };
    }),
  );

  app.post(
    '/order',
    signedEndpoint('orders', 'order', async ({ call, params }) => {
      const order = newOrderOf(params);
      // As on Binance, `newClientOrderId` is unique among open orders (a second open order with it: -2010
      // `Duplicate order sent.`), not an idempotency key: reusing the id of a finished order places a new order.
      const placed = await placeOrder(call, order.input);
      return placedOut(placed.outcome, order.input.clientOrderId, order.respType);
    }),
  );

  app.post(
    '/order/test',
    // Counted in `general` as REST counts `POST /trade/order/preview`: a test order is not an order (spec
    // "Limits"), so it neither takes one from the orders budget every door shares nor is refused once that is spent.
    signedEndpoint('general', 'order', async ({ call, params }) => {
      const order = newOrderOf(params);
      // The same decider on the wallet as it is, nothing appended (POST /api/v1/trade/order/preview).
      await previewOrder(call, order.input);
      if (optional(params, 'computeCommissionRates') !== 'true') return {};
      return {
        standardCommissionForOrder: feeRates(call),
        taxCommissionForOrder: { maker: ZERO8, taker: ZERO8 },
        discount: NO_DISCOUNT,
      };
    }),
  );

  app.post(
    '/order/oco',
    signedEndpoint('orders', 'order', async ({ call, params }) => {
      const oco = newOcoOf(params);
      const placed = await placeOrder(call, oco.input);
      return ocoPlacedOut(placed.outcome, oco);
    }),
  );

  app.get(
    '/orderList',
    signedEndpoint('general', 'query', async ({ call, params }) => {
      const { rows } = await namedList(call, params, 'query');
      return orderListOut(rows);
    }),
  );

  app.delete(
    '/orderList',
    signedEndpoint('orders', 'cancel', async ({ call, params }) => {
      const { rows, unknown } = await namedList(call, params, 'cancel');
      // Each open order of the list through the one cancel use case: the wallet's rules cancel an OCO whole.
      const after = await cancelOrderList(call, rows[0]!.order_list_id!).catch((error: unknown) => {
        throw isDomainError(error) && error.code === 'ORDER_NOT_CANCELLABLE' ? unknown() : error;
      });
      return cancelledListOut(after);
    }),
  );

  app.get(
    '/allOrderList',
    signedEndpoint('general', 'read', async ({ call, params }) => {
      const limit = listLimit(params);
      const fromId = optionalOrderId(params, 'fromId');
      const filtered = fromId !== undefined || optional(params, 'startTime') || optional(params, 'endTime');
      const lists = await listOrderLists(call, { open: false, limit: filtered ? 1000 : limit });
      let shown = inTimeRange(lists, params, (rows) => new Date(rows[0]!.created_at).getTime());
      if (fromId !== undefined) {
        const at = shown.findIndex((rows) => rows[0]!.order_list_id === fromId);
        shown = at < 0 ? [] : shown.slice(at);
      }
      return shown.slice(0, limit).map(orderListOut);
    }),
  );

  app.get(
    '/openOrderList',
    signedEndpoint('general', 'read', async ({ call }) => {
      const lists = await listOrderLists(call, { open: true, limit: 1000 });
      return lists.reverse().map(orderListOut);
    }),
  );

  app.get(
    '/order',
    signedEndpoint('general', 'query', async ({ call, params }) => {
      const { row, clientOrderId } = await namedOrder(call, params);
      return orderOut(row, clientOrderId);
    }),
  );

  app.delete(
    '/order',
    signedEndpoint('orders', 'cancel', async ({ call, params }) => {
      const { row, clientOrderId } = await namedOrder(call, params).catch((error: unknown) => {
        // An order the caller cannot see is, on a cancel, Binance's -2011 "Unknown order sent."
        if (error instanceof BinanceError && error.code === CODES.NO_SUCH_ORDER) {
          throw new BinanceError(CODES.CANCEL_REJECTED, 'Unknown order sent.');
        }
        throw error;
      });
      const cancelled = await cancelOrder(call, row.order_id);
      return cancelledOut(row, clientOrderId, cancelled.cancelled_at);
    }),
  );

  app.get(
    '/openOrders',
    signedEndpoint('general', 'read', async ({ call, params }) => {
      const symbol = optional(params, 'symbol');
      if (symbol !== undefined) call.services.market?.requirePair(symbol);
      const page = await listOpenOrders(call, { symbol, limit: 1000, offset: 0 });
      return page.rows.reverse().map((row) => orderOut(row));
    }),
  );

  app.delete(
    '/openOrders',
    signedEndpoint('orders', 'cancel', async ({ call, params }) => {
      const symbol = listedSymbol(call, params);
      const open = await listOpenOrders(call, { symbol, limit: 1000, offset: 0 });
      const rows = new Map(open.rows.map((r) => [r.order_id, r]));
      const cancelled = await cancelOpenOrdersOf(call, symbol);
      return cancelled.flatMap((c) => {
        const row = rows.get(c.order_id);
        return row ? [cancelledOut(row, undefined, c.cancelled_at)] : [];
      });
    }),
  );

  app.get(
    '/allOrders',
    signedEndpoint('general', 'read', async ({ call, params }) => {
      const symbol = listedSymbol(call, params);
      const limit = listLimit(params);
      const fromId = optionalOrderId(params, 'orderId');
      const page = await listOrders(call, { symbol, limit: fromId ? 1000 : limit, offset: 0 });
      let rows = inTimeRange(page.rows, params, (r) => new Date(r.created_at).getTime());
      if (fromId) {
        const at = rows.findIndex((r) => r.order_id === fromId);
        rows = at < 0 ? [] : rows.slice(at);
      }
      return rows.slice(0, limit).map((row) => orderOut(row));
    }),
  );

  app.get(
    '/myTrades',
    signedEndpoint('general', 'read', async ({ call, params }) => {
      const symbol = listedSymbol(call, params);
      const limit = listLimit(params);
      const orderId = optionalOrderId(params, 'orderId');
      const page = await listTrades(call, { symbol, limit: orderId ? 1000 : limit, offset: 0 });
      const rows = inTimeRange(page.rows, params, (t) => new Date(t.executed_at).getTime()).filter(
        (t) => !orderId || t.order_id === orderId,
      );
      return rows.slice(-limit).map(myTrade);
    }),
  );
};
