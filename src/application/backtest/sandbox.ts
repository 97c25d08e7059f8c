import type { LoadedSession } from '../../../commands/backtest';
import { closedCandlesBetween, lastClosed, type SessionMarket } from '../../../domain/backtest/market';
import type { Candle } from '../../../domain/market/candle';
import { INTERVAL_MS, isInterval, unsupportedInterval } from '../../../domain/market/intervals';
import { normalizeSymbol } from '../../../domain/market/pair';
import { DomainError } from '../../../domain/shared/errors';
import type { OrderSide } from '../../../domain/trading/orders';
import type { WalletEvent } from '../../../domain/wallet/events';
import { balanceOut, candleOut, portfolioOut, tickerOut } from '../../backtest/present';
import { parseIndicators } from '../../market/indicators';
import { parseQueryTime } from '../../market/query-time';
import { ocoPlacementOut } from '../../trading/present';
import { type Call, timed } from '../call';
import { commandMeta } from '../caller';
import { type IndicatorsRequest, indicatorInterval, indicatorsOver } from '../indicators';
import { outsideSandboxPairs, type SandboxPlacement, sandboxPlacement } from '../sandbox-orders';
import { type OrderInput, orderIdOf } from '../trading';
import { backtestCaller, backtestCommands, ownedSession, recordSessionWrite } from './sessions';

/**
 * The backtest sandbox (spec "Backtest endpoints", sandbox): the live trading rules, market data and account
 * figures of one session at its virtual time (only candles closed by then). Reads come from the in-memory session
 * (its state is the fold of its stream), so they need no read model.
 */

const iso = (v: number): string => new Date(v).toISOString();

/**
 * The session's candles for a read at virtual time; `BACKTEST_INVALID_STATE` for a session whose virtual clock
 * never started (`created`, `failed`, or cancelled before its start): it has no sandbox wallet and no virtual
 * time to read at. The session's status decides, not whether its candles happen to be in memory.
 */
const requireMarket = (session: LoadedSession): SessionMarket => {
  if (session.state.startedAt === null || !session.market) {
    const status = session.state.status;
    throw new DomainError(
      'BACKTEST_INVALID_STATE',
      status === 'created'
        ? 'the session is created: its virtual clock has not started (POST /backtest/{id}/start first)'
        : `the session is ${status} and was never started: it has no sandbox to read`,
      { status },
    );
  }
  return session.market;
};

const requireSymbol = (market: SessionMarket, raw: string): string => {
  const symbol = normalizeSymbol(raw);
  if (!market.bySymbol.has(symbol)) {
    throw new DomainError('INVALID_SYMBOL', `${symbol} is not a pair of this backtest session`, { symbol });
  }
  return symbol;
};

/** A session of the caller with its candles, and its virtual time (ms). */
const marketSession = async (call: Call, id: string) => {
  const session = await ownedSession(call, id, { market: true });
  return { session, market: requireMarket(session), at: session.state.virtualTime };
};

/**
 * A sandbox order: the live order rules and risk chain at virtual time. Market orders fill at the close of the
 * last candle closed by then (with slippage and fee); others wait for the candles of later steps. A rejection is
 * recorded and thrown as the violated rule's error. An archived agent's session is refused first, whatever the
 * credential (`PERMISSION_DENIED` 403 `agent_archived`, asked by the command handler), and nothing is recorded.
 */
export const placeSandboxOrder = async (
  call: Call,
  id: string,
  input: OrderInput,
): Promise<SandboxPlacement> =>
  sandboxPlacement((await placeInSandbox(call, id, input)).events, 'the sandbox order');

/** Places an order (or an order list) in the session's sandbox through the decider; the outcome's events. */
const placeInSandbox = async (call: Call, id: string, input: OrderInput) => {
  const symbol = normalizeSymbol(input.symbol);
  const outcome = await timed(call, 'command', () =>
    backtestCommands(call)
      .placeOrder(backtestCaller(call), id, { ...input, symbol }, commandMeta(call))
      .catch(
        outsideSandboxPairs(
          call,
          symbol,
          'this backtest session (see its pairs in GET /backtest/{id}/status)',
        ),
      ),
  );
  recordSessionWrite(call, outcome);
  return outcome;
};

/**
 * A sandbox OCO (`input.list.kind === 'oco'`, docs/trading-rules.md "Order lists: OCO and bracket"): placed like
 * {@link placeSandboxOrder}, answered with the list and both legs.
 */
export const placeSandboxOco = async (call: Call, id: string, input: OrderInput) => {
  const outcome = await placeInSandbox(call, id, input);
  return ocoPlacementOut(outcome.events as WalletEvent[]);
};

/**
 * Cancels an open sandbox order (pending or partly filled; its id in either case); its whole remaining lock is
 * released. Allowed for an archived agent's session, as a live cancel is.
 */
