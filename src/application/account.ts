import type { CommandMeta } from '../../commands/metadata';
import { type HistoryOffer, historySpacing } from '../../commands/snapshots';
import { DEFAULT_PARTICIPATION_PCT, type FillModelName } from '../../domain/fill-model/model';
import { DomainError } from '../../domain/shared/errors';
import type { RiskProfile } from '../../domain/shared/risk-profile';
import { normalizeStartingBalance } from '../../domain/shared/starting-balance';
import { type Dec, dec, fmt, HUNDRED, roundHalfEven8, ZERO } from '../../domain/trading/decimal';
import { feeRatesOf } from '../../domain/trading/fees';
import { type SessionStartedData, type WalletResetData, walletStreamId } from '../../domain/wallet/events';
import type { TradingMode, TradingModeState } from '../../domain/wallet/mode';
import type { LogPosition, RecordedEvent } from '../../ports/event-store';
import type { ReadModelName } from '../../projections/registry';
import { getAccount } from '../../queries/accounts';
import { getAgent } from '../../queries/agents';
import { backtestCounts } from '../../queries/backtest-counts';
import { readSnapshot } from '../../queries/snapshot';
import { getBalances, getPositions, getWallet, tradeStats } from '../../queries/trading';
import { walletAsOf } from '../audit/wallet-as-of';
import { auditWalletNow } from '../audit/wallet-audit';
import { identity } from '../auth/install';
import { assertAgentActive, ownerIdOf } from '../auth/principal';
import { trading } from '../trading/install';
import { holdingsOf, type Mark, portfolioOut, positionOut, publicPosition } from '../trading/present';
import type { Call } from './call';
import { commandMeta, ownerOf } from './caller';
import {
  currentSession,
  liveMark,
  type PortfolioSnapshot,
  type PreparedWallet,
  portfolioSnapshot,
  prepareWallet,
} from './portfolio';
import { awaitReadModels, settled, settleOwnWrites } from './read-your-writes';

/**
 * Account use cases (spec "Account endpoints"): who the caller is, its risk limits, and its wallet's balances,
 * positions, portfolio (also as of a past time, folded from the log), PnL, reset, mode and events. Scoped like every
 * trading figure: the agent's wallet with an agent key or `X-Agent-Id`, else the account's. Every read first
 * settles the caller's own writes into the read models it reads; every figure shows the owner's current session
 * (`prepareWallet` brings a wallet left behind by an agent reset into step first).
 */

/** The wallet read models a figure of the account reads. */
const WALLET_MODELS = ['wallets', 'stream_summaries'] as const;

/** The caller's trading profile and wallet read model, after its own writes are in the read models it reads. */
const prepared = async (
  call: Call,
  readModels: readonly ReadModelName[] = WALLET_MODELS,
): Promise<PreparedWallet> => {
  await settleOwnWrites(call, readModels);
  return prepareWallet(call.services, ownerOf(call), commandMeta(call));
};

const markOf =
  (call: Call) =>
  (symbol: string): Mark | undefined =>
    liveMark(call.services, symbol);

/** The account or agent the caller acts as (`GET /account/info`). */
export interface AccountInfo {
  accountId: string;
  /** The scoped agent, else null. */
  agentId: string | null;
  displayName: string;
  status: 'active' | 'suspended' | 'archived';
  /** The current wallet session's starting balance (USDT) and id/start. */
  startingBalance: string;
  currentSession: { sessionId: string; startedAt: string };
  riskProfile: RiskProfile;
  /** The taker fee per fill as a fraction of its notional (`TAKER_FEE_RATE`, else `FEE_RATE`), 8 places. */
  feeRate: string;
  /** The maker fee (resting limit fills; `MAKER_FEE_RATE`, else the taker rate), 8 places. */
  makerFeeRate: string;
  createdAt: string;
}

