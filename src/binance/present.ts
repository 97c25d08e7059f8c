import type { PlaceOrderOutcome } from '../../commands/wallet';
import type { Candle } from '../../domain/market/candle';
import { closeTimeOf } from '../../domain/market/candle';
import type { Interval } from '../../domain/market/intervals';
import type { Pair } from '../../domain/market/pair';
import { type Dec, dec, fmt, roundHalfEven8, SCALE } from '../../domain/trading/decimal';
import { largestOrderDecimal, type OrderSide, type OrderType } from '../../domain/trading/orders';
import type { OrderCancelledData, OrderPlacedData } from '../../domain/wallet/events';
import { isExpiry } from '../../domain/wallet/expiry';
import type { OrderStatus } from '../../projections/orders';
import type { OrderRow, TradeRow } from '../../queries/trading';
import type { OrderUpdate } from '../application/user-data-streams';
import type { Ticker } from '../market/feed';
import type { RecentTrade } from '../market/recent-trades';

/**
 * The one mapping from the venue's records to Binance Spot API v3 shapes (Binance's documentation: decimals as
 * strings, times as epoch milliseconds, enums in upper case). Ids of orders and trades are the venue's UUIDs
 * (strings where Binance has integers; docs/binance-compatibility.md, "What differs").
 */

/** Zero as Binance writes a decimal: 8 places. */
export const ZERO8 = '0.00000000';
const d8 = (v: string | number | Dec | null | undefined): string =>
  v == null ? ZERO8 : fmt(roundHalfEven8(dec(v)));
const ms = (v: Date | string | null | undefined): number => (v == null ? 0 : new Date(v).getTime());

/** Binance's order type of each of ours, and ours of each Binance type we map (the rest are refused: -1116). */
export const BINANCE_TYPE: Record<OrderType, string> = {
  market: 'MARKET',
  limit: 'LIMIT',
  stop_loss: 'STOP_LOSS',
  take_profit: 'TAKE_PROFIT',
};
/** The Binance order types this door maps (exchangeInfo `orderTypes`: ccxt refuses any other before sending). */
export const ORDER_TYPES = ['LIMIT', 'MARKET', 'STOP_LOSS', 'TAKE_PROFIT'] as const;

const STATUS: Record<OrderStatus, string> = {
  pending: 'NEW',
  partially_filled: 'PARTIALLY_FILLED',
  filled: 'FILLED',
  cancelled: 'CANCELED',
  rejected: 'REJECTED',
};

/**
 * Binance's status of an order: a cancel its time in force made (a market order's or IOC's unfilled rest, a FOK
 * that could not fill) is `EXPIRED`, as Binance shows it; any other cancel `CANCELED`.
 */
const statusOf = (status: OrderStatus, cancelReason: string | null | undefined): string =>
  status === 'cancelled' && isExpiry(cancelReason) ? 'EXPIRED' : STATUS[status];

const side = (s: OrderSide): 'BUY' | 'SELL' => (s === 'buy' ? 'BUY' : 'SELL');

/** The finest grid an order's price or quantity may be on: one unit of the ledger's 8 places (`SCALE`). */
const UNIT = dec(1).shiftedBy(-SCALE);
/** The exchangeInfo `maxPrice` of every pair: the largest price the ledger takes ({@link largestOrderDecimal}). */
const MAX_PRICE = d8(largestOrderDecimal(UNIT));

/**
 * One symbol of `exchangeInfo` from a pair and its filters. The filters state the rules the venue's decider
 * enforces on every door, no stricter (docs/binance-compatibility.md, "Filters"): `PRICE_FILTER` the interface's
 * price rule (any price above 0 with up to 8 places, below 10^15: `tickSize` = `minPrice` = 0.00000001; the
 * pair's exchange tick, `/api/v1/market/pairs`' `tick_size`, shapes the synthetic book but is not enforced on
 * orders), `LOT_SIZE` the pair's `min_qty` and `step_size` (risk rule 3) up to the same bound, `NOTIONAL` its
 * `min_notional` (risk rule 4). `maxPrice` and `maxQty` are {@link largestOrderDecimal} of their grid: below 10^15
 * even read as a double, as ccxt reads them.
 */
