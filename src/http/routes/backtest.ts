import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Caller, LoadedSession } from '../../../commands/backtest';
import type { BacktestEndedData } from '../../../domain/backtest/events';
import { closedCandlesBetween, lastClosed, type SessionMarket } from '../../../domain/backtest/market';
import type { Candle } from '../../../domain/market/candle';
import { INTERVAL_MS, INTERVALS, isInterval } from '../../../domain/market/intervals';
import { normalizeSymbol } from '../../../domain/market/pair';
import { parseIsoTime } from '../../../domain/market/time';
import { m, out8 } from '../../../domain/metrics/decimal';
import { drawdownSeries } from '../../../domain/metrics/drawdown';
import { DomainError } from '../../../domain/shared/errors';
import { dec, fmt, ZERO } from '../../../domain/trading/decimal';
import type { BacktestResults } from '../../../projections/backtests';
import {
  backtestTrades,
  bestBacktest,
  equityCurve,
  getBacktest,
  listBacktests,
} from '../../../queries/backtests';
import { assertAgentActive, type Principal, principalOf } from '../../auth/principal';
import { backtest } from '../../backtest/install';
import {
  balanceOut,
  candleOut,
  portfolioOut,
  statusOut,
  stepOut,
  summaryOut,
  tickerOut,
} from '../../backtest/present';
import { parseQueryTime } from '../../market/query-time';
import { decimalText, placementOut } from '../../trading/present';
import { awaitReadModels } from '../read-your-writes';
import {
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
  sessionOrderParams,
  sessionParams,
  sessionSymbolParams,
  startResponse,
  statusResponse,
  stepResponse,
  tickerResponse,
  tradesQuery,
  tradesResponse,
} from '../schemas/backtest';
import { errorResponses } from '../schemas/common';
import { filledOrderResponse, pendingOrderResponse, placeOrderBody } from '../schemas/trading';
import { requiredSymbols } from '../symbols-query';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['backtest'];
/** Every backtest route: API key or JWT (ARCHITECTURE §14b), the backtest rate-limit group (6,000/min). */
const config = { auth: 'key-or-jwt', rateLimitGroup: 'backtest' } as const;

const callerOf = (p: Principal): Caller => ({ accountId: p.accountId, agentId: p.agentId ?? null });
const metaOf = (p: Principal, requestId: string) => ({ actor: p.agentId ?? p.accountId, requestId });
const iso = (v: Date | string | number): string => new Date(v).toISOString();
const text = (v: string | null): string | null => (v === null ? null : fmt(dec(v)));

