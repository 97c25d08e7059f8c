import type { Kysely } from 'kysely';
import { DAY_MS } from '../../domain/metrics/decimal';
import { computePerformance, type Performance } from '../../domain/metrics/performance';
import { SNAPSHOT_INTERVALS, type SnapshotInterval } from '../../projections/equity-snapshots';
import type { ReadModels } from '../../projections/read-models';
import { sessionFills, sessionSnapshots } from '../../queries/analytics';
import { decimal8 } from '../../queries/format';

/** Periods of the analytics endpoints (spec), with their length in ms (`all`: the whole session). */
export const PERIOD_MS = {
  '1d': DAY_MS,
  '7d': 7 * DAY_MS,
  '30d': 30 * DAY_MS,
  '90d': 90 * DAY_MS,
  all: null,
} as const;
export type AnalyticsPeriod = keyof typeof PERIOD_MS;

/**
 * The snapshot interval whose returns the ratios of a period use (ARCHITECTURE §11: returns between
 * consecutive snapshots Δ apart): 1-minute snapshots for `1d` (a day has 24 hourly returns, fewer than the 30
 * the ratios need), hourly ones for the longer periods.
 */
export const returnsInterval = (period: AnalyticsPeriod): SnapshotInterval => (period === '1d' ? '1m' : '1h');

/** The wallet session a period is measured in. */
export interface WalletSession {
  ownerId: string;
  sessionId: string;
  /** ms since the epoch. */
  sessionStartedAt: number;
  /**
   * When the wallet's record of the session began (ms; default `sessionStartedAt`): the wallet opens at the
   * owner's first order, later than the owner's session (registration, agent creation or agent reset) it trades
   * in. Equity is the starting balance until then.
   */
  walletStartedAt?: number;
  /** USDT decimal string. */
  startingBalance: string;
}

/** The time range of a period in a session (ms). */
export interface PeriodWindow {
  from: number;
  to: number;
  /**
   * The session (or the wallet's record of it) started inside the period: the curve opens with the starting
   * balance (at the wallet's start, see `walletPerformance`).
   */
  opensWithSession: boolean;
}

/**
 * The window of `period` ending at `now`, clipped to the current session (a reset starts a new session with a
 * new balance, so returns and trades are never mixed across sessions; the same scope as `GET /account/pnl`).
 * It opens with the starting balance when it starts at or before `walletStartedAt` (default: the session's
 * start): nothing was traded before the wallet's session record began.
 */
export const periodWindow = (
  period: AnalyticsPeriod,
  sessionStartedAt: number,
  now: number,
  walletStartedAt: number = sessionStartedAt,
): PeriodWindow => {
  const length = PERIOD_MS[period];
  const from = length === null ? sessionStartedAt : Math.max(now - length, sessionStartedAt);
  return { from, to: now, opensWithSession: from <= Math.max(walletStartedAt, sessionStartedAt) };
};

/** The equity curve and fills of a period, and the performance `domain/metrics` computes from them. */
export interface WalletPerformance {
  window: PeriodWindow;
  interval: SnapshotInterval;
  /** The equity the curve opens with (USDT, 8 places). */
  opening: string;
  performance: Performance;
}

/**
 * The performance of a wallet session over a period (ARCHITECTURE §11, `computePerformance`): the equity curve
 * is the session's snapshots at {@link returnsInterval} taken in the window, opened by the starting balance at
 * the wallet's start when the session (or the wallet's record of it) began inside the period; the fills are the
 * session's fills executed in the window, in execution order; per-day figures use the window's length.
 */
export const walletPerformance = async (
  db: Kysely<ReadModels>,
  session: WalletSession,
  period: AnalyticsPeriod,
  now: number,
): Promise<WalletPerformance> => {
  const window = periodWindow(period, session.sessionStartedAt, now, session.walletStartedAt);
  const interval = returnsInterval(period);
  const [snapshots, fills] = await Promise.all([
    sessionSnapshots(db, session.ownerId, session.sessionId, interval, window.from, window.to),
    sessionFills(db, session.ownerId, session.sessionId, window.from, window.to),
  ]);
  const equity = snapshots.map((s) => ({ time: new Date(s.time).getTime(), equity: s.total_equity }));
  // The starting balance opens the curve when the wallet traded only inside the window: at the wallet's start
  // (when the balance was last surely held, so a drawdown is timed from the first order, not from registration),
  // never after a snapshot (marks are stamped with their minute, which may precede the first order).
  const walletStart = Math.max(window.from, session.walletStartedAt ?? session.sessionStartedAt);
  const first = equity[0]?.time;
  if (window.opensWithSession && first !== walletStart) {
    equity.unshift({
      time: first !== undefined && first < walletStart ? first : walletStart,
      equity: session.startingBalance,
    });
  }
  const opening = equity[0]?.equity ?? session.startingBalance;
  return {
    window,
    interval,
    opening: decimal8(opening),
    performance: computePerformance({
      startingBalance: opening,
      equity,
      intervalMs: SNAPSHOT_INTERVALS[interval],
      fills,
      // Per-day figures over at least one day: a session minutes old would otherwise report its three fills
      // as thousands of trades per day.
      period: { start: Math.min(window.from, window.to - DAY_MS), end: window.to },
    }),
  };
};