export const symbolInfo = (p: Pair) => ({
  symbol: p.symbol,
  status: p.status === 'active' ? 'TRADING' : 'BREAK',
  baseAsset: p.baseAsset,
  baseAssetPrecision: 8,
  quoteAsset: p.quoteAsset,
  quotePrecision: 8,
  quoteAssetPrecision: 8,
  baseCommissionPrecision: 8,
  quoteCommissionPrecision: 8,
  orderTypes: [...ORDER_TYPES],
  icebergAllowed: false,
  // OCO lists are placed by `POST /order/oco` and read and cancelled by the order-list endpoints; OTO lists (the
  // venue's brackets) are placed through `/api/v1` only, so this door does not offer them.
  ocoAllowed: true,
  otoAllowed: false,
  quoteOrderQtyMarketAllowed: false,
  allowTrailingStop: false,
  cancelReplaceAllowed: false,
  isSpotTradingAllowed: p.status === 'active',
  isMarginTradingAllowed: false,
  filters: [
    {
      filterType: 'PRICE_FILTER',
      minPrice: d8(UNIT),
      maxPrice: MAX_PRICE,
      tickSize: d8(UNIT),
    },
    {
      filterType: 'LOT_SIZE',
      minQty: d8(p.minQty),
      maxQty: d8(largestOrderDecimal(dec(p.stepSize).gt(0) ? dec(p.stepSize) : UNIT)),
      stepSize: d8(p.stepSize),
    },
    {
      filterType: 'NOTIONAL',
      minNotional: d8(p.minNotional),
      applyMinToMarket: true,
      maxNotional: '9000000000.00000000',
      applyMaxToMarket: false,
      avgPriceMins: 0,
    },
  ],
  permissions: [],
  permissionSets: [['SPOT']],
  defaultSelfTradePreventionMode: 'NONE',
  allowedSelfTradePreventionModes: ['NONE'],
});

/** `ticker/24hr` (FULL) of one pair from its rolling 24h ticker; the bid/ask from the synthetic book's top. */
export const ticker24hr = (t: Ticker, top?: { bid: [string, string]; ask: [string, string] }) => {
  const volume = dec(t.volume);
  return {
    symbol: t.symbol,
    priceChange: t.change,
    priceChangePercent: dec(t.changePct).toFixed(3),
    weightedAvgPrice: volume.isZero() ? t.close : d8(dec(t.quoteVolume).div(volume)),
    prevClosePrice: t.open,
    lastPrice: t.close,
    lastQty: ZERO8,
    bidPrice: top?.bid[0] ?? t.close,
    bidQty: top?.bid[1] ?? ZERO8,
    askPrice: top?.ask[0] ?? t.close,
    askQty: top?.ask[1] ?? ZERO8,
    openPrice: t.open,
    highPrice: t.high,
    lowPrice: t.low,
    volume: t.volume,
    quoteVolume: t.quoteVolume,
    openTime: Math.floor(t.time) - 86_400_000,
    closeTime: Math.floor(t.time),
    firstId: -1,
    lastId: -1,
    count: t.tradeCount,
  };
};

/** A kline: `[openTime, open, high, low, close, volume, closeTime, quoteVolume, trades, takerBase, takerQuote, "0"]`. */
export const kline = (c: Candle, interval: Interval) => [
  c.openTime,
  c.open,
  c.high,
  c.low,
  c.close,
  c.volume,
  closeTimeOf(c.openTime, interval),
  c.quoteVolume ?? d8(dec(c.volume).times(c.close)),
  c.tradeCount ?? 0,
  ZERO8,
  ZERO8,
  '0',
];

/** A public trade (`trades`). */
export const publicTrade = (t: RecentTrade) => ({
  id: t.tradeId,
  price: t.price,
  qty: t.quantity,
  quoteQty: d8(dec(t.price).times(t.quantity)),
  time: Math.floor(t.time),
  isBuyerMaker: t.isBuyerMaker,
  isBestMatch: true,
});

/** An aggregate trade (`aggTrades`): each of our public trades is its own aggregate. */
export const aggTrade = (t: RecentTrade) => ({
  a: t.tradeId,
  p: t.price,
  q: t.quantity,
  f: t.tradeId,
  l: t.tradeId,
  T: Math.floor(t.time),
  m: t.isBuyerMaker,
  M: true,
});

const quoteOf = (qty: string | null, price: string | null): string =>
  qty == null || price == null ? ZERO8 : d8(dec(qty).times(price));

