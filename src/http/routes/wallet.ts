import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DomainError } from '../../../domain/shared/errors';
import { normalizeStartingBalance } from '../../../domain/shared/starting-balance';
import { type Dec, dec, fmt, HUNDRED, roundHalfEven8, ZERO } from '../../../domain/trading/decimal';
import { walletDecider } from '../../../domain/wallet/decide';
import {
  type SessionStartedData,
  type WalletEvent,
  type WalletResetData,
  walletStreamId,
} from '../../../domain/wallet/events';
import { backtestCounts } from '../../../queries/backtest-counts';
import { readSnapshot } from '../../../queries/snapshot';
import { getBalances, getPositions, tradeStats } from '../../../queries/trading';
import { auditWalletNow } from '../../audit/wallet-audit';
import { assertAgentActive, type Principal, principalOf } from '../../auth/principal';
import { trading } from '../../trading/install';
import { holdingsOf, type Mark, portfolioOut, positionOut, publicPosition } from '../../trading/present';
import { currentSession, liveMark, portfolioSnapshot, prepareWallet } from '../portfolio-snapshot';
import { awaitReadModels } from '../read-your-writes';
import { errorResponses } from '../schemas/common';
import {
  balanceResponse,
  eventsQuery,
  eventsResponse,
  modeBody,
  modeResponse,
  modeSetResponse,
  pnlQuery,
  pnlResponse,
  portfolioQuery,
  portfolioResponse,
  positionsResponse,
  resetBody,
  resetResponse,
  walletAuditResponse,
} from '../schemas/trading';
import { walletEventView } from '../wallet-event-view';

const security: Record<string, string[]>[] = [{ apiKey: [] }, { bearer: [] }];
const tags = ['account'];
const read = { auth: 'key-or-jwt' } as const;

const PERIOD_MS = { '1d': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;

/**
 * Runs `parse` (a shared normaliser that names its own field, e.g. `starting_balance`) and reports a
 * `VALIDATION_ERROR` under the request's field name instead, so the message and `details.field` match the body.
 */
const renamedField = <T>(field: string, parse: () => T): T => {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'VALIDATION_ERROR') throw error;
    const named = error.details?.['field'];
    if (typeof named !== 'string' || named === field) throw error;
    throw new DomainError(
      'VALIDATION_ERROR',
      error.message.replaceAll(named, field),
      { ...error.details, field },
      error.status,
    );
  }
};

/**
 * `POST /account/reset` body: the shared schema, with `"confirm": null` read as a missing confirmation (400,
 * spec "Account endpoints") rather than a type error (422).
 */
const resetRequestBody = resetBody.extend({
  confirm: z.boolean().nullable().optional().describe('must be true'),
});

const ownerOf = (p: Principal) => ({ accountId: p.accountId, agentId: p.agentId ?? null });
const meta = (p: Principal, requestId: string) => ({ actor: p.agentId ?? p.accountId, requestId });

/**
 * Account endpoints of the trading ledger (spec "Account endpoints"): balance, positions, portfolio (also as of
 * a past time, folded from the log), PnL by period, reset; plus the auditor's view of the wallet's events. Scoped
 * like every trading figure: the agent's wallet with an agent key or `X-Agent-Id`, else the account's.
 * (`/account/info` and `PUT /account/risk-profile` live in `account.ts`.)
 */
