import type { CommandMeta } from '../../commands/metadata';
import type { OwnerRef } from '../../commands/wallet';
import { dec, fmt, ZERO } from '../../domain/trading/decimal';
import { walletStreamId } from '../../domain/wallet/events';
import { readSnapshot } from '../../queries/snapshot';
import { foldedRevision, getBalances, getPositions, getWallet } from '../../queries/trading';
import type { TradingProfile } from '../../queries/trading-profile';
import type { Services } from '../services';
import { holdingsOf, type Mark, portfolioOut } from '../trading/present';
import { syncWalletToOwner } from './wallet-sync';

/** A portfolio snapshot as `GET /account/portfolio` answers it (spec "Portfolio snapshot" plus our fields). */
export type PortfolioSnapshot = ReturnType<typeof portfolioOut>;

/** An owner's trading profile and wallet read model (`undefined` until the wallet's first command). */
export interface PreparedWallet {
  profile: TradingProfile;
  wallet: Awaited<ReturnType<typeof getWallet>>;
}

/** The live mark of a symbol: its current price (decimal) and source from the market feed, if any. */
export const liveMark = (services: Services, symbol: string): Mark | undefined => {
  const p = services.market?.feed.prices.get(symbol);
  return p ? { price: dec(p.price), source: p.source } : undefined;
};

/** The session an owner trades in now: its id, when it started (ISO 8601) and its starting balance (USDT). */
export interface CurrentSession {
  sessionId: string;
  startedAt: string;
  /** When the wallet's own session record began (ISO 8601): trading can only have happened since then. */
  walletStartedAt: string;
  startingBalance: string;
}

/**
 * The owner's current session as every account and analytics figure shows it (`/account/info`
 * `current_session`, `/account/mode` `live_session.started_at`, the `/analytics/performance` window). The
 * wallet is the truth once it follows the owner's session: `POST /account/reset` starts a wallet session of its
 * own (new id, its own start). A wallet session that *is* the owner's session (opened by the first trade, or
 * following an agent reset) began when the owner's session did: registration, agent creation or the agent
 * reset, not the first command that opened the wallet, so `started_at` does not move when the owner trades.
 */
export const currentSession = (
  owner: { sessionId: string; sessionStartedAt: string; startingBalance: string },
  wallet: PreparedWallet['wallet'],
): CurrentSession => {
  const ownerStart = new Date(owner.sessionStartedAt).toISOString();
  const session = wallet?.session;
  if (!session || wallet.wallet.owner_session_id !== owner.sessionId) {
    return {
      sessionId: owner.sessionId,
      startedAt: ownerStart,
      walletStartedAt: ownerStart,
      startingBalance: owner.startingBalance,
    };
  }
  const walletStart = new Date(session.started_at).toISOString();
  return {
    sessionId: session.session_id,
    startedAt: session.session_id === owner.sessionId && ownerStart < walletStart ? ownerStart : walletStart,
    walletStartedAt: walletStart,
    startingBalance: fmt(dec(session.starting_balance)),
  };
};

/**
 * The owner's profile and wallet read model, ready to be shown. A wallet that still follows an older owner
 * session (the agent was reset by `POST /agents/{id}/reset`) is brought into step first (`syncWalletToOwner`,
 * which may append the wallet's `WalletReset` under `meta`), so every figure shows the current session.
 */
export const prepareWallet = async (
  services: Services,
  owner: OwnerRef,
  meta: CommandMeta,
): Promise<PreparedWallet> => {
  const profile = await syncWalletToOwner(services, owner, meta);
  const wallet = await getWallet(services.database.db, profile.ownerId);
  return { profile, wallet };
};

/**
 * The portfolio snapshot of a prepared owner now, from the read models, positions valued at live prices
 * (`liveMark`; a holding without a price at its average entry price): the body of `GET /account/portfolio`
 * without `as_of`, and of the `portfolio` WebSocket channel's messages. Money fields are decimal strings with 8
 * places (USDT; `roi_pct` a percentage); `session_id` is the owner's current session, also before the first
 * trade; `timestamp` is now (ISO 8601); `revision` the wallet stream revision the read models include (-1: no
 * events yet), so it never claims events whose effects the figures do not show yet.
 */
export const portfolioSnapshot = async (
  services: Services,
  { profile }: PreparedWallet,
): Promise<PortfolioSnapshot> => {
  const markOf = (symbol: string) => liveMark(services, symbol);
  const stream = walletStreamId(profile.ownerId);
  // One snapshot of the read models: cash, positions, realized PnL and fees of the same folded revision, never
  // straddling a fill committed between two queries (the prepared wallet was read before, outside it).
  const { wallet, balances, positions, revision } = await readSnapshot(services.database.db, async (trx) => ({
    wallet: await getWallet(trx, profile.ownerId),
    balances: await getBalances(trx, profile.ownerId),
    positions: await getPositions(trx, profile.ownerId),
    revision: await foldedRevision(trx, stream),
  }));
  if (!wallet) {
    const start = dec(profile.startingBalance);
    return portfolioOut({
      cash: start,
      locked: ZERO,
      holdings: [],
      markOf,
      realizedPnl: ZERO,
      feesPaid: ZERO,
      startingBalance: start,
      // No wallet yet: the owner's current session (what /account/info shows), not null.
      sessionId: profile.sessionId,
      timestamp: new Date().toISOString(),
      asOf: null,
      revision,
    });
  }
  const usdt = balances.find((b) => b.asset === 'USDT');
  const session = wallet.session;
  return portfolioOut({
    cash: dec(usdt?.available ?? 0),
    locked: dec(usdt?.locked ?? 0),
    holdings: holdingsOf(positions),
    markOf,
    realizedPnl: dec(session?.realized_pnl ?? 0),
    feesPaid: dec(session?.fees_paid ?? 0),
    startingBalance: dec(session?.starting_balance ?? profile.startingBalance),
    sessionId: wallet.wallet.session_id,
    timestamp: new Date().toISOString(),
    asOf: null,
    revision,
  });
};