/**
 * An order as `GET /order`, `openOrders` and `allOrders` show it. `clientOrderId`: the order's client order id,
 * else the one the query named it by (an order placed before they were recorded), else its order id.
 */
export const orderOut = (row: OrderRow, clientOrderId?: string) => {
  const open = row.status === 'pending' || row.status === 'partially_filled';
  return {
    symbol: row.symbol,
    orderId: row.order_id,
    // An OCO leg's list (the venue's list id); -1 for a lone order, as Binance.
    orderListId: row.order_list_id ?? -1,
    clientOrderId: row.client_order_id ?? clientOrderId ?? row.order_id,
    price: d8(row.price),
    origQty: d8(row.quantity),
    executedQty: d8(row.executed_qty),
    cummulativeQuoteQty: quoteOf(row.executed_qty, row.executed_price),
    status: statusOf(row.status, row.cancel_reason),
    timeInForce: row.time_in_force ?? 'GTC',
    type: BINANCE_TYPE[row.type],
    side: side(row.side),
    stopPrice: d8(row.trigger_price),
    icebergQty: ZERO8,
    time: ms(row.created_at),
    updateTime: ms(row.updated_at),
    isWorking: open && (row.type === 'limit' || row.type === 'market'),
    workingTime: ms(row.created_at),
    origQuoteOrderQty: ZERO8,
    selfTradePreventionMode: 'NONE',
  };
};

/**
 * Whether a fill made liquidity (Binance `isMaker`, `m`): its recorded liquidity flag (`maker`: a resting limit
 * order's fill). A limit order that took liquidity when placed (marketable) is a taker, as on Binance. Fills
 * recorded before the flag existed (`instant`, before 2026-11-25): a limit fill without slippage, i.e. at its resting
 * limit (a marketable one paid slippage up to its limit).
 */
export const isMakerFill = (f: {
  liquidity: string | null | undefined;
  trigger: string;
  slippagePct: string;
}): boolean => (f.liquidity ? f.liquidity === 'maker' : f.trigger === 'limit' && dec(f.slippagePct).isZero());

/** An own trade (`myTrades`); `isMaker` by the fill's liquidity flag ({@link isMakerFill}). */
export const myTrade = (t: TradeRow) => ({
  symbol: t.symbol,
  id: t.trade_id,
  orderId: t.order_id,
  orderListId: -1,
  price: d8(t.price),
  qty: d8(t.quantity),
  quoteQty: d8(t.notional),
  commission: d8(t.fee),
  commissionAsset: 'USDT',
  time: ms(t.executed_at),
  isBuyer: t.side === 'buy',
  isMaker: isMakerFill({
    liquidity: t.fill?.liquidity,
    trigger: t.fill_trigger,
    slippagePct: t.slippage_pct,
  }),
  isBestMatch: true,
});

/** `newOrderRespType` of a new order (Binance: FULL by default for MARKET and LIMIT, ACK for the others). */
export type OrderResponseType = 'ACK' | 'RESULT' | 'FULL';

/**
 * The answer to `POST /order` from the placement's own events (not a read model: it is right at once), in the
 * requested `newOrderRespType`; `fills` (FULL) lists the fill of an order that filled on placement.
 */
export const placedOut = (
  outcome: Extract<PlaceOrderOutcome, { kind: 'filled' | 'pending' }>,
  clientOrderId: string,
  respType: OrderResponseType,
) => {
  const placed = outcome.events.find((e) => e.type === 'OrderPlaced' && e.data.order_id === outcome.orderId)
    ?.data as OrderPlacedData | undefined;
  if (!placed) throw new Error(`order ${outcome.orderId} has no placement among its events`);
  const fills = outcome.events.flatMap((e) =>
    e.type === 'OrderFilled' && e.data.order_id === outcome.orderId ? [e.data] : [],
  );
  const last = fills[fills.length - 1];
  const cancelled = outcome.events.find(
    (e) => e.type === 'OrderCancelled' && e.data.order_id === outcome.orderId,
  )?.data as OrderCancelledData | undefined;
  const status = cancelled ? statusOf('cancelled', cancelled.reason) : last ? 'FILLED' : 'NEW';
  const transactTime = ms(placed.placed_at);
  const ack = {
    symbol: placed.symbol,
    orderId: placed.order_id,
    orderListId: -1,
    clientOrderId,
    transactTime,
  };
  if (respType === 'ACK') return ack;
  const result = {
    ...ack,
    price: d8(placed.price),
    origQty: d8(placed.quantity),
    executedQty: d8(last ? (last.order_after?.executed_quantity ?? last.quantity) : undefined),
    cummulativeQuoteQty: d8(fills.reduce((sum, f) => sum.plus(f.notional), dec(0))),
    status,
    timeInForce: placed.time_in_force ?? 'GTC',
    type: BINANCE_TYPE[placed.type],
    side: side(placed.side),
    ...(placed.trigger_price ? { stopPrice: d8(placed.trigger_price) } : {}),
    workingTime: transactTime,
    selfTradePreventionMode: 'NONE',
  };
  if (respType === 'RESULT') return result;
  return {
    ...result,
    fills: fills.map((fill) => ({
      price: d8(fill.executed_price),
      qty: d8(fill.quantity),
      commission: d8(fill.fee),
      commissionAsset: 'USDT',
      tradeId: fill.trade_id,
    })),
  };
};