/**
 * The fee rates the call's account or agent pays, each a fraction of a fill's notional as an 8-place decimal
 * string (`"0.00100000"` = 0.1 %): `feeRate` on a fill that takes liquidity (taker), `makerFeeRate` on a resting
 * limit order's fill (maker). They are the rates the trading capability charges, else the settings'
 * (`TAKER_FEE_RATE`/`FEE_RATE`, `MAKER_FEE_RATE`; `feeRatesOf`, docs/trading-rules.md "Fees by liquidity"): one
 * pair of rates for every owner and pair. No I/O and no errors.
 */
export const feeRatesIn = (call: Call): { feeRate: string; makerFeeRate: string } => {
  const settings = feeRatesOf(call.services.config);
  return {
    feeRate: fmt(call.services.trading?.feeRate ?? settings.taker),
    makerFeeRate: fmt(call.services.trading?.makerFeeRate ?? settings.maker),
  };
};

/**
 * The account, or the agent the call is scoped to: status, the current session (`POST /account/reset` starts a new
 * wallet session, possibly with a new starting balance, without touching the account or agent stream) and the risk
 * profile. `ACCOUNT_NOT_FOUND` when the owner is gone.
 */
export const accountInfo = async (call: Call): Promise<AccountInfo> => {
  await settleOwnWrites(call, ['wallets']);
  const db = call.services.database.db;
  const { agentId, accountId } = call.caller;
  const owner = agentId
    ? await getAgent(db, agentId).then((a) => a && { ...a, ownerId: a.agentId, agentId: a.agentId })
    : await getAccount(db, accountId).then((a) => a && { ...a, ownerId: a.accountId, agentId: null });
  if (!owner) {
    throw new DomainError('ACCOUNT_NOT_FOUND', `no ${agentId ? 'agent' : 'account'} for these credentials`);
  }
  const session = currentSession(owner, await getWallet(db, owner.ownerId));
  return {
    accountId: owner.accountId,
    agentId: owner.agentId,
    displayName: owner.displayName,
    status: owner.status,
    startingBalance: session.startingBalance,
    currentSession: { sessionId: session.sessionId, startedAt: session.startedAt },
    riskProfile: owner.riskProfile,
    ...feeRatesIn(call),
    createdAt: owner.createdAt,
  };
};

/**
 * Replaces the risk limits of the account or the scoped agent; they apply to the next order. Refused for an
 * archived agent's key (`PERMISSION_DENIED`). Returns the profile in force.
 */
export const updateRiskProfile = async (call: Call, input: Partial<RiskProfile>): Promise<RiskProfile> => {
  assertAgentActive(call.caller);
  const { accounts, agents } = identity(call.services);
  const { accountId, agentId } = call.caller;
  if (agentId) {
    const result = await settled(
      call,
      agents.updateRiskProfile(accountId, agentId, input, commandMeta(call)),
    );
    return result.agent.riskProfile!;
  }
  const result = await settled(call, accounts.updateRiskProfile(accountId, input, commandMeta(call)));
  return result.account.riskProfile!;
};

/** One balance line: USDT or a held base asset (decimal strings, 8 places). */
export interface BalanceLine {
  asset: string;
  available: string;
  locked: string;
  total: string;
}

/**
 * Balances (USDT and every held asset: available, locked, total) and the total equity in USDT (spec "Balance":
 * cash + locked cash + positions at live prices; a holding without a price at its cost basis).
 */
export const balances = async (call: Call): Promise<{ balances: BalanceLine[]; totalEquityUsdt: string }> => {
  const { profile, wallet } = await prepared(call);
  if (!wallet) {
    const start = fmt(dec(profile.startingBalance));
    return {
      balances: [{ asset: 'USDT', available: start, locked: '0.00000000', total: start }],
      totalEquityUsdt: start,
    };
  }
  const { rows, positions } = await readSnapshot(call.services.database.db, async (trx) => ({
    rows: await getBalances(trx, profile.ownerId),
    positions: await getPositions(trx, profile.ownerId),
  }));
  const symbolOf = new Map(positions.map((p) => [p.asset, p.symbol]));
  let equity = ZERO;
  const lines = rows.map((b) => {
    const total = dec(b.available).plus(b.locked);
    if (b.asset === 'USDT') equity = equity.plus(total);
    else {
      const position = positions.find((p) => p.asset === b.asset);
      const mark = markOf(call)(symbolOf.get(b.asset) ?? `${b.asset}USDT`);
      equity = equity.plus(mark ? total.times(mark.price) : dec(position?.cost_basis ?? 0));
    }
    return {
      asset: b.asset,
      available: fmt(dec(b.available)),
      locked: fmt(dec(b.locked)),
      total: fmt(total),
    };
  });
  return { balances: lines, totalEquityUsdt: fmt(roundHalfEven8(equity)) };
};

