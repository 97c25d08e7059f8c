import { dec } from '../../domain/trading/decimal';
import { latestSnapshots } from '../../queries/analytics';
import { analytics } from '../analytics/install';
import { type Ranking, leaderboard as rankWallets } from '../analytics/leaderboard';
import { type AnalyticsPeriod, type WalletPerformance, walletPerformance } from '../analytics/performance';
import type { Call } from './call';
import { commandMeta, ownerOf } from './caller';
import { currentSession, prepareWallet } from './portfolio';
import { settleOwnWrites } from './read-your-writes';

/**
 * Analytics use cases (spec "Analytics endpoints", docs/analytics.md): performance metrics of a period, the equity
 * history, the leaderboard. Scoped like the account's figures: an agent key or a JWT with `X-Agent-Id` gives that
 * agent's wallet, otherwise the account's own.
 */

/** The read models the analytics of a wallet read: its session and fills, and its equity snapshots. */
const ANALYTICS_MODELS = ['wallets', 'orders', 'equity_snapshots'] as const;

/** The caller's prepared wallet after its own writes are in the analytics' read models. */
const prepared = async (call: Call) => {
  await settleOwnWrites(call, ANALYTICS_MODELS);
  return prepareWallet(call.services, ownerOf(call), commandMeta(call));
};

/** Who a wallet's analytics belong to. */
export interface AnalyticsOwner {
  accountId: string;
  agentId: string | null;
}

/**
 * Performance metrics of the current session over `period` (ARCHITECTURE §11): ratios from the returns between
 * equity snapshots (1-minute snapshots for `1d`, hourly ones otherwise), trade figures from the fills of the
 * period, the period clipped to the current session (which begins with the owner's session, not at the first
 * order).
 */
export const performance = async (
  call: Call,
  period: AnalyticsPeriod,
): Promise<{ owner: AnalyticsOwner; result: WalletPerformance }> => {
  const { profile, wallet } = await prepared(call);
  const session = currentSession(profile, wallet);
  const result = await walletPerformance(
    call.services.database.db,
    {
      ownerId: profile.ownerId,
      sessionId: session.sessionId,
      sessionStartedAt: Date.parse(session.startedAt),
      walletStartedAt: Date.parse(session.walletStartedAt),
      startingBalance: session.startingBalance,
    },
    period,
    analytics(call.services).now(),
  );
  return { owner: { accountId: profile.accountId, agentId: profile.agentId }, result };
};

/** Equity snapshots of the caller's wallet at `interval`, the newest `limit`, oldest first (every session). */
export const portfolioHistory = async (
  call: Call,
  query: { interval: '1m' | '1h' | '1d'; limit: number },
) => {
  const { profile } = await prepared(call);
  const rows = await latestSnapshots(call.services.database.db, profile.ownerId, query.interval, query.limit);
  return { owner: { accountId: profile.accountId, agentId: profile.agentId }, rows };
};

/**
 * The top 50 wallets by ROI over `period` (active accounts and agents with a closed trade in it), equity valued at
 * live prices. Public to every authenticated caller; shows no balance figures.
 */
export const leaderboard = async (call: Call, period: AnalyticsPeriod): Promise<Ranking[]> => {
  await settleOwnWrites(call, ANALYTICS_MODELS);
  const feed = call.services.market?.feed;
  return rankWallets(call.services.database.db, period, analytics(call.services).now(), (symbol) => {
    const p = feed?.prices.get(symbol);
    return p ? dec(p.price) : undefined;
  });
};
