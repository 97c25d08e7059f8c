import { z } from 'zod';
import {
  backtestEquityCurve,
  backtestResults,
  backtestTradeLog,
  bestBacktestOf,
  compareBacktests,
  listBacktests,
} from '../application/backtest/results';
import {
  cancelSandboxOrder,
  openSandboxOrders,
  placeSandboxOco,
  placeSandboxOrder,
  sandboxBalance,
  sandboxCandles,
  sandboxFills,
  sandboxIndicators,
  sandboxOrder,
  sandboxOrders,
  sandboxPortfolio,
  sandboxPositions,
  sandboxPrice,
  sandboxPrices,
  sandboxTicker,
} from '../application/backtest/sandbox';
import {
  backtestStatus,
  cancelBacktest,
  createBacktest,
  startBacktest,
  stepBacktest,
} from '../application/backtest/sessions';
import {
  backtestRequestOf,
  balanceResponse,
  batchBody,
  bestQuery,
  bestResponse,
  cancelResponse,
  candlesQuery,
  candlesResponse,
  compareQuery,
  compareResponse,
  createBody,
  createResponse,
  equityCurveResponse,
  historyQuery,
  historyResponse,
  listQuery,
  listResponse,
  openOrdersQuery,
  ordersQuery,
  ordersResponse,
  pageQuery,
  portfolioResponse,
  positionsResponse,
  priceResponse,
  pricesQuery,
  pricesResponse,
  resultsResponse,
  sandboxCancelResponse,
  sandboxOrderDetail,
  sessionOrderParams,
  sessionParams,
  sessionSymbolParams,
  startResponse,
  statusResponse,
  stepResponse,
  tickerResponse,
  tradesQuery,
  tradesResponse,
} from '../contract/backtest';
import { indicatorsQuery, sandboxIndicatorsResponse } from '../contract/indicators';
import {
  ocoInputOf,
  ocoResponse,
  orderInputOf,
  placedOrderResponse,
  placeOcoBody,
  placeOrderBody,
  symbolInput,
} from '../contract/trading';
import { cancelOut } from '../trading/present';
import { endpoint, onResource, onResourceQuery, served } from './endpoint';

/** An endpoint on one session (`method /backtest/{id}/{what}`) whose use case takes only the session id. */
const onSession = onResource(sessionParams, '/backtest/:id/');

/** A read of one session with a query (`GET /backtest/{id}/{what}?…`): its use case takes the id and the query. */
const onSessionQuery = onResourceQuery(sessionParams, '/backtest/:id/');

/** The query of the equity curve: a page of up to 10,000 points (default 1,000). */
const equityCurveQuery = pageQuery(10_000, 1_000);

/**
 * The backtest endpoints (spec "Backtest endpoints"; ARCHITECTURE §9, §14b): sessions, the sandbox at a session's
 * virtual time and results. `/backtest/*` and the backtest MCP toolset serve these, each its use case of
 * `src/application/backtest/`. The REST door reads `symbols` (prices) and `sessions` (compare) as comma-separated
 * text and hands them here as the lists the MCP tools take.
 */