export const cancelSandboxOrder = async (call: Call, id: string, orderId: string) => {
  const outcome = await backtestCommands(call).cancelOrder(
    backtestCaller(call),
    id,
    orderIdOf(orderId),
    commandMeta(call),
  );
  recordSessionWrite(call, outcome);
  const c = outcome.events.find((e) => e.type === 'OrderCancelled');
  if (c?.type !== 'OrderCancelled') throw new DomainError('INTERNAL_ERROR', 'nothing was cancelled');
  return c.data;
};

/**
 * A page of a newest-first list as every door answers it (the contract's `ordersResponse`/`historyResponse`):
 * the page's rows under `key`, the length of the whole filtered list as `total`, and the `limit` and `offset`
 * asked for.
 */
const newestPage = <K extends string, T>(
  key: K,
  all: readonly T[],
  page: { limit: number; offset: number },
): Record<K, T[]> & { total: number; limit: number; offset: number } => {
  const rows = all
    .slice()
    .reverse()
    .slice(page.offset, page.offset + page.limit);
  return { [key]: rows, total: all.length, limit: page.limit, offset: page.offset } as Record<K, T[]> & {
    total: number;
    limit: number;
    offset: number;
  };
};

/** Sandbox orders in `statuses` (all when undefined) and of `symbol`, newest first. */
const ordersIn = async (
  call: Call,
  id: string,
  statuses: readonly string[] | undefined,
  q: { symbol?: string | undefined; limit: number; offset: number },
) => {
  const session = await ownedSession(call, id);
  const symbol = q.symbol ? normalizeSymbol(q.symbol) : undefined;
  return newestPage(
    'orders',
    session.log.orders.filter(
      (o) => (!statuses || statuses.includes(o.status)) && (!symbol || o.symbol === symbol),
    ),
    q,
  );
};

/** Sandbox orders, newest first, filtered by status and symbol: `{ orders, total, limit, offset }`. */
export const sandboxOrders = (
  call: Call,
  id: string,
  q: { status?: string | undefined; symbol?: string | undefined; limit: number; offset: number },
) => ordersIn(call, id, q.status ? [q.status] : undefined, q);

/**
 * Open sandbox orders (pending, and partly filled ones still working), newest first (optionally of one symbol):
 * `{ orders, total, limit, offset }`.
 */
export const openSandboxOrders = (
  call: Call,
  id: string,
  q: { symbol?: string | undefined; limit: number; offset: number },
) => ordersIn(call, id, ['pending', 'partially_filled'], q);

/**
 * One sandbox order with its fills, oldest first (`GET /backtest/{id}/trade/order/{order_id}`, like the live
 * `GET /trade/order/{id}`); `ORDER_NOT_FOUND` 404 when the session has no such order.
 */
export const sandboxOrder = async (call: Call, id: string, rawOrderId: string) => {
  const session = await ownedSession(call, id);
  const orderId = orderIdOf(rawOrderId);
  const order = session.log.order(orderId);
  if (!order) throw new DomainError('ORDER_NOT_FOUND', 'order not found', { order_id: orderId });
  return { ...order, fills: session.log.fillsOf(orderId) };
};

/** Sandbox fills, newest first, filtered by symbol and side: `{ trades, total, limit, offset }`. */
export const sandboxFills = async (
  call: Call,
  id: string,
  q: { symbol?: string | undefined; side?: OrderSide | undefined; limit: number; offset: number },
) => {
  const session = await ownedSession(call, id);
  const symbol = q.symbol ? normalizeSymbol(q.symbol) : undefined;
  return newestPage(
    'trades',
    session.log.fills.filter((f) => (!symbol || f.symbol === symbol) && (!q.side || f.side === q.side)),
    q,
  );
};

/** The price at virtual time: the close of the last candle closed by then (forward-filled). */
export const sandboxPrice = async (call: Call, id: string, rawSymbol: string) => {
  const { market, at } = await marketSession(call, id);
  const symbol = requireSymbol(market, rawSymbol);
  const c = lastClosed(market, symbol, at);
  if (!c)
    throw new DomainError('PRICE_NOT_AVAILABLE', `no ${symbol} candle has closed by virtual time`, {
      symbol,
    });
  return { symbol, price: c.close, timestamp: iso(c.openTime + market.intervalMs), virtual_time: iso(at) };
};

/** Prices of the session's pairs (or of `symbols`, each a pair of the session) at virtual time. */
export const sandboxPrices = async (call: Call, id: string, symbols?: readonly string[]) => {
  const { market, at } = await marketSession(call, id);
  const wanted =
    symbols === undefined ? market.series.map((s) => s.symbol) : symbols.map((s) => requireSymbol(market, s));
  const prices: Record<string, string> = {};
  for (const symbol of wanted) {
    const c = lastClosed(market, symbol, at);
    if (c) prices[symbol] = c.close;
  }
  return { prices, timestamp: iso(at), count: Object.keys(prices).length };
};

/** 24 h statistics at virtual time (the candles closed in the 24 hours before it). */
export const sandboxTicker = async (call: Call, id: string, rawSymbol: string) => {
  const { market, at } = await marketSession(call, id);
  return tickerOut(market, requireSymbol(market, rawSymbol), at);
};