/**
 * The answer of the legacy `POST /api/v3/order/oco` (Binance's shape): the list (`orderListId`: the venue's list
 * id, a UUID like its order ids; `contingencyType` `OCO`), its two orders, the stop leg first as Binance lists
 * them, and each leg's report as a `RESULT` placement answers it.
 */
export const ocoPlacedOut = (
  outcome: Extract<PlaceOrderOutcome, { kind: 'filled' | 'pending' }>,
  ids: { limitId: string; stopId: string; listClientOrderId: string },
) => {
  const legs = outcome.events.flatMap((e) =>
    e.type === 'OrderPlaced' && e.data.list_kind === 'oco' ? [e.data] : [],
  );
  const stop = legs.find((l) => l.list_role === 'stop_loss');
  const limit = legs.find((l) => l.list_role === 'take_profit');
  if (!stop || !limit) throw new Error('the events place no OCO');
  const listId = limit.order_list_id!;
  const ordered = [
    { leg: stop, clientOrderId: ids.stopId },
    { leg: limit, clientOrderId: ids.limitId },
  ];
  const reports = ordered.map(({ leg, clientOrderId }) => ({
    ...placedOut({ ...outcome, orderId: leg.order_id }, clientOrderId, 'RESULT'),
    orderListId: listId,
  }));
  const done = reports.some((r) => 'status' in r && r.status !== 'NEW');
  return {
    orderListId: listId,
    contingencyType: 'OCO',
    listStatusType: done ? 'ALL_DONE' : 'EXEC_STARTED',
    listOrderStatus: done ? 'ALL_DONE' : 'EXECUTING',
    listClientOrderId: ids.listClientOrderId,
    transactionTime: ms(limit.placed_at),
    symbol: limit.symbol,
    orders: ordered.map(({ leg, clientOrderId }) => ({
      symbol: leg.symbol,
      orderId: leg.order_id,
      clientOrderId,
    })),
    orderReports: reports,
  };
};

/** A cancelled order (`DELETE /order`, each of `DELETE /openOrders`): the order as it was, now CANCELED. */
export const cancelledOut = (
  row: OrderRow,
  clientOrderId: string | undefined,
  cancelledAt: Date | string,
) => {
  const o = orderOut(row, clientOrderId);
  return {
    symbol: o.symbol,
    origClientOrderId: o.clientOrderId,
    orderId: o.orderId,
    orderListId: o.orderListId,
    clientOrderId: o.clientOrderId,
    transactTime: ms(cancelledAt),
    price: o.price,
    origQty: o.origQty,
    executedQty: o.executedQty,
    cummulativeQuoteQty: o.cummulativeQuoteQty,
    status: 'CANCELED',
    timeInForce: o.timeInForce,
    type: o.type,
    side: o.side,
    ...(row.trigger_price ? { stopPrice: o.stopPrice } : {}),
    selfTradePreventionMode: 'NONE',
  };
};

/** Binance's order of a list's orders: a bracket's entry, then the stop leg, then the take-profit (as placed). */
const ROLE_ORDER: Record<string, number> = { entry: 0, stop_loss: 1, take_profit: 2 };

/**
 * The list's status in Binance's two enums (Spot API "ENUM definitions": `listStatusType` RESPONSE, EXEC_STARTED,
 * ALL_DONE; `listOrderStatus` EXECUTING, ALL_DONE, REJECT): executing while any order is open, rejected when every
 * order was, else done.
 */