export const backtestEndpoints = {
  create: served({ method: 'POST', path: '/backtest/create', body: createBody }, createResponse, (call, b) =>
    createBacktest(call, backtestRequestOf(b)),
  ),
  start: onSession('POST', 'start', startResponse, startBacktest),
  step: onSession('POST', 'step', stepResponse, (call, id) => stepBacktest(call, id, 1)),
  stepBatch: served(
    { method: 'POST', path: '/backtest/:id/step/batch', params: sessionParams, body: batchBody },
    stepResponse,
    (call, a) => stepBacktest(call, a.id, a.steps),
  ),
  cancel: onSession('POST', 'cancel', cancelResponse, cancelBacktest),
  status: onSession('GET', 'status', statusResponse, backtestStatus),

  placeOrder: served(
    {
      method: 'POST',
      path: '/backtest/:id/trade/order',
      status: 201,
      params: sessionParams,
      body: placeOrderBody,
    },
    placedOrderResponse,
    (call, { id, ...body }) => placeSandboxOrder(call, id, orderInputOf(body)),
    { strict: true },
  ),
  placeOco: served(
    {
      method: 'POST',
      path: '/backtest/:id/trade/order/oco',
      status: 201,
      params: sessionParams,
      body: placeOcoBody,
    },
    ocoResponse,
    (call, { id, ...body }) => placeSandboxOco(call, id, ocoInputOf(body)),
    { strict: true },
  ),
  cancelOrder: served(
    { method: 'DELETE', path: '/backtest/:id/trade/order/:order_id', params: sessionOrderParams },
    sandboxCancelResponse,
    async (call, a) => cancelOut(await cancelSandboxOrder(call, a.id, a.order_id)),
  ),
  orders: onSessionQuery('trade/orders', ordersQuery, ordersResponse, sandboxOrders),
  order: served(
    { method: 'GET', path: '/backtest/:id/trade/order/:order_id', params: sessionOrderParams },
    sandboxOrderDetail,
    (call, a) => sandboxOrder(call, a.id, a.order_id),
  ),
  openOrders: onSessionQuery('trade/orders/open', openOrdersQuery, ordersResponse, openSandboxOrders),
  fills: onSessionQuery('trade/history', historyQuery, historyResponse, sandboxFills),
  price: served(
    { method: 'GET', path: '/backtest/:id/market/price/:symbol', params: sessionSymbolParams },
    priceResponse,
    (call, a) => sandboxPrice(call, a.id, a.symbol),
  ),
  prices: endpoint({
    route: {
      method: 'GET',
      path: '/backtest/:id/market/prices',
      params: sessionParams,
      querystring: pricesQuery,
    },
    input: sessionParams.extend({ symbols: z.array(symbolInput).min(1).max(100).optional() }),
    output: pricesResponse,
    run: (call, a) => sandboxPrices(call, a.id, a.symbols),
  }),
  ticker: served(
    { method: 'GET', path: '/backtest/:id/market/ticker/:symbol', params: sessionSymbolParams },
    tickerResponse,
    (call, a) => sandboxTicker(call, a.id, a.symbol),
  ),
  candles: served(
    {
      method: 'GET',
      path: '/backtest/:id/market/candles/:symbol',
      params: sessionSymbolParams,
      querystring: candlesQuery,
    },
    candlesResponse,
    (call, a) =>
      sandboxCandles(call, a.id, a.symbol, {
        interval: a.interval,
        startTime: a.start_time,
        endTime: a.end_time,
        limit: a.limit,
      }),
  ),
  indicators: served(
    {
      method: 'GET',
      path: '/backtest/:id/market/indicators/:symbol',
      params: sessionSymbolParams,
      querystring: indicatorsQuery,
    },
    sandboxIndicatorsResponse,
    (call, { id, symbol, ...q }) => sandboxIndicators(call, id, symbol, q),
  ),
  balance: onSession('GET', 'account/balance', balanceResponse, sandboxBalance),
  positions: onSession('GET', 'account/positions', positionsResponse, sandboxPositions),
  portfolio: onSession('GET', 'account/portfolio', portfolioResponse, sandboxPortfolio),

  results: onSession('GET', 'results', resultsResponse, backtestResults),
  equityCurve: onSessionQuery(
    'results/equity-curve',
    equityCurveQuery,
    equityCurveResponse,
    backtestEquityCurve,
  ),
  trades: onSessionQuery('results/trades', tradesQuery, tradesResponse, backtestTradeLog),
  list: served({ method: 'GET', path: '/backtest/list', querystring: listQuery }, listResponse, (call, q) =>
    listBacktests(call, {
      strategyLabel: q.strategy_label,
      status: q.status,
      sortBy: q.sort_by,
      limit: q.limit,
      offset: q.offset,
    }),
  ),
  compare: endpoint({
    route: { method: 'GET', path: '/backtest/compare', querystring: compareQuery },
    input: z.object({ sessions: z.array(z.string().min(1).max(100)).min(1).max(20) }),
    output: compareResponse,
    run: (call, a) => compareBacktests(call, a.sessions),
  }),
  best: served({ method: 'GET', path: '/backtest/best', querystring: bestQuery }, bestResponse, (call, a) =>
    bestBacktestOf(call, a.metric, a.strategy_label),
  ),
};
