import { DEFAULT_PARTICIPATION_PCT, type FillModelName } from '../fill-model/model';
import type { Interval } from '../market/intervals';
import { INTERVAL_MS } from '../market/intervals';
import type { RiskProfile } from '../shared/risk-profile';
import { evolveWallet, initialWalletState, type WalletState } from '../wallet/state';
import type { BacktestStreamEvent } from './events';

/** Statuses of a session (spec "Backtest session"; ARCHITECTURE §14b). */
export type BacktestStatus = 'created' | 'running' | 'completed' | 'cancelled' | 'failed';

/** A session's configuration as recorded at creation (times in ms). */
export interface BacktestConfig {
  sessionId: string;
  accountId: string;
  agentId: string;
  strategyLabel: string | null;
  startTime: number;
  endTime: number;
  interval: Interval;
  intervalMs: number;
  startingBalance: string;
  pairs: string[];
  pairsRequested: string[] | null;
  totalSteps: number;
  riskProfile: RiskProfile;
  /** Taker fee rate (`BacktestCreated.fee_rate`). */
  feeRate: string;
  /** Maker fee rate (`BacktestCreated.maker_fee_rate`; absent: the taker rate). */
  makerFeeRate: string;
  /** The sandbox wallet's fill model (`BacktestCreated.fill_model`; absent: `instant`). */
  fillModel: FillModelName;
  /** The sandbox wallet's participation share, % (`BacktestCreated.participation_pct`; absent: 10). */
  participationPct: number;
  createdAt: string;
}

/**
 * The state of one session (the fold of its stream): what decisions need. The sandbox wallet is the live
 * wallet's state, folded by the live wallet's `evolve` from the same event types.
 */
export interface BacktestState {
  config: BacktestConfig | null;
  status: BacktestStatus | null;
  /** Steps taken: 0 after the start, `totalSteps` when complete. */
  step: number;
  /** Virtual time (ms): start + step × interval. */
  virtualTime: number;
  startedAt: string | null;
  endedAt: string | null;
  failure: string | null;
  fingerprint: string | null;
  wallet: WalletState;
}

export const initialBacktestState = (): BacktestState => ({
  config: null,
  status: null,
  step: 0,
  virtualTime: 0,
  startedAt: null,
  endedAt: null,
  failure: null,
  fingerprint: null,
  wallet: initialWalletState(),
});

/** Folds one event of a backtest stream (pure). */
export const evolveBacktest = (state: BacktestState, event: BacktestStreamEvent): BacktestState => {
  switch (event.type) {
    case 'BacktestCreated': {
      const d = event.data;
      const startTime = Date.parse(d.start_time);
      return {
        ...state,
        status: 'created',
        step: 0,
        virtualTime: startTime,
        config: {
          sessionId: d.session_id,
          accountId: d.account_id,
          agentId: d.agent_id,
          strategyLabel: d.strategy_label,
          startTime,
          endTime: Date.parse(d.end_time),
          interval: d.candle_interval,
          intervalMs: INTERVAL_MS[d.candle_interval],
          startingBalance: d.starting_balance,
          pairs: d.pairs,
          pairsRequested: d.pairs_requested,
          totalSteps: d.total_steps,
          riskProfile: d.risk_profile,
          feeRate: d.fee_rate,
          makerFeeRate: d.maker_fee_rate ?? d.fee_rate,
          fillModel: d.fill_model ?? 'instant',
          participationPct: d.participation_pct ?? DEFAULT_PARTICIPATION_PCT,
          createdAt: d.created_at,
        },
      };
    }
    case 'BacktestStarted':
      return {
        ...state,
        status: 'running',
        step: 0,
        virtualTime: Date.parse(event.data.virtual_time),
        startedAt: event.data.started_at,
        fingerprint: event.data.data_fingerprint,
      };
    case 'BacktestStepped':
      return { ...state, step: event.data.to_step, virtualTime: Date.parse(event.data.to_time) };
    case 'BacktestCompleted':
      return { ...state, status: 'completed', endedAt: event.data.ended_at };
    case 'BacktestCancelled':
      return { ...state, status: 'cancelled', endedAt: event.data.ended_at };
    case 'BacktestFailed':
      return { ...state, status: 'failed', failure: event.data.reason, endedAt: event.data.failed_at };
    default:
      return { ...state, wallet: evolveWallet(state.wallet, event) };
  }
};