const listStatusOf = (rows: readonly OrderRow[]) => {
  if (rows.some((r) => r.status === 'pending' || r.status === 'partially_filled')) {
    return { listStatusType: 'EXEC_STARTED', listOrderStatus: 'EXECUTING' };
  }
  if (rows.every((r) => r.status === 'rejected'))
    return { listStatusType: 'RESPONSE', listOrderStatus: 'REJECT' };
  return { listStatusType: 'ALL_DONE', listOrderStatus: 'ALL_DONE' };
};

/**
 * An order list as `GET /orderList`, `allOrderList` and `openOrderList` show it (Binance's shape), from its orders
 * (at least one): `orderListId` the venue's list id, `contingencyType` `OCO` (an OCO, or the exits a bracket placed
 * are an OCO within it: the bracket is Binance's `OTO`), `listClientOrderId` the one the list was placed with (else
 * the list id), `transactionTime` the list's last change, `orders` entry first, then the stop and take-profit.
 */
export const orderListOut = (rows: readonly OrderRow[]) => {
  const first = rows[0];
  if (!first?.order_list_id) throw new Error('an order list needs at least one order of a list');
  const sorted = [...rows].sort(
    (a, b) => (ROLE_ORDER[a.list_role ?? ''] ?? 3) - (ROLE_ORDER[b.list_role ?? ''] ?? 3) || a.seq - b.seq,
  );
  return {
    orderListId: first.order_list_id,
    contingencyType: first.list_kind === 'bracket' ? 'OTO' : 'OCO',
    ...listStatusOf(rows),
    listClientOrderId: rows.find((r) => r.list_client_order_id)?.list_client_order_id ?? first.order_list_id,
    transactionTime: Math.max(...rows.map((r) => ms(r.updated_at))),
    symbol: first.symbol,
    orders: sorted.map((r) => ({
      symbol: r.symbol,
      orderId: r.order_id,
      clientOrderId: r.client_order_id ?? r.order_id,
    })),
  };
};

/**
 * The answer of `DELETE /orderList`: the list after its cancel ({@link orderListOut}) with `orderReports`, each of
 * its orders as `DELETE /order` answers one, with its status now (`CANCELED`; an order that had filled before keeps
 * `FILLED`).
 */
export const cancelledListOut = (rows: readonly OrderRow[]) => {
  const list = orderListOut(rows);
  const byId = new Map(rows.map((r) => [r.order_id, r]));
  return {
    ...list,
    orderReports: list.orders.map(({ orderId }) => {
      const row = byId.get(orderId)!;
      return {
        ...cancelledOut(row, undefined, row.cancelled_at ?? row.updated_at),
        status: statusOf(row.status, row.cancel_reason),
      };
    }),
  };
};

// --- WebSocket market streams (Binance "WebSocket Streams for Binance"): each event's payload ---

/** A `<symbol>@trade` event from one public trade of the feed. */
export const tradeEvent = (symbol: string, t: RecentTrade, eventTime: number) => ({
  e: 'trade',
  E: eventTime,
  s: symbol,
  t: t.tradeId,
  p: t.price,
  q: t.quantity,
  T: Math.floor(t.time),
  m: t.isBuyerMaker,
  M: true,
});

/** A `<symbol>@aggTrade` event: each public trade is its own aggregate (as `GET /aggTrades`). */
export const aggTradeEvent = (symbol: string, t: RecentTrade, eventTime: number) => ({
  e: 'aggTrade',
  E: eventTime,
  s: symbol,
  ...aggTrade(t),
});

/** A `<symbol>@kline_<interval>` event: the candle so far (`x` false) or its final state (`x` true). */
export const klineEvent = (
  symbol: string,
  c: Candle,
  interval: Interval,
  closed: boolean,
  eventTime: number,
) => ({
  e: 'kline',
  E: eventTime,
  s: symbol,
  k: {
    t: c.openTime,
    T: closeTimeOf(c.openTime, interval),
    s: symbol,
    i: interval,
    f: -1,
    L: -1,
    o: c.open,
    c: c.close,
    h: c.high,
    l: c.low,
    v: c.volume,
    n: c.tradeCount ?? 0,
    x: closed,
    q: c.quoteVolume ?? d8(dec(c.volume).times(c.close)),
    V: ZERO8,
    Q: ZERO8,
    B: '0',
  },
});