export const walletRoutes: FastifyPluginAsyncZod = async (app) => {
  const services = app.services;
  const db = () => services.database.db;

  const markOf = (symbol: string): Mark | undefined => liveMark(services, symbol);

  /** The owner's profile and wallet read model, the wallet brought into the owner's session (`prepareWallet`). */
  const prepare = (principal: Principal, requestId: string) =>
    prepareWallet(services, ownerOf(principal), meta(principal, requestId));

  /** Current equity (cash + locked + positions at live prices) of a prepared owner. */
  const equityOf = async (profile: { ownerId: string; startingBalance: string }, hasWallet: boolean) => {
    if (!hasWallet) return dec(profile.startingBalance);
    const { balances, positions } = await readSnapshot(db(), async (trx) => ({
      balances: await getBalances(trx, profile.ownerId),
      positions: await getPositions(trx, profile.ownerId),
    }));
    const usdt = balances.find((b) => b.asset === 'USDT');
    let equity = dec(usdt?.available ?? 0).plus(usdt?.locked ?? 0);
    for (const h of holdingsOf(positions)) equity = equity.plus(positionOut(h, markOf(h.symbol))._value);
    return equity;
  };

  app.get(
    '/account/balance',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Balances (USDT and held assets: available, locked, total) and total equity in USDT',
        response: { 200: balanceResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { profile, wallet } = await prepare(principal, request.id);
      if (!wallet) {
        const start = fmt(dec(profile.startingBalance));
        return {
          balances: [{ asset: 'USDT', available: start, locked: '0.00000000', total: start }],
          total_equity_usdt: start,
        };
      }
      const { rows, positions } = await readSnapshot(db(), async (trx) => ({
        rows: await getBalances(trx, profile.ownerId),
        positions: await getPositions(trx, profile.ownerId),
      }));
      const symbolOf = new Map(positions.map((p) => [p.asset, p.symbol]));
      let equity = ZERO;
      const balances = rows.map((b) => {
        const total = dec(b.available).plus(b.locked);
        if (b.asset === 'USDT') equity = equity.plus(total);
        else {
          const position = positions.find((p) => p.asset === b.asset);
          const mark = markOf(symbolOf.get(b.asset) ?? `${b.asset}USDT`);
          equity = equity.plus(mark ? total.times(mark.price) : dec(position?.cost_basis ?? 0));
        }
        return {
          asset: b.asset,
          available: fmt(dec(b.available)),
          locked: fmt(dec(b.locked)),
          total: fmt(total),
        };
      });
      return { balances, total_equity_usdt: fmt(roundHalfEven8(equity)) };
    },
  );

  app.get(
    '/account/positions',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Open positions valued at live prices',
        response: { 200: positionsResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { profile, wallet } = await prepare(principal, request.id);
      const rows = wallet ? await getPositions(db(), profile.ownerId) : [];
      const positions = holdingsOf(rows).map((h) => positionOut(h, markOf(h.symbol)));
      const unrealized = positions.reduce((s, p) => s.plus(p._unrealized), ZERO);
      return {
        positions: positions.map(publicPosition),
        total_unrealized_pnl: fmt(roundHalfEven8(unrealized)),
      };
    },
  );

  app.get(
    '/account/portfolio',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'Portfolio snapshot; with `as_of`, the portfolio at a past time folded from the event log',
        description:
          'With `as_of` (auditors, ARCHITECTURE §6 time travel) the wallet stream is folded up to that time and ' +
          'positions are valued at the last reference price of a fill of that symbol at or before it.',
        querystring: portfolioQuery,
        response: { 200: portfolioResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { profile, wallet } = await prepare(principal, request.id);
      const stream = walletStreamId(profile.ownerId);
      if (request.query.as_of) {
        const asOf = new Date(request.query.as_of);
        const events = await services.eventStore.readStream(stream);
        let state = walletDecider.initialState();
        let revision = -1;
        const marks = new Map<string, Mark>();
        for (const e of events) {
          if (Date.parse(e.metadata.occurred_at) > asOf.getTime()) break;
          const event = { type: e.type, data: e.data } as WalletEvent;
          state = walletDecider.evolve(state, event);
          revision = e.revision;
          if (event.type === 'OrderFilled') {
            marks.set(event.data.symbol, { price: dec(event.data.reference_price), source: 'last_fill' });
          }
        }
        return portfolioOut({
          cash: state.session ? state.cash : dec(profile.startingBalance),
          locked: state.lockedCash,
          holdings: holdingsOf(state),
          markOf: (s) => marks.get(s),
          realizedPnl: state.realizedPnl,
          feesPaid: state.feesPaid,
          startingBalance: state.session?.startingBalance ?? dec(profile.startingBalance),
          sessionId: state.session?.id ?? null,
          timestamp: asOf.toISOString(),
          asOf: asOf.toISOString(),
          revision,
        });
      }
      return portfolioSnapshot(services, { profile, wallet });
    },
  );

  app.get(
    '/account/pnl',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'PnL breakdown of the current session for a period (realized in the period, unrealized now)',
        querystring: pnlQuery,
        response: { 200: pnlResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const period = request.query.period;
      const { profile, wallet } = await prepare(principal, request.id);
      const zero = '0.00000000';
      if (!wallet) {
        return {
          period,
          realized_pnl: zero,
          unrealized_pnl: zero,
          total_pnl: zero,
          fees_paid: zero,
          net_pnl: zero,
          winning_trades: 0,
          losing_trades: 0,
          win_rate: zero,
        };
      }
      const since = period === 'all' ? undefined : new Date(Date.now() - PERIOD_MS[period]);
      const { stats, positions } = await readSnapshot(db(), async (trx) => ({
        stats: await tradeStats(trx, profile.ownerId, wallet.wallet.session_id, since),
        positions: await getPositions(trx, profile.ownerId),
      }));
      const unrealized = holdingsOf(positions)
        .map((h) => positionOut(h, markOf(h.symbol))._unrealized)
        .reduce((s: Dec, v) => s.plus(v), ZERO);
      const realized = dec(stats.realizedPnl);
      const fees = dec(stats.feesPaid);
      const total = realized.plus(unrealized);
      return {
        period,
        realized_pnl: fmt(roundHalfEven8(realized)),
        unrealized_pnl: fmt(roundHalfEven8(unrealized)),
        total_pnl: fmt(roundHalfEven8(total)),
        fees_paid: fmt(roundHalfEven8(fees)),
        net_pnl: fmt(roundHalfEven8(total.minus(fees))),
        winning_trades: stats.winningTrades,
        losing_trades: stats.losingTrades,
        win_rate: fmt(
          stats.closedTrades === 0
            ? ZERO
            : roundHalfEven8(dec(stats.winningTrades).div(stats.closedTrades).times(HUNDRED)),
        ),
      };
    },
  );

  app.post(
    '/account/reset',
    {
      // The standard account limit (spec "Limits": the order limit covers order placement and cancels only).
      config: { auth: 'key-or-jwt' },
      schema: {
        tags,
        security,
        summary: 'Close every position at market, cancel every order, start a new session (history kept)',
        // No body at all, or `"confirm": null`, is "confirm missing" (400 below), not a schema failure.
        body: resetRequestBody.nullish(),
        response: { 200: resetResponse, ...errorResponses(400, 401, 403, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      // Resetting is a trading request (it closes positions at market): not with an archived agent's key.
      assertAgentActive(principal);
      const body = request.body ?? {};
      if (body.confirm !== true) {
        throw new DomainError(
          'VALIDATION_ERROR',
          'reset needs "confirm": true: it closes every position and cancels every order',
          { issues: [{ field: 'confirm', location: 'body', message: 'must be true' }] },
          400,
        );
      }
      const startingBalance =
        body.new_starting_balance === undefined
          ? undefined
          : renamedField('new_starting_balance', () => normalizeStartingBalance(body.new_starting_balance));
      const owner = await trading(services).wallets.profile(ownerOf(principal));
      const outcome = await trading(services).wallets.reset(
        ownerOf(principal),
        startingBalance,
        meta(principal, request.id),
      );
      await awaitReadModels(services, reply, outcome.position);
      // The last WalletReset is this request's (one that brings the wallet into an agent's newer session first
      // may precede it).
      const ended = [...outcome.events].reverse().find((e) => e.type === 'WalletReset')
        ?.data as WalletResetData;
      const started = [...outcome.events].reverse().find((e) => e.type === 'SessionStarted')
        ?.data as SessionStartedData;
      // The ended session began when the owner's did if it was the owner's session (the wallet opened in it
      // at the first order), as `/account/info` `current_session.started_at` showed it.
      const began =
        ended.previous_session_id === owner.sessionId
          ? Math.min(Date.parse(owner.sessionStartedAt), Date.parse(ended.previous_started_at))
          : Date.parse(ended.previous_started_at);
      const days = (Date.parse(ended.reset_at) - began) / 86_400_000;
      return {
        message: 'positions closed at market, orders cancelled, a new session started; history is kept',
        previous_session: {
          session_id: ended.previous_session_id,
          ending_equity: ended.ending_equity,
          total_pnl: ended.total_pnl,
          duration_days: Math.round(days * 10_000) / 10_000,
        },
        new_session: {
          session_id: started.session_id,
          starting_balance: started.starting_balance,
          started_at: started.started_at,
        },
      };
    },
  );

  app.get(
    '/account/mode',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: 'The primary mode (live or backtest) and the live session',
        description:
          '`active_backtests` counts backtest sessions not yet finished (`created` or `running`), ' +
          "`total_backtests_completed` the completed ones: the agent's with an agent key or `X-Agent-Id`, else " +
          'every session of the account.',
        response: { 200: modeResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { profile, wallet } = await prepare(principal, request.id);
      const [mode, equity, backtests] = await Promise.all([
        trading(services).wallets.mode(profile.ownerId),
        equityOf(profile, wallet !== undefined),
        backtestCounts(db(), ownerOf(principal)),
      ]);
      return {
        mode: mode.mode,
        live_session: {
          started_at: currentSession(profile, wallet).startedAt,
          current_equity: fmt(roundHalfEven8(equity)),
          strategy_label: mode.strategyLabel,
        },
        active_backtests: backtests.active,
        total_backtests_completed: backtests.completed,
      };
    },
  );

  app.post(
    '/account/mode',
    {
      config: { auth: 'key-or-jwt' },
      schema: {
        tags,
        security,
        summary: 'Switch the primary mode (`live` or `backtest`); active backtests keep running',
        body: modeBody,
        response: { 200: modeSetResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      // An archived agent's key still reads but changes nothing (spec "Authentication" rule 6).
      assertAgentActive(principal);
      const result = await trading(services).wallets.setMode(
        ownerOf(principal),
        request.body.mode,
        request.body.strategy_label ?? null,
        meta(principal, request.id),
      );
      await awaitReadModels(services, reply, result.position);
      return {
        mode: result.state.mode,
        strategy_label: result.state.strategyLabel,
        changed_at: result.state.changedAt ?? new Date().toISOString(),
      };
    },
  );

  app.get(
    '/account/events',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: "The wallet's events with revision, time and hash chain (auditors), paginated with `after`",
        querystring: eventsQuery,
        response: { 200: eventsResponse, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const profile = await trading(services).wallets.profile(ownerOf(principal));
      const stream = walletStreamId(profile.ownerId);
      const { after, limit } = request.query;
      const events = await services.eventStore.readStream(stream, {
        fromRevision: after + 1,
        maxCount: limit + 1,
      });
      const page = events.slice(0, limit);
      return {
        stream_id: stream,
        events: page.map(walletEventView),
        next_after: page.length ? page[page.length - 1]!.revision : after,
        has_more: events.length > limit,
      };
    },
  );

  app.get(
    '/account/audit',
    {
      config: read,
      schema: {
        tags,
        security,
        summary: "Verify the wallet's hash chain and its read models against the event log (auditors)",
        description:
          'Recomputes the SHA-256 chain of every event of the wallet stream (`docs/events.md`), checks that no ' +
          'event is missing at its end, and compares balances, positions, open orders and session figures with ' +
          'the fold of the log up to the revision the read models include. Reads the whole stream.',
        response: { 200: walletAuditResponse, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const profile = await trading(services).wallets.profile(ownerOf(principal));
      const report = await auditWalletNow(services.eventStore, db(), profile.ownerId);
      const b = report.chainBreak;
      return {
        stream_id: report.streamId,
        events: report.events,
        head_revision: report.headRevision,
        last_hash: report.lastHash,
        chain: {
          intact: b === null,
          break: b && { revision: b.revision, reason: b.reason, expected: b.expected, actual: b.actual },
        },
        read_models: {
          revision: report.readModels.revision,
          agree: report.readModels.mismatches.length === 0,
          mismatches: report.readModels.mismatches,
        },
        verified_at: new Date().toISOString(),
      };
    },
  );
};
