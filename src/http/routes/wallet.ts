import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { errorResponses } from '../../contract/common';
import {
  eventsQuery,
  fillModelBody,
  modeBody,
  pnlQuery,
  portfolioQuery,
  resetBody,
} from '../../contract/trading';
import { accountEndpoints as ep } from '../../endpoints/account';
import { callOf } from '../call';
import { routeGroup } from './route-options';

/** Use cases settle the caller's own writes into the read models they read. */
const route = routeGroup('account', { auth: 'key-or-jwt' });

/**
 * Account endpoints of the trading ledger (spec "Account endpoints"): balance, positions, portfolio (also as of a
 * past time, folded from the log), PnL by period, reset, mode; plus the auditor's view of the wallet's events.
 * Each serves its endpoint of `src/endpoints/account.ts`. (`/account/info` and
 * `PUT /account/risk-profile` live in `account.ts`.)
 */
export const walletRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/account/balance',
    route('Balances (USDT and held assets: available, locked, total) and total equity in USDT', {
      response: { 200: ep.balance.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.balance.run(callOf(request), {}),
  );

  app.get(
    '/account/positions',
    route('Open positions valued at live prices', {
      response: { 200: ep.positions.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.positions.run(callOf(request), {}),
  );

  app.get(
    '/account/portfolio',
    route('Portfolio snapshot; with `as_of`, the portfolio at a past time folded from the event log', {
      description:
        'With `as_of` (auditors, ARCHITECTURE §6 time travel) the wallet stream is folded up to that time and ' +
        'positions are valued at the last reference price of a fill of that symbol at or before it.',
      querystring: portfolioQuery,
      response: { 200: ep.portfolio.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.portfolio.run(callOf(request), request.query),
  );

  app.get(
    '/account/pnl',
    route('PnL breakdown of the current session for a period (realized in the period, unrealized now)', {
      querystring: pnlQuery,
      response: { 200: ep.pnl.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.pnl.run(callOf(request), request.query),
  );

  app.post(
    '/account/reset',
    // The standard account limit (spec "Limits": the order limit covers order placement and cancels only).
    route('Close every position at market, cancel every order, start a new session (history kept)', {
      // No body, or one without `"confirm": true`, is "confirm missing" (400 from the use case).
      body: resetBody,
      response: { 200: ep.reset.output, ...errorResponses(400, 401, 403, 404, 422, 429) },
    }),
    async (request) => ep.reset.run(callOf(request), request.body ?? {}),
  );

  app.get(
    '/account/fill-model',
    route("The wallet's fill model: how its orders fill (docs/trading-rules.md, the fill model)", {
      description:
        '`realistic` (the default of new wallets): market orders walk the book `/market/orderbook` shows, resting ' +
        'limit orders fill at most `participation_pct` % of each print; `instant`: every order fills whole when ' +
        'the price touches it. Every fill records the model it was decided by.',
      response: { 200: ep.fillModel.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.fillModel.run(callOf(request), {}),
  );

  app.put(
    '/account/fill-model',
    route(
      "Choose the wallet's fill model (`realistic` or `instant`) and participation share, from the next fill",
      {
        body: fillModelBody,
        response: { 200: ep.fillModel.output, ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    ),
    async (request) => ep.setFillModel.run(callOf(request), request.body),
  );

  app.get(
    '/account/mode',
    route('The primary mode (live or backtest) and the live session', {
      description:
        '`active_backtests` counts backtest sessions not yet finished (`created` or `running`), ' +
        "`total_backtests_completed` the completed ones: the agent's with an agent key or `X-Agent-Id`, else " +
        'every session of the account.',
      response: { 200: ep.mode.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.mode.run(callOf(request), {}),
  );

  app.post(
    '/account/mode',
    route('Switch the primary mode (`live` or `backtest`); active backtests keep running', {
      body: modeBody,
      response: { 200: ep.setMode.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.setMode.run(callOf(request), request.body),
  );

  app.get(
    '/account/events',
    route("The wallet's events with revision, time and hash chain (auditors), paginated with `after`", {
      querystring: eventsQuery,
      response: { 200: ep.events.output, ...errorResponses(401, 403, 404, 422, 429) },
    }),
    async (request) => ep.events.run(callOf(request), request.query),
  );

  app.get(
    '/account/audit',
    route("Verify the wallet's hash chain and its read models against the event log (auditors)", {
      description:
        'Recomputes the SHA-256 chain of every event of the wallet stream (`docs/events.md`), checks that no ' +
        'event is missing at its end, and compares balances, positions, open orders and session figures with ' +
        'the fold of the log up to the revision the read models include. Reads the whole stream.',
      response: { 200: ep.audit.output, ...errorResponses(401, 403, 404, 429) },
    }),
    async (request) => ep.audit.run(callOf(request), {}),
  );
};
