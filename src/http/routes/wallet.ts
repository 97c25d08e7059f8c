import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { accountEndpoints as ep } from '../../endpoints/account';
import { routeGroup, serveAll } from './route-options';

/** Use cases settle the caller's own writes into the read models they read. */
const route = routeGroup('account', { auth: 'key-or-jwt' });

/** The errors of a read of the caller's wallet, and of one that takes a query or a body. */
const read = [401, 403, 404, 429];
const withInput = [401, 403, 404, 422, 429];

/**
 * Account endpoints of the trading ledger (spec "Account endpoints"): balance, positions, portfolio (also as of a
 * past time, folded from the log), PnL by period, reset, mode; plus the auditor's view of the wallet's events.
 * Each serves its endpoint of `src/endpoints/account.ts`. (`/account/info` and
 * `PUT /account/risk-profile` live in `account.ts`.)
 */
export const walletRoutes: FastifyPluginAsyncZod = async (app) => {
  serveAll(app, route, ep, withInput, {
    balance: {
      summary: 'Balances (USDT and held assets: available, locked, total) and total equity in USDT',
      errors: read,
    },
    positions: { summary: 'Open positions valued at live prices', errors: read },
    portfolio: {
      summary: 'Portfolio snapshot; with `as_of`, the portfolio at a past time folded from the event log',
      description:
        'With `as_of` (auditors, ARCHITECTURE §6 time travel) the wallet stream is folded up to that time and ' +
        'positions are valued at the last reference price of a fill of that symbol at or before it.',
    },
    pnl: 'PnL breakdown of the current session for a period (realized in the period, unrealized now)',
    // The standard account limit (spec "Limits": the order limit covers order placement and cancels only). No
    // body, or one without `"confirm": true`, is "confirm missing" (400 from the use case).
    reset: {
      summary: 'Close every position at market, cancel every order, start a new session (history kept)',
      errors: [400, ...withInput],
    },
    fillModel: {
      summary: "The wallet's fill model: how its orders fill (docs/trading-rules.md, the fill model)",
      description:
        '`realistic` (the default of new wallets): market orders walk the book `/market/orderbook` shows, resting ' +
        'limit orders fill at most `participation_pct` % of each print; `instant`: every order fills whole when ' +
        'the price touches it. Every fill records the model it was decided by.',
      errors: read,
    },
    setFillModel: {
      summary:
        "Choose the wallet's fill model (`realistic` or `instant`) and participation share, from the next fill",
      errors: [400, ...withInput],
    },
    mode: {
      summary: 'The primary mode (live or backtest) and the live session',
      description:
        '`active_backtests` counts backtest sessions not yet finished (`created` or `running`), ' +
        "`total_backtests_completed` the completed ones: the agent's with an agent key or `X-Agent-Id`, else " +
        'every session of the account.',
      errors: read,
    },
    setMode: 'Switch the primary mode (`live` or `backtest`); active backtests keep running',
    events: "The wallet's events with revision, time and hash chain (auditors), paginated with `after`",
    audit: {
      summary: "Verify the wallet's hash chain and its read models against the event log (auditors)",
      description:
        'Recomputes the SHA-256 chain of every event of the wallet stream (`docs/events.md`), checks that no ' +
        'event is missing at its end, and compares balances, positions, open orders and session figures with ' +
        'the fold of the log up to the revision the read models include. Reads the whole stream.',
      errors: read,
    },
  });
};