/** A `<symbol>@ticker` event (`24hrTicker`) from the rolling 24h ticker and the synthetic book's top. */
export const tickerEvent = (
  t: Ticker,
  top: { bid: [string, string]; ask: [string, string] } | undefined,
  eventTime: number,
) => {
  const full = ticker24hr(t, top);
  return {
    e: '24hrTicker',
    E: eventTime,
    s: t.symbol,
    p: full.priceChange,
    P: full.priceChangePercent,
    w: full.weightedAvgPrice,
    x: full.prevClosePrice,
    c: full.lastPrice,
    Q: full.lastQty,
    b: full.bidPrice,
    B: full.bidQty,
    a: full.askPrice,
    A: full.askQty,
    o: full.openPrice,
    h: full.highPrice,
    l: full.lowPrice,
    v: full.volume,
    q: full.quoteVolume,
    O: full.openTime,
    C: full.closeTime,
    F: -1,
    L: -1,
    n: full.count,
  };
};

/** A `<symbol>@miniTicker` event (`24hrMiniTicker`). */
export const miniTickerEvent = (t: Ticker, eventTime: number) => ({
  e: '24hrMiniTicker',
  E: eventTime,
  s: t.symbol,
  c: t.close,
  o: t.open,
  h: t.high,
  l: t.low,
  v: t.volume,
  q: t.quoteVolume,
});

/** A `<symbol>@bookTicker` event: the synthetic book's top (`u`: the book's update id). */
export const bookTickerEvent = (
  symbol: string,
  updateId: number,
  top: { bid: [string, string]; ask: [string, string] },
) => ({
  u: updateId,
  s: symbol,
  b: top.bid[0],
  B: top.bid[1],
  a: top.ask[0],
  A: top.ask[1],
});

/** A `depthUpdate` event: the levels that changed between update ids `first` and `last` (quantity 0: removed). */
export const depthUpdateEvent = (
  symbol: string,
  first: number,
  last: number,
  bids: [string, string][],
  asks: [string, string][],
  eventTime: number,
) => ({ e: 'depthUpdate', E: eventTime, s: symbol, U: first, u: last, b: bids, a: asks });

// --- User data stream (Binance "User Data Streams"): executionReport and outboundAccountPosition ---

/** An `executionReport` event of an order update of the user data stream (its figures include the update's fill). */
export const executionReport = (u: OrderUpdate, eventTime: number) => {
  const { order, fill } = u;
  const open = u.status === 'pending' || u.status === 'partially_filled';
  return {
    e: 'executionReport',
    E: eventTime,
    s: order.symbol,
    c: order.clientOrderId ?? order.orderId,
    S: side(order.side),
    o: BINANCE_TYPE[order.type],
    f: order.timeInForce,
    q: d8(order.quantity),
    p: d8(order.price),
    P: d8(order.triggerPrice),
    F: ZERO8,
    // An OCO leg's list, as `orderListId` elsewhere; -1 for a lone order.
    g: order.orderListId ?? -1,
    C: '',
    x: u.execution,
    X: u.execution === 'EXPIRED' ? 'EXPIRED' : STATUS[u.status],
    r: u.execution === 'EXPIRED' ? 'NONE' : (u.reason ?? 'NONE'),
    i: order.orderId,
    l: d8(fill?.quantity),
    z: d8(order.executedQty),
    L: d8(fill?.executed_price),
    n: d8(fill?.fee),
    N: fill ? 'USDT' : null,
    T: u.at,
    t: fill ? fill.trade_id : -1,
    I: 0,
    w: open && (order.type === 'limit' || order.type === 'market'),
    m: fill
      ? isMakerFill({ liquidity: fill.liquidity, trigger: fill.trigger, slippagePct: fill.slippage_pct })
      : false,
    M: false,
    O: order.placedAt,
    Z: d8(order.executedQuote),
    Y: fill ? d8(fill.notional) : ZERO8,
    Q: ZERO8,
    W: order.placedAt,
    V: 'NONE',
  };
};

/** An `outboundAccountPosition` event: the balances of the assets an event may have changed. */
export const accountPosition = (
  lines: readonly { asset: string; available: string; locked: string }[],
  updatedAt: number,
  eventTime: number,
) => ({
  e: 'outboundAccountPosition',
  E: eventTime,
  u: updatedAt,
  B: lines.map((b) => ({ a: b.asset, f: d8(b.available), l: d8(b.locked) })),
});
