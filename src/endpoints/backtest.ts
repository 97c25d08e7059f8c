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
import type { Call } from '../application/call';
import {
  backtestRequestOf,
  balanceResponse,
  batchBody,
  bestQuery,
  bestResponse,
  cancelResponse,
  candlesQuery,
  candlesResponse,
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
import { endpoint } from './endpoint';

/** An endpoint on one session (`/backtest/{id}/...`) whose use case takes only the session id. */
const onSession = <O extends z.ZodType>(
  output: O,
  useCase: (call: Call, id: string) => Promise<z.input<O>>,
) => endpoint({ input: sessionParams, output, run: (call, a) => useCase(call, a.id) });

/**
 * The backtest endpoints (spec "Backtest endpoints"; ARCHITECTURE §9, §14b): sessions, the sandbox at a session's
 * virtual time and results. `/backtest/*` and the backtest MCP toolset serve these, each its use case of
 * `src/application/backtest/`. The REST door reads `symbols` (prices) and `sessions` (compare) as comma-separated
 * text and hands them here as the lists the MCP tools take.
 */
export const backtestEndpoints = {
  create: endpoint({
    input: createBody,
    output: createResponse,
    run: (call, b) => createBacktest(call, backtestRequestOf(b)),
  }),
  start: onSession(startResponse, startBacktest),
  step: onSession(stepResponse, (call, id) => stepBacktest(call, id, 1)),
  stepBatch: endpoint({
    input: sessionParams.extend(batchBody.shape),
    output: stepResponse,
    run: (call, a) => stepBacktest(call, a.id, a.steps),
  }),
  cancel: onSession(cancelResponse, cancelBacktest),
  status: onSession(statusResponse, backtestStatus),

  placeOrder: endpoint({
    input: sessionParams.extend(placeOrderBody.shape).strict(),
    output: placedOrderResponse,
    run: (call, { id, ...body }) => placeSandboxOrder(call, id, orderInputOf(body)),
  }),
  placeOco: endpoint({
    input: sessionParams.extend(placeOcoBody.shape).strict(),
    output: ocoResponse,
    run: (call, { id, ...body }) => placeSandboxOco(call, id, ocoInputOf(body)),
  }),
  cancelOrder: endpoint({
    input: sessionOrderParams,
    output: sandboxCancelResponse,
    run: async (call, a) => cancelOut(await cancelSandboxOrder(call, a.id, a.order_id)),
  }),
  orders: endpoint({
    input: sessionParams.extend(ordersQuery.shape),
    output: ordersResponse,
    run: (call, { id, ...q }) => sandboxOrders(call, id, q),
  }),
  order: endpoint({
    input: sessionOrderParams,
    output: sandboxOrderDetail,
    run: (call, a) => sandboxOrder(call, a.id, a.order_id),
  }),
  openOrders: endpoint({
    input: sessionParams.extend(openOrdersQuery.shape),
    output: ordersResponse,
    run: (call, { id, ...q }) => openSandboxOrders(call, id, q),
  }),
  fills: endpoint({
    input: sessionParams.extend(historyQuery.shape),
    output: historyResponse,
    run: (call, { id, ...q }) => sandboxFills(call, id, q),
  }),
  price: endpoint({
    input: sessionSymbolParams,
    output: priceResponse,
    run: (call, a) => sandboxPrice(call, a.id, a.symbol),
  }),
  prices: endpoint({
    input: sessionParams.extend({ symbols: z.array(symbolInput).min(1).max(100).optional() }),
    output: pricesResponse,
    run: (call, a) => sandboxPrices(call, a.id, a.symbols),
  }),
  ticker: endpoint({
    input: sessionSymbolParams,
    output: tickerResponse,
    run: (call, a) => sandboxTicker(call, a.id, a.symbol),
  }),
  candles: endpoint({
    input: sessionSymbolParams.extend(candlesQuery.shape),
    output: candlesResponse,
    run: (call, a) =>
      sandboxCandles(call, a.id, a.symbol, {
        interval: a.interval,
        startTime: a.start_time,
        endTime: a.end_time,
        limit: a.limit,
      }),
  }),
  indicators: endpoint({
    input: sessionSymbolParams.extend(indicatorsQuery.shape),
    output: sandboxIndicatorsResponse,
    run: (call, { id, symbol, ...q }) => sandboxIndicators(call, id, symbol, q),
  }),
  balance: onSession(balanceResponse, sandboxBalance),
  positions: onSession(positionsResponse, sandboxPositions),
  portfolio: onSession(portfolioResponse, sandboxPortfolio),

  results: onSession(resultsResponse, backtestResults),
  equityCurve: endpoint({
    input: sessionParams.extend(pageQuery(10_000, 1_000).shape),
    output: equityCurveResponse,
    run: (call, { id, ...q }) => backtestEquityCurve(call, id, q),
  }),
  trades: endpoint({
    input: sessionParams.extend(tradesQuery.shape),
    output: tradesResponse,
    run: (call, { id, ...q }) => backtestTradeLog(call, id, q),
  }),
  list: endpoint({
    input: listQuery,
    output: listResponse,
    run: (call, q) =>
      listBacktests(call, {
        strategyLabel: q.strategy_label,
        status: q.status,
        sortBy: q.sort_by,
        limit: q.limit,
        offset: q.offset,
      }),
  }),
  compare: endpoint({
    input: z.object({ sessions: z.array(z.string().min(1).max(100)).min(1).max(20) }),
    output: compareResponse,
    run: (call, a) => compareBacktests(call, a.sessions),
  }),
  best: endpoint({
    input: bestQuery,
    output: bestResponse,
    run: (call, a) => bestBacktestOf(call, a.metric, a.strategy_label),
  }),
};