/**
 * The session's candles for a read at virtual time; `BACKTEST_INVALID_STATE` for a session whose virtual clock
 * never started (`created`, `failed`, or cancelled before its start): it has no sandbox wallet and no virtual
 * time to read at. The session's status decides, not whether its candles happen to be in memory (a refused step
 * or order on a `created` session loads them too).
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

/** An ISO 8601 time of the configuration (a day that does not exist is refused, not rolled over). */
const parseTime = (value: string | undefined, field: string): number | undefined => {
  if (value === undefined) return undefined;
  const ms = parseIsoTime(value);
  if (ms === undefined) {
    throw new DomainError('VALIDATION_ERROR', `${field} must be an ISO 8601 timestamp`, { field });
  }
  return ms;
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

/** The sentence of `GET /backtest/compare`: which session leads on return, risk-adjusted return and drawdown. */
const recommendation = (
  rows: { session_id: string; label: string; roi: string | null; sharpe: string | null; dd: string | null }[],
  best: { roi: string | null; sharpe: string | null; dd: string | null },
): string => {
  const name = (id: string | null) => {
    const r = rows.find((x) => x.session_id === id);
    return r ? (r.label ? `${r.session_id} (${r.label})` : r.session_id) : '';
  };
  if (!best.roi) return 'None of these sessions has results yet: complete or cancel them first.';
  const roi = rows.find((r) => r.session_id === best.roi)!;
  const parts = [`${name(best.roi)} has the highest return (ROI ${dec(roi.roi!).toFixed(2)}%)`];
  if (best.sharpe && best.sharpe === best.roi && best.dd === best.roi) {
    return `Prefer ${name(best.roi)}: it leads on return, risk-adjusted return and drawdown.`;
  }
  if (best.sharpe) {
    const s = rows.find((r) => r.session_id === best.sharpe)!;
    parts.push(
      best.sharpe === best.roi
        ? 'also the best risk-adjusted return'
        : `${name(best.sharpe)} the best risk-adjusted return (Sharpe ${dec(s.sharpe!).toFixed(2)})`,
    );
  }
  if (best.dd) {
    const d = rows.find((r) => r.session_id === best.dd)!;
    parts.push(`${name(best.dd)} the smallest drawdown (${dec(d.dd!).toFixed(2)}%)`);
  }
  const pick = best.sharpe ?? best.roi;
  return `${parts.join('; ')}. Prefer ${name(pick)}${best.sharpe ? ' for the best return per unit of risk' : ''}.`;
};

/**
 * A sandbox wallet knows only its session's pairs, so an order on a real pair outside them comes back from the
 * decider as "unknown symbol". Say what is wrong instead (same code, status and details; the rejection is
 * recorded as before).
 */
const outsideSessionPairs = (error: unknown, symbol: string, listed: boolean): unknown => {
  if (!listed || !(error instanceof DomainError) || error.code !== 'INVALID_SYMBOL') return error;
  if (error.details?.['symbol'] !== symbol || !/unknown symbol/.test(error.message)) return error;
  return new DomainError(
    'INVALID_SYMBOL',
    error.message.replace(
      `unknown symbol ${symbol}`,
      `${symbol} is not a pair of this backtest session (see its pairs in GET /backtest/{id}/status)`,
    ),
    { ...error.details, reason: 'not_in_session' },
    error.status,
  );
};

/**
 * The 24 backtest endpoints (spec "Backtest endpoints"; ARCHITECTURE §9, §14b). Sessions are event-sourced
 * (`backtest-{id}` streams, `commands/backtest.ts`); the sandbox reads its in-memory session at virtual time (only
 * candles closed by then), results and lists read the `backtests` read models. Every session endpoint checks that
 * the caller owns the session: unknown → `BACKTEST_NOT_FOUND` 404, another account's (or, with an agent
 * credential, another agent's) → `PERMISSION_DENIED` 403.
 */
export const backtestRoutes: FastifyPluginAsyncZod = async (app) => {
  const services = app.services;
  const db = () => services.database.db;
  const commands = () => backtest(services).commands;

  /** The session's read-model row once it reflects the session's current status and step (bounded wait). */
  const rowOf = async (session: LoadedSession) => {
    const fresh = (r: Awaited<ReturnType<typeof getBacktest>>) =>
      r !== undefined && r.status === session.state.status && r.step === session.state.step;
    let row = await getBacktest(db(), session.id);
    if (!fresh(row)) {
      const target = session.position ?? (await services.eventStore.headPosition());
      await services.projections.waitFor(target, services.config.READ_MODEL_WAIT_MS);
      row = await getBacktest(db(), session.id);
    }
    if (!row || !fresh(row)) {
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'the results of this session are being computed; retry shortly',
        {
          session_id: session.id,
        },
      );
    }
    return row;
  };

  const logPosition = (reply: FastifyReply, session: LoadedSession) => {
    if (session.position)
      reply.header('x-log-position', `${session.position.commit}/${session.position.prepare}`);
  };

  // ------------------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------------------

  app.post(
    '/backtest/create',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Create a backtest session (status `created`)',
        description:
          'Validates the configuration against the market data: `start_time` < `end_time` (at least one ' +
          'interval apart) inside the data range, `candle_interval` one of 1m 5m 15m 1h 4h 1d, `pairs` known ' +
          '(or null: every pair with data in the range), `agent_id` an agent of the caller (its risk profile is ' +
          'copied). Errors: `VALIDATION_ERROR` 422, `INVALID_SYMBOL` 400, `BACKTEST_NO_DATA` 400, `PERMISSION_DENIED` 403.',
        body: createBody,
        response: { 200: createResponse, ...errorResponses(400, 401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertAgentActive(principal);
      const b = request.body;
      const outcome = await commands().create(
        callerOf(principal),
        b.agent_id,
        {
          startTime: parseTime(b.start_time, 'start_time')!,
          endTime: parseTime(b.end_time, 'end_time')!,
          candleInterval: b.candle_interval,
          startingBalance:
            typeof b.starting_balance === 'number' ? b.starting_balance : decimalText(b.starting_balance),
          strategyLabel: b.strategy_label ?? null,
          pairs: b.pairs ?? null,
        },
        metaOf(principal, request.id),
      );
      await awaitReadModels(services, reply, outcome.position);
      const c = outcome.session.state.config!;
      return {
        session_id: outcome.session.id,
        status: 'created' as const,
        total_steps: c.totalSteps,
        estimated_pairs: c.pairs.length,
        pairs: c.pairs,
        candle_interval: c.interval,
        start_time: iso(c.startTime),
        end_time: iso(c.endTime),
        starting_balance: c.startingBalance,
        agent_id: c.agentId,
        strategy_label: c.strategyLabel,
        created_at: c.createdAt,
      };
    },
  );

  app.post(
    '/backtest/:id/start',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Load the candles into memory and start the virtual clock at start_time (status `running`)',
        description:
          'When the candles cannot be loaded the session is recorded as `failed` with the reason and the ' +
          'answer is `BACKTEST_NO_DATA` 400. A session that is not `created`: `BACKTEST_INVALID_STATE` 409.',
        params: sessionParams,
        response: { 200: startResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertAgentActive(principal);
      const outcome = await commands().start(
        callerOf(principal),
        request.params.id,
        metaOf(principal, request.id),
      );
      await awaitReadModels(services, reply, outcome.position);
      const s = outcome.session;
      if (s.state.status === 'failed') {
        throw new DomainError('BACKTEST_NO_DATA', s.state.failure ?? 'the session data could not be loaded', {
          session_id: s.id,
          status: 'failed',
        });
      }
      return {
        session_id: s.id,
        status: s.state.status!,
        total_steps: s.state.config!.totalSteps,
        virtual_time: iso(s.state.virtualTime),
        pairs: (s.market?.series ?? []).map((x) => ({ symbol: x.symbol, candles: x.candles.length })),
        failure_reason: s.state.failure,
      };
    },
  );

  const stepHandler = async (
    principal: Principal,
    id: string,
    steps: number,
    requestId: string,
    reply: FastifyReply,
  ) => {
    assertAgentActive(principal);
    const outcome = await commands().step(callerOf(principal), id, steps, metaOf(principal, requestId));
    const session = outcome.session;
    // Sandbox reads come from the in-memory session, so only the completing step waits for the read models
    // (results, list); other steps answer as soon as the step is durable (X-Log-Position names it).
    if (session.state.status === 'completed') await awaitReadModels(services, reply, outcome.position);
    else logPosition(reply, session);
    return stepOut(session, session.market!, outcome.events);
  };

  app.post(
    '/backtest/:id/step',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Advance one candle',
        description:
          'Virtual time moves to start_time + step × interval; pending orders are checked against each candle ' +
          'passed along its path (O→L→H→C when close ≥ open, else O→H→L→C). `prices` are the last candles closed ' +
          'by the new virtual time; `is_complete` is true on the last step (the session is then `completed`).',
        params: sessionParams,
        response: { 200: stepResponse, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    (request, reply) => stepHandler(principalOf(request), request.params.id, 1, request.id, reply),
  );

  app.post(
    '/backtest/:id/step/batch',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Advance N candles (1 to 100,000; clamped at the last step)',
        description:
          '`orders_filled` holds every fill of the batch, each on the candle that reached it; `prices` shows the ' +
          'final candles. The batch is one append (fills, then `BacktestStepped` with the equity of every step).',
        params: sessionParams,
        body: batchBody,
        response: { 200: stepResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    (request, reply) =>
      stepHandler(principalOf(request), request.params.id, request.body.steps, request.id, reply),
  );

  app.post(
    '/backtest/:id/cancel',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Abort a created or running session; partial results are saved',
        params: sessionParams,
        response: { 200: cancelResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertAgentActive(principal);
      const outcome = await commands().cancel(
        callerOf(principal),
        request.params.id,
        metaOf(principal, request.id),
      );
      await awaitReadModels(services, reply, outcome.position);
      const ended = outcome.events.find((e) => e.type === 'BacktestCancelled')!.data as BacktestEndedData;
      return {
        session_id: outcome.session.id,
        status: 'cancelled' as const,
        step: ended.step,
        virtual_time: ended.virtual_time,
        summary: summaryOut(outcome.session, ended.final_equity, ended.duration_real_seconds),
      };
    },
  );

  app.get(
    '/backtest/:id/status',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Progress and state of a session',
        params: sessionParams,
        response: { 200: statusResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => statusOut(await commands().session(callerOf(principalOf(request)), request.params.id)),
  );

  // ------------------------------------------------------------------------------------------------------
  // Sandbox trading
  // ------------------------------------------------------------------------------------------------------

  app.post(
    '/backtest/:id/trade/order',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox order: the live order rules and risk chain at virtual time',
        description:
          'Same body and response as `POST /trade/order`. Market orders fill at the close of the last candle ' +
          'closed by virtual time (with slippage and fee); others wait for the candles of later steps. A ' +
          'rejection is recorded and answered with the error of the violated rule (`details.rule`).',
        params: sessionParams,
        body: placeOrderBody,
        response: {
          201: filledOrderResponse.or(pendingOrderResponse),
          ...errorResponses(400, 401, 403, 404, 409, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertAgentActive(principal);
      const b = request.body;
      const symbol = normalizeSymbol(b.symbol);
      const outcome = await commands()
        .placeOrder(
          callerOf(principal),
          request.params.id,
          {
            symbol,
            side: b.side,
            type: b.type,
            quantity: decimalText(b.quantity),
            price: b.price == null ? null : decimalText(b.price),
            triggerPrice: b.trigger_price == null ? null : decimalText(b.trigger_price),
          },
          metaOf(principal, request.id),
        )
        .catch((error: unknown) => {
          throw outsideSessionPairs(error, symbol, app.services.market?.pair(symbol) !== undefined);
        });
      logPosition(reply, outcome.session);
      const placed = outcome.events.find((e) => e.type === 'OrderPlaced');
      const body = placed ? placementOut(outcome.events as never, placed.data.order_id) : undefined;
      if (!body) throw new DomainError('INTERNAL_ERROR', 'the sandbox order was neither placed nor rejected');
      return reply.status(201).send(body);
    },
  );

  app.get(
    '/backtest/:id/trade/orders',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox orders, newest first (filter by status and symbol)',
        params: sessionParams,
        querystring: ordersQuery,
        response: { 200: ordersResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const session = await commands().session(callerOf(principalOf(request)), request.params.id);
      const q = request.query;
      const symbol = q.symbol ? normalizeSymbol(q.symbol) : undefined;
      const all = session.log.orders.filter(
        (o) => (!q.status || o.status === q.status) && (!symbol || o.symbol === symbol),
      );
      const newest = all.slice().reverse();
      return {
        orders: newest.slice(q.offset, q.offset + q.limit),
        total: all.length,
        limit: q.limit,
        offset: q.offset,
      };
    },
  );

  app.get(
    '/backtest/:id/trade/orders/open',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Pending sandbox orders, newest first (filter by symbol)',
        params: sessionParams,
        querystring: openOrdersQuery,
        response: { 200: ordersResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const session = await commands().session(callerOf(principalOf(request)), request.params.id);
      const q = request.query;
      const symbol = q.symbol ? normalizeSymbol(q.symbol) : undefined;
      const open = session.log.orders
        .filter((o) => o.status === 'pending' && (!symbol || o.symbol === symbol))
        .reverse();
      return {
        orders: open.slice(q.offset, q.offset + q.limit),
        total: open.length,
        limit: q.limit,
        offset: q.offset,
      };
    },
  );

  app.delete(
    '/backtest/:id/trade/order/:order_id',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Cancel a pending sandbox order; its whole lock is released',
        params: sessionOrderParams,
        response: { 200: sandboxCancelResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      assertAgentActive(principal);
      const outcome = await commands().cancelOrder(
        callerOf(principal),
        request.params.id,
        request.params.order_id,
        metaOf(principal, request.id),
      );
      logPosition(reply, outcome.session);
      const c = outcome.events.find((e) => e.type === 'OrderCancelled');
      if (c?.type !== 'OrderCancelled') throw new DomainError('INTERNAL_ERROR', 'nothing was cancelled');
      return {
        order_id: c.data.order_id,
        status: 'cancelled' as const,
        unlocked_amount: c.data.unlocked_amount,
        unlocked_asset: c.data.unlocked_asset,
        cancelled_at: c.data.cancelled_at,
      };
    },
  );

  app.get(
    '/backtest/:id/trade/history',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox fills, newest first',
        params: sessionParams,
        querystring: historyQuery,
        response: { 200: historyResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const session = await commands().session(callerOf(principalOf(request)), request.params.id);
      const q = request.query;
      const symbol = q.symbol ? normalizeSymbol(q.symbol) : undefined;
      const all = session.log.fills.filter(
        (f) => (!symbol || f.symbol === symbol) && (!q.side || f.side === q.side),
      );
      const newest = all.slice().reverse();
      return {
        trades: newest.slice(q.offset, q.offset + q.limit),
        total: all.length,
        limit: q.limit,
        offset: q.offset,
      };
    },
  );

  // ------------------------------------------------------------------------------------------------------
  // Sandbox market data and account, at virtual time
  // ------------------------------------------------------------------------------------------------------

  const marketSession = async (principal: Principal, id: string) => {
    const session = await commands().session(callerOf(principal), id, { market: true });
    return { session, market: requireMarket(session), at: session.state.virtualTime };
  };

  app.get(
    '/backtest/:id/market/price/:symbol',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Price at virtual time: the close of the last candle closed by then (forward-filled)',
        params: sessionSymbolParams,
        response: { 200: priceResponse, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => {
      const { market, at } = await marketSession(principalOf(request), request.params.id);
      const symbol = requireSymbol(market, request.params.symbol);
      const c = lastClosed(market, symbol, at);
      if (!c)
        throw new DomainError('PRICE_NOT_AVAILABLE', `no ${symbol} candle has closed by virtual time`, {
          symbol,
        });
      return {
        symbol,
        price: c.close,
        timestamp: iso(c.openTime + market.intervalMs),
        virtual_time: iso(at),
      };
    },
  );

  app.get(
    '/backtest/:id/market/prices',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Prices of the session pairs at virtual time',
        params: sessionParams,
        querystring: pricesQuery,
        response: { 200: pricesResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => {
      const { market, at } = await marketSession(principalOf(request), request.params.id);
      const symbols =
        request.query.symbols === undefined
          ? market.series.map((s) => s.symbol)
          : requiredSymbols(request.query.symbols).map((s) => requireSymbol(market, s));
      const prices: Record<string, string> = {};
      for (const symbol of symbols) {
        const c = lastClosed(market, symbol, at);
        if (c) prices[symbol] = c.close;
      }
      return { prices, timestamp: iso(at), count: Object.keys(prices).length };
    },
  );

  app.get(
    '/backtest/:id/market/ticker/:symbol',
    {
      config,
      schema: {
        tags,
        security,
        summary: '24h statistics at virtual time (candles closed in the 24 hours before it)',
        params: sessionSymbolParams,
        response: { 200: tickerResponse, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => {
      const { market, at } = await marketSession(principalOf(request), request.params.id);
      return tickerOut(market, requireSymbol(market, request.params.symbol), at);
    },
  );

  app.get(
    '/backtest/:id/market/candles/:symbol',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Candles closed at or before virtual time, oldest first',
        description:
          '`interval` defaults to the session interval (any of 1m 5m 15m 1h 4h 1d the data has); `start_time`/' +
          '`end_time` bound the open time (inclusive); without `start_time` the newest `limit` candles. A candle ' +
          'still open at virtual time is never returned.',
        params: sessionSymbolParams,
        querystring: candlesQuery,
        response: { 200: candlesResponse, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => {
      const { session, market, at } = await marketSession(principalOf(request), request.params.id);
      const symbol = requireSymbol(market, request.params.symbol);
      const q = request.query;
      // The live candle endpoint's rules (spec "Errors"): an unsupported interval is `INVALID_SYMBOL` 400, a bad
      // time or a start after the end `VALIDATION_ERROR` 422.
      const interval = q.interval ?? session.state.config!.interval;
      if (!isInterval(interval)) {
        throw new DomainError(
          'INVALID_SYMBOL',
          `unsupported candle interval ${interval}: use one of ${INTERVALS.join(', ')}`,
          { interval, supported: INTERVALS },
        );
      }
      const start = queryTime(q.start_time, 'start_time');
      const end = queryTime(q.end_time, 'end_time');
      if (start !== undefined && end !== undefined && start > end) {
        throw new DomainError('VALIDATION_ERROR', 'start_time is after end_time', { field: 'start_time' });
      }
      let list: readonly Candle[];
      if (interval === market.interval) {
        list = closedCandlesBetween(market, symbol, at, start ?? 0, end ?? Number.MAX_SAFE_INTEGER);
      } else {
        // Another interval, from the market's candle index: the open times allowed are those closed by the
        // virtual time (open + interval ≤ at) and inside the bounds; `candles` pages them like the live endpoint
        // (without `start_time` the newest `limit` up to the last allowed open time, whatever the gaps).
        const lastOpen = Math.min(end ?? Number.MAX_SAFE_INTEGER, at - INTERVAL_MS[interval]);
        list =
          start !== undefined && start > lastOpen
            ? []
            : (services.market?.candles(symbol, interval, {
                ...(start !== undefined ? { start } : {}),
                end: lastOpen,
                limit: q.limit,
              }) ?? []);
      }
      const page =
        start === undefined ? list.slice(Math.max(0, list.length - q.limit)) : list.slice(0, q.limit);
      return { symbol, interval, candles: page.map(candleOut), count: page.length, virtual_time: iso(at) };
    },
  );

  app.get(
    '/backtest/:id/account/balance',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox balances and equity at virtual time',
        params: sessionParams,
        response: { 200: balanceResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const { session, market } = await marketSession(principalOf(request), request.params.id);
      return balanceOut(session, market);
    },
  );

  app.get(
    '/backtest/:id/account/positions',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox positions valued at virtual time',
        params: sessionParams,
        response: { 200: positionsResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const { session, market } = await marketSession(principalOf(request), request.params.id);
      const p = portfolioOut(session, market);
      return { positions: p.positions, total_unrealized_pnl: p.unrealized_pnl, virtual_time: p.timestamp };
    },
  );

  app.get(
    '/backtest/:id/account/portfolio',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Sandbox portfolio snapshot at virtual time',
        params: sessionParams,
        response: { 200: portfolioResponse, ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const { session, market } = await marketSession(principalOf(request), request.params.id);
      return portfolioOut(session, market);
    },
  );

  // ------------------------------------------------------------------------------------------------------
  // Results
  // ------------------------------------------------------------------------------------------------------

  app.get(
    '/backtest/:id/results',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Full results of a completed or cancelled session (docs/metrics.md)',
        params: sessionParams,
        response: { 200: resultsResponse, ...errorResponses(401, 403, 404, 409, 429, 503) },
      },
    },
    async (request) => {
      const session = await commands().session(callerOf(principalOf(request)), request.params.id);
      const status = session.state.status;
      if (status !== 'completed' && status !== 'cancelled') {
        throw new DomainError(
          'BACKTEST_INVALID_STATE',
          `results exist once a session is completed or cancelled; this one is ${status}`,
          { status },
        );
      }
      const row = await rowOf(session);
      const results = row.results as BacktestResults | null;
      if (!results)
        throw new DomainError('SERVICE_UNAVAILABLE', 'the results are being computed; retry shortly');
      const c = session.state.config!;
      return {
        session_id: session.id,
        status,
        config: {
          start_time: iso(c.startTime),
          end_time: iso(c.endTime),
          starting_balance: c.startingBalance,
          strategy_label: c.strategyLabel,
          candle_interval: c.interval,
          pairs: c.pairs,
          agent_id: c.agentId,
        },
        summary: results.summary,
        metrics: results.metrics,
        by_pair: results.by_pair,
      };
    },
  );

  app.get(
    '/backtest/:id/results/equity-curve',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Equity at every step so far (step 0 = start), oldest first, paginated',
        params: sessionParams,
        querystring: pageQuery(10_000, 1_000),
        response: { 200: equityCurveResponse, ...errorResponses(401, 403, 404, 422, 429, 503) },
      },
    },
    async (request) => {
      const session = await commands().session(callerOf(principalOf(request)), request.params.id);
      await rowOf(session);
      const q = request.query;
      const page = await equityCurve(db(), session.id, q);
      const drawdowns = drawdownSeries(
        page.rows.map((r) => m(r.equity)),
        page.peakBefore === null ? null : m(page.peakBefore),
      );
      return {
        session_id: session.id,
        candle_interval: session.state.config!.interval,
        points: page.rows.map((r, i) => ({
          step: r.step,
          time: iso(r.time),
          equity: r.equity,
          drawdown_pct: out8(drawdowns[i]!),
        })),
        total: page.total,
        limit: q.limit,
        offset: q.offset,
      };
    },
  );

  app.get(
    '/backtest/:id/results/trades',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'The complete trade log of a session, in execution order, paginated',
        params: sessionParams,
        querystring: tradesQuery,
        response: { 200: tradesResponse, ...errorResponses(401, 403, 404, 422, 429, 503) },
      },
    },
    async (request) => {
      const session = await commands().session(callerOf(principalOf(request)), request.params.id);
      await rowOf(session);
      const q = request.query;
      const page = await backtestTrades(db(), session.id, {
        limit: q.limit,
        offset: q.offset,
        ...(q.symbol ? { symbol: normalizeSymbol(q.symbol) } : {}),
      });
      return {
        session_id: session.id,
        trades: page.rows.map((r) => ({
          trade_id: r.trade_id,
          order_id: r.order_id,
          symbol: r.symbol,
          side: r.side,
          type: r.type,
          trigger: r.fill_trigger,
          quantity: r.quantity,
          price: r.price,
          notional: r.notional,
          fee: r.fee,
          total: r.total,
          realized_pnl: r.realized_pnl,
          slippage_pct: r.slippage_pct,
          reference_price: r.reference_price,
          reference_time: iso(r.reference_time),
          price_source: r.price_source,
          executed_at: iso(r.executed_at),
        })),
        total: page.total,
        limit: q.limit,
        offset: q.offset,
      };
    },
  );

  // ------------------------------------------------------------------------------------------------------
  // Across sessions
  // ------------------------------------------------------------------------------------------------------

  const scopeOf = (p: Principal) => ({ accountId: p.accountId, agentId: p.agentId ?? null });

  app.get(
    '/backtest/list',
    {
      config,
      schema: {
        tags,
        security,
        summary:
          "The caller's sessions (filter by label and status; sort by roi_pct, sharpe_ratio or created_at)",
        querystring: listQuery,
        response: { 200: listResponse, ...errorResponses(401, 403, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await listBacktests(db(), scopeOf(principalOf(request)), {
        ...(q.strategy_label !== undefined ? { strategyLabel: q.strategy_label } : {}),
        ...(q.status ? { status: q.status } : {}),
        sortBy: q.sort_by,
        limit: q.limit,
        offset: q.offset,
      });
      return {
        backtests: page.rows.map((r) => ({
          session_id: r.session_id,
          status: r.status,
          strategy_label: r.strategy_label,
          agent_id: r.agent_id,
          candle_interval: r.candle_interval,
          start_time: iso(r.start_time),
          end_time: iso(r.end_time),
          pairs: r.pairs,
          step: r.step,
          total_steps: r.total_steps,
          final_equity: text(r.final_equity),
          roi_pct: text(r.roi_pct),
          sharpe_ratio: text(r.sharpe_ratio),
          max_drawdown_pct: text(r.max_drawdown_pct),
          win_rate: text(r.win_rate),
          profit_factor: text(r.profit_factor),
          total_trades: r.total_trades,
          created_at: iso(r.created_at),
          ended_at: r.ended_at ? iso(r.ended_at) : null,
        })),
        total: page.total,
        limit: q.limit,
        offset: q.offset,
      };
    },
  );

  app.get(
    '/backtest/compare',
    {
      config,
      schema: {
        tags,
        security,
        summary: 'Compare sessions: best by ROI, Sharpe and drawdown, and a recommendation',
        querystring: compareQuery,
        response: { 200: compareResponse, ...errorResponses(401, 403, 404, 422, 429, 503) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const ids = [
        ...new Set(
          request.query.sessions
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ];
      if (ids.length === 0 || ids.length > 20) {
        throw new DomainError('VALIDATION_ERROR', 'sessions must list 1 to 20 session ids, comma-separated', {
          field: 'sessions',
        });
      }
      const rows = [];
      for (const id of ids) rows.push(await rowOf(await commands().session(callerOf(principal), id)));
      const comparisons = rows.map((r) => ({
        session_id: r.session_id,
        strategy_label: r.strategy_label,
        status: r.status,
        roi_pct: text(r.roi_pct),
        sharpe_ratio: text(r.sharpe_ratio),
        sortino_ratio: text(r.sortino_ratio),
        max_drawdown_pct: text(r.max_drawdown_pct),
        win_rate: text(r.win_rate),
        profit_factor: text(r.profit_factor),
        total_trades: r.total_trades,
        final_equity: text(r.final_equity),
      }));
      const pick = (value: (c: (typeof comparisons)[number]) => string | null, lowest = false) => {
        let best: { id: string; v: ReturnType<typeof dec> } | null = null;
        for (const c of comparisons) {
          const v = value(c);
          if (v === null) continue;
          const d = dec(v);
          if (!best || (lowest ? d.lt(best.v) : d.gt(best.v))) best = { id: c.session_id, v: d };
        }
        return best?.id ?? null;
      };
      const best = {
        roi: pick((c) => c.roi_pct),
        sharpe: pick((c) => c.sharpe_ratio),
        dd: pick((c) => c.max_drawdown_pct, true),
      };
      return {
        comparisons,
        best_by_roi: best.roi,
        best_by_sharpe: best.sharpe,
        best_by_drawdown: best.dd,
        recommendation: recommendation(
          comparisons.map((c) => ({
            session_id: c.session_id,
            label: c.strategy_label ?? '',
            roi: c.roi_pct,
            sharpe: c.sharpe_ratio,
            dd: c.max_drawdown_pct,
          })),
          best,
        ),
      };
    },
  );

  app.get(
    '/backtest/best',
    {
      config,
      schema: {
        tags,
        security,
        summary: "The caller's completed session with the highest value of a metric",
        querystring: bestQuery,
        response: { 200: bestResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const q = request.query;
      const row = await bestBacktest(db(), scopeOf(principalOf(request)), q.metric, q.strategy_label);
      if (!row) {
        throw new DomainError('BACKTEST_NOT_FOUND', `no completed backtest with a ${q.metric}`, {
          metric: q.metric,
        });
      }
      return {
        session_id: row.session_id,
        metric: q.metric,
        value: text(row[q.metric]) ?? fmt(ZERO),
        strategy_label: row.strategy_label,
        status: row.status,
        roi_pct: text(row.roi_pct),
        sharpe_ratio: text(row.sharpe_ratio),
        win_rate: text(row.win_rate),
        profit_factor: text(row.profit_factor),
        created_at: iso(row.created_at),
      };
    },
  );
};
