import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  auditWallet,
  balances,
  fillModel,
  mode,
  pnl,
  portfolio,
  positions,
  resetAccount,
  setFillModel,
  setMode,
  walletEvents,
} from '../../application/account';
import { errorResponses } from '../../contract/common';
import {
  balanceOut,
  balanceResponse,
  eventsQuery,
  eventsResponse,
  fillModelBody,
  fillModelOut,
  fillModelResponse,
  modeBody,
  modeOut,
  modeResponse,
  modeSetOut,
  modeSetResponse,
  pnlOut,
  pnlQuery,
  pnlResponse,
  portfolioQuery,
  portfolioResponse,
  positionsResponse,
  resetBody,
  resetOut,
  resetResponse,
  walletAuditOut,
  walletAuditResponse,
} from '../../contract/trading';
import { walletEventsPageOut } from '../../trading/wallet-event-view';
import { callOf } from '../call';
import { routeGroup } from './route-options';

/** Use cases settle the caller's own writes into the read models they read. */
const route = routeGroup('account', { auth: 'key-or-jwt' });

/**
 * Account endpoints of the trading ledger (spec "Account endpoints"): balance, positions, portfolio (also as of a
 * past time, folded from the log), PnL by period, reset, mode; plus the auditor's view of the wallet's events.
 * Each parses, calls its use case in `src/application/account.ts` and presents. (`/account/info` and
 * `PUT /account/risk-profile` live in `account.ts`.)
 */
export const walletRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/account/balance',
    route('Balances (USDT and held assets: available, locked, total) and total equity in USDT', {
      response: { 200: balanceResponse, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => balanceOut(await balances(callOf(request))),
  );

  app.get(
    '/account/positions',
    route('Open positions valued at live prices', {
      response: { 200: positionsResponse, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => {
      const p = await positions(callOf(request));
      return { positions: p.positions, total_unrealized_pnl: p.totalUnrealizedPnl };
    },
  );

  app.get(
    '/account/portfolio',
    route('Portfolio snapshot; with `as_of`, the portfolio at a past time folded from the event log', {
      description:
        'With `as_of` (auditors, ARCHITECTURE §6 time travel) the wallet stream is folded up to that time and ' +
        'positions are valued at the last reference price of a fill of that symbol at or before it.',
      querystring: portfolioQuery,
      response: { 200: portfolioResponse, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => {
      const asOf = request.query.as_of;
      return portfolio(callOf(request), asOf ? { asOf: new Date(asOf) } : {});
    },
  );

  app.get(
    '/account/pnl',
    route('PnL breakdown of the current session for a period (realized in the period, unrealized now)', {
      querystring: pnlQuery,
      response: { 200: pnlResponse, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => pnlOut(await pnl(callOf(request), request.query.period)),
  );

  app.post(
    '/account/reset',
    // The standard account limit (spec "Limits": the order limit covers order placement and cancels only).
    route('Close every position at market, cancel every order, start a new session (history kept)', {
      // No body, or one without `"confirm": true`, is "confirm missing" (400 from the use case).
      body: resetBody,
      response: { 200: resetResponse, ...errorResponses(400, 401, 403, 404, 422, 429) },
    }),
    async (request) => {
      const body = request.body ?? {};
      return resetOut(
        await resetAccount(callOf(request), {
          confirm: body.confirm,
          newStartingBalance: body.new_starting_balance,
        }),
      );
    },
  );

  app.get(
    '/account/fill-model',
    route("The wallet's fill model: how its orders fill (docs/trading-rules.md, the fill model)", {
      description:
        '`realistic` (the default of new wallets): market orders walk the book `/market/orderbook` shows, resting ' +
        'limit orders fill at most `participation_pct` % of each print; `instant`: every order fills whole when ' +
        'the price touches it. Every fill records the model it was decided by.',
      response: { 200: fillModelResponse, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => fillModelOut(await fillModel(callOf(request))),
  );

  app.put(
    '/account/fill-model',
    route(
      "Choose the wallet's fill model (`realistic` or `instant`) and participation share, from the next fill",
      {
        body: fillModelBody,
        response: { 200: fillModelResponse, ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    ),
    async (request) =>
      fillModelOut(
        await setFillModel(callOf(request), {
          fillModel: request.body.fill_model,
          participationPct: request.body.participation_pct,
        }),
      ),
  );

  app.get(
    '/account/mode',
    route('The primary mode (live or backtest) and the live session', {
      description:
        '`active_backtests` counts backtest sessions not yet finished (`created` or `running`), ' +
        "`total_backtests_completed` the completed ones: the agent's with an agent key or `X-Agent-Id`, else " +
        'every session of the account.',
      response: { 200: modeResponse, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => modeOut(await mode(callOf(request))),
  );

  app.post(
    '/account/mode',
    route('Switch the primary mode (`live` or `backtest`); active backtests keep running', {
      body: modeBody,
      response: { 200: modeSetResponse, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) =>
      modeSetOut(
        await setMode(callOf(request), {
          mode: request.body.mode,
          strategyLabel: request.body.strategy_label ?? null,
        }),
      ),
  );

  app.get(
    '/account/events',
    route("The wallet's events with revision, time and hash chain (auditors), paginated with `after`", {
      querystring: eventsQuery,
      response: { 200: eventsResponse, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => walletEventsPageOut(await walletEvents(callOf(request), request.query)),
  );

  app.get(
    '/account/audit',
    route("Verify the wallet's hash chain and its read models against the event log (auditors)", {
      description:
        'Recomputes the SHA-256 chain of every event of the wallet stream (`docs/events.md`), checks that no ' +
        'event is missing at its end, and compares balances, positions, open orders and session figures with ' +
        'the fold of the log up to the revision the read models include. Reads the whole stream.',
      response: { 200: walletAuditResponse, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => walletAuditOut(await auditWallet(callOf(request))),
  );
};