/** One asset the venue lists, with the caller's holdings of it (decimal strings, 8 places). */
export interface AssetLine {
  asset: string;
  /** Whether an `active` listed pair trades it (USDT: whether any pair is active). */
  trading: boolean;
  available: string;
  locked: string;
}

/**
 * The caller's balance lines (`available`, `locked`: decimal strings, 8 places; USDT first, then by asset) as
 * {@link balances} gives them, read from the balances read model alone after the caller's own writes are in it: one
 * statement, where {@link balances} also reads the owner's profile and wallet and values positions at marks. A wallet
 * that has no line yet (never opened) is {@link balances}'s answer (the starting balance in USDT; its errors). A
 * wallet still on an older owner session is brought into step by the reset that started the new one
 * (`resetAgent` syncs before it answers), so this read does not sync it again.
 */
const heldBalances = async (call: Call): Promise<Omit<BalanceLine, 'total'>[]> => {
  await settleOwnWrites(call, WALLET_MODELS);
  const rows = await getBalances(call.services.database.db, ownerIdOf(call.caller));
  if (rows.length === 0) return (await balances(call)).balances;
  return rows.map((b) => ({ asset: b.asset, available: fmt(dec(b.available)), locked: fmt(dec(b.locked)) }));
};

/**
 * Every asset the venue lists, with the caller's holdings of it: USDT (the quote asset of every pair) first, then
 * each listed pair's base asset in the market's order (`MarketServices.pairs`), each once; an asset the wallet holds
 * whose pair is no longer listed last (`trading` false). `available` and `locked` are {@link balances}'s lines (the
 * balances read model, after the caller's own writes; one statement, {@link heldBalances}), `"0.00000000"` for an
 * asset not held. Without market data, the held assets alone. Errors: those of {@link balances}.
 */
export const assetBalances = async (call: Call): Promise<AssetLine[]> => {
  const held = new Map((await heldBalances(call)).map((b) => [b.asset, b]));
  const pairs = call.services.market?.pairs() ?? [];
  const trading = new Map<string, boolean>([['USDT', pairs.some((p) => p.status === 'active')]]);
  for (const p of pairs) trading.set(p.baseAsset, trading.get(p.baseAsset) === true || p.status === 'active');
  for (const asset of held.keys()) if (!trading.has(asset)) trading.set(asset, false);
  const none = fmt(ZERO);
  return [...trading].map(([asset, trades]) => ({
    asset,
    trading: trades,
    available: held.get(asset)?.available ?? none,
    locked: held.get(asset)?.locked ?? none,
  }));
};

/** Open positions valued at live prices, and their total unrealized PnL (USDT). */
export const positions = async (call: Call) => {
  const { profile, wallet } = await prepared(call);
  const rows = wallet ? await getPositions(call.services.database.db, profile.ownerId) : [];
  const valued = holdingsOf(rows).map((h) => positionOut(h, markOf(call)(h.symbol)));
  const unrealized = valued.reduce((s, p) => s.plus(p._unrealized), ZERO);
  return { positions: valued.map(publicPosition), totalUnrealizedPnl: fmt(roundHalfEven8(unrealized)) };
};

/**
 * Writes historical snapshots a fold of `portfolio?as_of=` passed, a macrotask after the answer: a cache, so a
 * failure is only logged.
 */
const keepHistoryLater = (call: Call, offers: HistoryOffer[]): void => {
  setImmediate(() => {
    call.services.snapshots
      .writeHistory(offers)
      .catch((err) => call.services.logger.warn({ err }, 'historical wallet snapshots skipped'));
  });
};