/** A time of a sandbox candle query: as on `GET /market/candles`, ISO 8601 or epoch milliseconds. */
const queryTime = (value: string | undefined, field: string): number | undefined => {
  if (value === undefined || value === '') return undefined;
  const ms = parseQueryTime(value);
  if (ms === undefined) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `${field} must be an ISO 8601 UTC time (or epoch milliseconds)`,
      {
        field,
      },
    );
  }
  return ms;
};

/**
 * Candles closed at or before virtual time, oldest first: `interval` defaults to the session's (any the data has);
 * `startTime`/`endTime` bound the open time (inclusive); without `startTime` the newest `limit`. A candle still
 * open at virtual time is never returned. The live candle endpoint's errors: an unsupported interval is
 * `INVALID_SYMBOL` 400, a bad time or a start after the end `VALIDATION_ERROR` 422.
 */
export const sandboxCandles = async (
  call: Call,
  id: string,
  rawSymbol: string,
  q: {
    interval?: string | undefined;
    startTime?: string | undefined;
    endTime?: string | undefined;
    limit: number;
  },
) => {
  const { session, market, at } = await marketSession(call, id);
  const symbol = requireSymbol(market, rawSymbol);
  const interval = q.interval ?? session.state.config!.interval;
  if (!isInterval(interval)) throw unsupportedInterval(interval);
  const start = queryTime(q.startTime, 'start_time');
  const end = queryTime(q.endTime, 'end_time');
  if (start !== undefined && end !== undefined && start > end) {
    throw new DomainError('VALIDATION_ERROR', 'start_time is after end_time', { field: 'start_time' });
  }
  let list: readonly Candle[];
  if (interval === market.interval) {
    // Only the page's candles are made into objects (a session's window may hold millions).
    list = closedCandlesBetween(market, symbol, at, start ?? 0, end ?? Number.MAX_SAFE_INTEGER, {
      limit: q.limit,
      newest: start === undefined,
    });
  } else {
    // Another interval, from the market's candle index: the open times allowed are those closed by the virtual
    // time (open + interval ≤ at) and inside the bounds; paged like the live endpoint (without `start_time` the
    // newest `limit` up to the last allowed open time, whatever the gaps).
    const lastOpen = Math.min(end ?? Number.MAX_SAFE_INTEGER, at - INTERVAL_MS[interval]);
    list =
      start !== undefined && start > lastOpen
        ? []
        : (call.services.market?.candles(symbol, interval, {
            ...(start !== undefined ? { start } : {}),
            end: lastOpen,
            limit: q.limit,
          }) ?? []);
  }
  const page = start === undefined ? list.slice(Math.max(0, list.length - q.limit)) : list.slice(0, q.limit);
  return { symbol, interval, candles: page.map(candleOut), count: page.length, virtual_time: iso(at) };
};

/**
 * Indicators of a session pair at virtual time (issue 17, item 10): computed like the live ones over the newest
 * `limit` candles of `interval` (default: the session's) **closed by the virtual time** — no candle that closes
 * after it is read, so a strategy sees what it could have seen then. Candles before the session's start count
 * (they were closed then too). Errors as the sandbox candles, and `VALIDATION_ERROR` for a bad name or interval.
 */
export const sandboxIndicators = async (call: Call, id: string, rawSymbol: string, q: IndicatorsRequest) => {
  const { session, market, at } = await marketSession(call, id);
  const symbol = requireSymbol(market, rawSymbol);
  const interval = indicatorInterval(q.interval ?? session.state.config!.interval);
  parseIndicators(q.indicators); // refuse a bad name before reading candles
  // Open + interval ≤ virtual time: closed by then (the query's end is an inclusive open time).
  const lastOpen = at - INTERVAL_MS[interval];
  const candles = call.services.market?.candles(symbol, interval, { end: lastOpen, limit: q.limit }) ?? [];
  return { ...indicatorsOver(symbol, interval, candles, q.indicators), virtual_time: iso(at) };
};

/** Sandbox balances and equity at virtual time. */
export const sandboxBalance = async (call: Call, id: string) => {
  const { session, market } = await marketSession(call, id);
  return balanceOut(session, market);
};

/** Sandbox portfolio snapshot at virtual time. */
export const sandboxPortfolio = async (call: Call, id: string) => {
  const { session, market } = await marketSession(call, id);
  return portfolioOut(session, market);
};

/**
 * Sandbox positions at virtual time (`GET /backtest/{id}/account/positions`, tool `get_backtest_positions`): the
 * portfolio's positions with their unrealized PnL total (USDT) and the virtual time.
 */
export const sandboxPositions = async (call: Call, id: string) => {
  const p = await sandboxPortfolio(call, id);
  return { positions: p.positions, total_unrealized_pnl: p.unrealized_pnl, virtual_time: p.timestamp };
};
