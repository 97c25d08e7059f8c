import type { Kysely } from 'kysely';
import { valueWallet } from '../../domain/analytics/equity';
import { type Dec, dec, fmt, HUNDRED, roundHalfEven8, ZERO } from '../../domain/trading/decimal';
import type { ReadModels } from '../../projections/read-models';
import { firstSnapshotsSince, leaderboardCandidates, walletHoldings } from '../../queries/analytics';
import {
  type AnalyticsPeriod,
  PERIOD_MS,
  periodWindow,
  returnsInterval,
  walletPerformance,
} from './performance';

/** Most entries of the leaderboard (spec "Limits": leaderboard size). */
export const LEADERBOARD_SIZE = 50;

/** One ranked wallet (spec `GET /analytics/leaderboard` `rankings[]`, plus `agent_id`). No balance figures. */
export interface Ranking {
  rank: number;
  account_id: string;
  agent_id: string | null;
  display_name: string;
  roi_pct: string;
  sharpe_ratio: string | null;
  total_trades: number;
  win_rate: string | null;
}

/**
 * The leaderboard of a period (spec "Analytics endpoints"; ranks computed at query time, ARCHITECTURE §6).
 * Candidates: every wallet (an account's own, or an agent's) of an active account, and of an active agent,
 * with at least one closed trade in the period of its current session. ROI = (equity now − opening equity) /
 * opening equity × 100, equity now valued like `GET /account/portfolio` (live prices; a position without one
 * at its cost basis) and the opening equity that of `walletPerformance` (the starting balance when the session
 * began in the period, else the first snapshot of the period); for `all` this is the portfolio's `roi_pct`.
 * Sorted by ROI descending (ties by owner id, sharing a rank), the first {@link LEADERBOARD_SIZE} get the
 * Sharpe ratio, fill count and win rate of their `walletPerformance`.
 */
export const leaderboard = async (
  db: Kysely<ReadModels>,
  period: AnalyticsPeriod,
  now: number,
  priceOf: (symbol: string) => Dec | undefined,
): Promise<Ranking[]> => {
  const length = PERIOD_MS[period];
  const candidates = await leaderboardCandidates(db, length === null ? 0 : now - length, now);
  if (candidates.length === 0) return [];
  const interval = returnsInterval(period);
  const [firsts, holdings] = await Promise.all([
    firstSnapshotsSince(db, candidates, interval, length === null ? 0 : now - length),
    walletHoldings(
      db,
      candidates.map((c) => c.ownerId),
    ),
  ]);
  const scored = candidates.map((c) => {
    const window = periodWindow(period, c.sessionStartedAt.getTime(), now);
    const opening = dec(
      window.opensWithSession
        ? c.startingBalance
        : (firsts.get(c.ownerId)?.total_equity ?? c.startingBalance),
    );
    const h = holdings.get(c.ownerId)!;
    const { equity } = valueWallet(
      dec(h.cash),
      h.positions.map((p) => ({ symbol: p.symbol, quantity: dec(p.quantity), cost: dec(p.cost) })),
      priceOf,
    );
    const roi = opening.isZero() ? ZERO : roundHalfEven8(equity.minus(opening).div(opening).times(HUNDRED));
    return { candidate: c, roi };
  });
  scored.sort((a, b) => b.roi.comparedTo(a.roi) || (a.candidate.ownerId < b.candidate.ownerId ? -1 : 1));
  const top = scored.slice(0, LEADERBOARD_SIZE);
  const performances = await Promise.all(
    top.map(({ candidate: c }) =>
      walletPerformance(
        db,
        {
          ownerId: c.ownerId,
          sessionId: c.sessionId,
          sessionStartedAt: c.sessionStartedAt.getTime(),
          startingBalance: c.startingBalance,
        },
        period,
        now,
      ),
    ),
  );
  let rank = 0;
  return top.map(({ candidate: c, roi }, i) => {
    if (i === 0 || !roi.eq(top[i - 1]!.roi)) rank = i + 1;
    const p = performances[i]!.performance;
    return {
      rank,
      account_id: c.accountId,
      agent_id: c.agentId,
      display_name: c.displayName,
      roi_pct: fmt(roi),
      sharpe_ratio: p.metrics.sharpe_ratio,
      total_trades: p.summary.total_trades,
      win_rate: p.metrics.win_rate,
    };
  });
};