/**
 * The portfolio snapshot now (read models, live prices), or with `asOf` the portfolio at that past time folded
 * from the wallet's event log (ARCHITECTURE §6 time travel; positions valued at the last fill's reference price of
 * each symbol at or before it), reading only the events before it, from the wallet's snapshot when that lies
 * entirely before it ({@link walletAsOf}).
 */
export const portfolio = async (call: Call, options: { asOf?: Date } = {}): Promise<PortfolioSnapshot> => {
  const { profile, wallet } = await prepared(call);
  if (!options.asOf) return portfolioSnapshot(call.services, { profile, wallet });
  const asOf = options.asOf;
  const spacing = historySpacing(call.services.config.SNAPSHOT_EVERY);
  const { state, revision, marks } = await walletAsOf(call.services.eventStore, profile.ownerId, asOf, {
    snapshots: call.services.snapshots,
    ...(spacing ? { history: { spacing, offer: (offers) => keepHistoryLater(call, offers) } } : {}),
  });
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
};

/** A PnL period (spec `GET /account/pnl`). */
export type PnlPeriod = '1d' | '7d' | '30d' | 'all';

const PERIOD_MS = { '1d': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;

/** The PnL breakdown of a period (spec "PnL breakdown"; decimal strings, `win_rate` a percentage). */
export interface PnlBreakdown {
  period: PnlPeriod;
  realizedPnl: string;
  unrealizedPnl: string;
  totalPnl: string;
  feesPaid: string;
  netPnl: string;
  winningTrades: number;
  losingTrades: number;
  winRate: string;
}

/**
 * PnL of the current session over a period: realized in the period, unrealized now (live prices); `net_pnl` =
 * `total_pnl` − `fees_paid`; win rate over the closing fills of the period.
 */
export const pnl = async (call: Call, period: PnlPeriod): Promise<PnlBreakdown> => {
  const { profile, wallet } = await prepared(call, [...WALLET_MODELS, 'orders']);
  const zero = '0.00000000';
  if (!wallet) {
    return {
      period,
      realizedPnl: zero,
      unrealizedPnl: zero,
      totalPnl: zero,
      feesPaid: zero,
      netPnl: zero,
      winningTrades: 0,
      losingTrades: 0,
      winRate: zero,
    };
  }
  const since = period === 'all' ? undefined : new Date(Date.now() - PERIOD_MS[period]);
  const { stats, held } = await readSnapshot(call.services.database.db, async (trx) => ({
    stats: await tradeStats(trx, profile.ownerId, wallet.wallet.session_id, since),
    held: await getPositions(trx, profile.ownerId),
  }));
  const unrealized = holdingsOf(held)
    .map((h) => positionOut(h, markOf(call)(h.symbol))._unrealized)
    .reduce((s: Dec, v) => s.plus(v), ZERO);
  const realized = dec(stats.realizedPnl);
  const fees = dec(stats.feesPaid);
  const total = realized.plus(unrealized);
  return {
    period,
    realizedPnl: fmt(roundHalfEven8(realized)),
    unrealizedPnl: fmt(roundHalfEven8(unrealized)),
    totalPnl: fmt(roundHalfEven8(total)),
    feesPaid: fmt(roundHalfEven8(fees)),
    netPnl: fmt(roundHalfEven8(total.minus(fees))),
    winningTrades: stats.winningTrades,
    losingTrades: stats.losingTrades,
    winRate: fmt(
      stats.closedTrades === 0
        ? ZERO
        : roundHalfEven8(dec(stats.winningTrades).div(stats.closedTrades).times(HUNDRED)),
    ),
  };
};

/** What `POST /account/reset` answers: the session that ended and the one that started. */
export interface ResetOutcome {
  previousSession: { sessionId: string; endingEquity: string; totalPnl: string; durationDays: number };
  newSession: { sessionId: string; startingBalance: string; startedAt: string };
}

/**
 * Closes every position at market, cancels every order and starts a new session (history kept), optionally with a
 * new starting balance (`new_starting_balance`, a decimal string in USDT). `confirm` must be true
 * (`VALIDATION_ERROR` 400 otherwise, spec "Account endpoints"); refused for an archived agent's key.
 */
export const resetAccount = async (
  call: Call,
  input: { confirm?: boolean | null | undefined; newStartingBalance?: string | number | undefined },
): Promise<ResetOutcome> => {
  // Resetting is a trading request (it closes positions at market): not with an archived agent's key.
  assertAgentActive(call.caller);
  if (input.confirm !== true) {
    throw new DomainError(
      'VALIDATION_ERROR',
      'reset needs "confirm": true: it closes every position and cancels every order',
      { issues: [{ field: 'confirm', location: 'body', message: 'must be true' }] },
      400,
    );
  }
  const startingBalance =
    input.newStartingBalance === undefined
      ? undefined
      : renamedField('new_starting_balance', () => normalizeStartingBalance(input.newStartingBalance));
  const { wallets } = trading(call.services);
  const owner = await wallets.profile(ownerOf(call));
  const outcome = await wallets.reset(ownerOf(call), startingBalance, commandMeta(call));
  await awaitReadModels(call, outcome.position);
  // The last WalletReset is this call's (one that brings the wallet into an agent's newer session first may
  // precede it).
  const ended = [...outcome.events].reverse().find((e) => e.type === 'WalletReset')?.data as WalletResetData;
  const started = [...outcome.events].reverse().find((e) => e.type === 'SessionStarted')
    ?.data as SessionStartedData;
  // The ended session began when the owner's did if it was the owner's session (the wallet opened in it at the
  // first order), as `/account/info` `current_session.started_at` showed it.
  const began =
    ended.previous_session_id === owner.sessionId
      ? Math.min(Date.parse(owner.sessionStartedAt), Date.parse(ended.previous_started_at))
      : Date.parse(ended.previous_started_at);
  const days = (Date.parse(ended.reset_at) - began) / 86_400_000;
  return {
    previousSession: {
      sessionId: ended.previous_session_id,
      endingEquity: ended.ending_equity,
      totalPnl: ended.total_pnl,
      durationDays: Math.round(days * 10_000) / 10_000,
    },
    newSession: {
      sessionId: started.session_id,
      startingBalance: started.starting_balance,
      startedAt: started.started_at,
    },
  };
};

/**
 * Runs `parse` (a shared normaliser that names its own field, e.g. `starting_balance`) and reports a
 * `VALIDATION_ERROR` under the request's field name instead, so the message and the issue match the request.
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

/** The caller's primary mode and live session (`GET /account/mode`). */
export interface ModeView {
  mode: TradingMode;
  strategyLabel: string | null;
  /** When the live session started (ISO 8601) and its equity now (USDT). */
  liveSession: { startedAt: string; currentEquity: string };
  /** Backtest sessions not yet finished (`created` or `running`), and the completed ones. */
  activeBacktests: number;
  completedBacktests: number;
}

/**
 * The primary mode (`live` or `backtest`), the live session with its current equity, and the caller's backtest
 * counts: the agent's with an agent key or `X-Agent-Id`, else every session of the account.
 */
export const mode = async (call: Call): Promise<ModeView> => {
  const { profile, wallet } = await prepared(call, [...WALLET_MODELS, 'backtests']);
  const [state, equity, backtests] = await Promise.all([
    trading(call.services).wallets.mode(profile.ownerId),
    equityOf(call, profile, wallet !== undefined),
    backtestCounts(call.services.database.db, ownerOf(call)),
  ]);
  return {
    mode: state.mode,
    strategyLabel: state.strategyLabel,
    liveSession: {
      startedAt: currentSession(profile, wallet).startedAt,
      currentEquity: fmt(roundHalfEven8(equity)),
    },
    activeBacktests: backtests.active,
    completedBacktests: backtests.completed,
  };
};

/** Current equity (cash + locked + positions at live prices) of a prepared owner. */
const equityOf = async (
  call: Call,
  profile: { ownerId: string; startingBalance: string },
  hasWallet: boolean,
): Promise<Dec> => {
  if (!hasWallet) return dec(profile.startingBalance);
  const { rows, held } = await readSnapshot(call.services.database.db, async (trx) => ({
    rows: await getBalances(trx, profile.ownerId),
    held: await getPositions(trx, profile.ownerId),
  }));
  const usdt = rows.find((b) => b.asset === 'USDT');
  let equity = dec(usdt?.available ?? 0).plus(usdt?.locked ?? 0);
  for (const h of holdingsOf(held)) equity = equity.plus(positionOut(h, markOf(call)(h.symbol))._value);
  return equity;
};

/**
 * A setting of the caller's wallet (its mode, its fill model): `command` is given the wallet commands, the owner and
 * the call's command metadata; answers the state it reports once the read models include it. Refused for an
 * archived agent's key (`assertAgentActive`), before anything is sent.
 */
const walletSetting = async <S>(
  call: Call,
  command: (
    wallets: ReturnType<typeof trading>['wallets'],
    owner: ReturnType<typeof ownerOf>,
    meta: CommandMeta,
  ) => Promise<{ state: S; position?: LogPosition | undefined }>,
): Promise<S> => {
  assertAgentActive(call.caller);
  const { wallets } = trading(call.services);
  return (await settled(call, command(wallets, ownerOf(call), commandMeta(call)))).state;
};

/** Switches the primary mode; active backtests keep running. Refused for an archived agent's key. */
export const setMode = (
  call: Call,
  input: { mode: TradingMode; strategyLabel: string | null },
): Promise<TradingModeState> =>
  walletSetting(call, (wallets, owner, meta) =>
    wallets.setMode(owner, input.mode, input.strategyLabel, meta),
  );

/** The wallet's fill model (`GET` / `PUT /account/fill-model`; docs/trading-rules.md, "Choosing a model"). */
export interface FillModelView {
  fillModel: FillModelName;
  participationPct: number;
}

/**
 * The caller's fill model: the wallet's as recorded, `realistic` (participation 10 %) for a wallet that never
 * traded (it opens with it).
 */
export const fillModel = async (call: Call): Promise<FillModelView> => {
  const wallets = trading(call.services).wallets;
  const profile = await wallets.profile(ownerOf(call));
  const { state } = await wallets.load(profile.ownerId);
  return state.opened
    ? { fillModel: state.fillModel, participationPct: state.participationPct }
    : {
        fillModel: call.services.config.FILL_MODEL ?? 'realistic',
        participationPct: DEFAULT_PARTICIPATION_PCT,
      };
};

/** Sets the caller's fill model from the next fill on. Refused for an archived agent's key. */
export const setFillModel = async (
  call: Call,
  input: { fillModel: string; participationPct?: number | undefined },
): Promise<FillModelView> => {
  const state = await walletSetting(call, (wallets, owner, meta) =>
    wallets.setFillModel(owner, input.fillModel, input.participationPct, meta),
  );
  return { fillModel: state.fillModel, participationPct: state.participationPct };
};

/** A page of the wallet's event log (auditors): events after revision `after`, at most `limit`. */
export const walletEvents = async (
  call: Call,
  page: { after: number; limit: number },
): Promise<{ streamId: string; events: RecordedEvent[]; nextAfter: number; hasMore: boolean }> => {
  const profile = await trading(call.services).wallets.profile(ownerOf(call));
  const streamId = walletStreamId(profile.ownerId);
  const events = await call.services.eventStore.readStream(streamId, {
    fromRevision: page.after + 1,
    maxCount: page.limit + 1,
  });
  const shown = events.slice(0, page.limit);
  return {
    streamId,
    events: shown,
    nextAfter: shown.length ? shown[shown.length - 1]!.revision : page.after,
    hasMore: events.length > page.limit,
  };
};

/**
 * The auditor's check of the caller's wallet: the SHA-256 chain of every event of its stream recomputed, no event
 * missing at its end, and the read models (balances, positions, open orders, session figures) against the fold of
 * the log up to the revision they include. Reads the whole stream.
 */
export const auditWallet = async (call: Call) => {
  await settleOwnWrites(call, [...WALLET_MODELS, 'orders']);
  const profile = await trading(call.services).wallets.profile(ownerOf(call));
  return auditWalletNow(call.services.eventStore, call.services.database.db, profile.ownerId);
};
