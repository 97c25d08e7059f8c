import { DEFAULT_PARTICIPATION_PCT, type FillModelName } from '../fill-model/model';
import { INTERVAL_MS } from '../market/intervals';
import type { MetricsFill } from '../metrics/trades';
import type { RiskProfile } from '../shared/risk-profile';
import { evolveWallet, initialWalletState, type WalletState } from '../wallet/state';
import type {
  BattleConfigData,
  BattleEvent,
  PerformanceSummaryEntry,
  RankingEntry,
  ReplayFill,
} from './events';
import { metricsFillOf } from './rankings';

/** Statuses of a battle (spec "States and transitions / Battle"; `pending` is reserved and never entered). */
export type BattleStatus = 'draft' | 'pending' | 'active' | 'paused' | 'completed' | 'cancelled';

/** One participant as the battle knows it. */
export interface Participant {
  agentId: string;
  agentName: string;
  joinedAt: string;
  paused: boolean;
  /** Set at start. */
  riskProfile: RiskProfile | null;
  /** Historical: the sandbox wallet's fill model (set at start; `StartedParticipant.fill_model`). */
  fillModel: FillModelName;
  /** Historical: the sandbox wallet's participation share, % (set at start; `StartedParticipant.participation_pct`). */
  participationPct: number;
  walletSessionId: string | null;
  walletRevision: number | null;
  /** Historical: the participant's sandbox wallet (the live wallet's state). */
  wallet: WalletState;
  /** Historical: equity at every step (index = step; step 0 = the starting balance). */
  equity: string[];
  /** Historical: the sandbox's fills, in execution order. */
  fills: MetricsFill[];
}

/** The fold of a `battle-{id}` stream: what decisions need. */
export interface BattleState {
  battleId: string | null;
  accountId: string | null;
  config: BattleConfigData | null;
  /** Taker fee rate fixed at creation (`BattleCreated.fee_rate`). */
  feeRate: string;
  /** Maker fee rate fixed at creation (`BattleCreated.maker_fee_rate`; absent: the taker rate). */
  makerFeeRate: string;
  replayOf: string | null;
  /** A replay of a historical battle: the original's fill settings by agent (`BattleCreated.replay_fills`). */
  replayFills: ReplayFill[] | null;
  /** Null before creation; `deleted` battles answer as unknown. */
  status: BattleStatus | null;
  /**
   * `status` just before the battle's `BattleCompleted` or `BattleCancelled` (`active` or `paused`); null until
   * then. The `previous_status` of its final `battle:status` (the battle WebSocket channel answers a subscribe to
   * a finished battle with it, without folding the stream again).
   */
  statusBeforeEnd: BattleStatus | null;
  deleted: boolean;
  /** In insertion order. */
  participants: Participant[];
  createdAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  /** `stopped`, `duration_elapsed`, `last_step` (completed) or `cancelled`. */
  completionReason: string | null;
  /** Historical: steps taken (0 after the start) and the virtual time (ms). */
  step: number;
  virtualTime: number | null;
  fingerprint: string | null;
  finalRankings: RankingEntry[] | null;
  /** Per-agent performance summaries stored with the final rankings. */
  summaries: PerformanceSummaryEntry[] | null;
}

export const initialBattleState = (): BattleState => ({
  battleId: null,
  accountId: null,
  config: null,
  feeRate: '0.001',
  makerFeeRate: '0.001',
  replayOf: null,
  replayFills: null,
  status: null,
  statusBeforeEnd: null,
  deleted: false,
  participants: [],
  createdAt: null,
  startedAt: null,
  endedAt: null,
  completionReason: null,
  step: 0,
  virtualTime: null,
  fingerprint: null,
  finalRankings: null,
  summaries: null,
});

const configOf = (d: BattleConfigData): BattleConfigData => ({
  name: d.name,
  battle_mode: d.battle_mode,
  starting_balance: d.starting_balance,
  duration_minutes: d.duration_minutes,
  ranking_metric: d.ranking_metric,
  backtest_config: d.backtest_config,
});

const updateParticipant = (
  state: BattleState,
  agentId: string,
  change: (p: Participant) => Participant,
): Participant[] => state.participants.map((p) => (p.agentId === agentId ? change(p) : p));

/** Length of one step of a historical battle (ms). */
export const intervalMsOf = (state: BattleState): number =>
  INTERVAL_MS[state.config?.backtest_config?.candle_interval ?? '1m'];

/** Folds one event of a battle stream (pure). */
export const evolveBattle = (state: BattleState, event: BattleEvent): BattleState => {
  switch (event.type) {
    case 'BattleCreated': {
      const d = event.data;
      return {
        ...initialBattleState(),
        battleId: d.battle_id,
        accountId: d.account_id,
        config: configOf(d),
        feeRate: d.fee_rate,
        makerFeeRate: d.maker_fee_rate ?? d.fee_rate,
        replayOf: d.replay_of,
        replayFills: d.replay_fills ?? null,
        status: 'draft',
        createdAt: d.created_at,
      };
    }
    case 'BattleConfigUpdated':
      return { ...state, config: configOf(event.data) };
    case 'BattleParticipantAdded':
      return {
        ...state,
        participants: [
          ...state.participants,
          {
            agentId: event.data.agent_id,
            agentName: event.data.agent_name,
            joinedAt: event.data.added_at,
            paused: false,
            riskProfile: null,
            fillModel: 'instant',
            participationPct: DEFAULT_PARTICIPATION_PCT,
            walletSessionId: null,
            walletRevision: null,
            wallet: initialWalletState(),
            equity: [],
            fills: [],
          },
        ],
      };
    case 'BattleParticipantRemoved':
      return { ...state, participants: state.participants.filter((p) => p.agentId !== event.data.agent_id) };
    case 'BattleStarted': {
      const d = event.data;
      const started = new Map(d.participants.map((p) => [p.agent_id, p]));
      const historical = state.config?.battle_mode === 'historical';
      return {
        ...state,
        status: 'active',
        startedAt: d.started_at,
        virtualTime: d.virtual_time === null ? null : Date.parse(d.virtual_time),
        fingerprint: d.data_fingerprint,
        step: 0,
        participants: state.participants.map((p) => {
          const s = started.get(p.agentId);
          return {
            ...p,
            riskProfile: s?.risk_profile ?? null,
            fillModel: s?.fill_model ?? 'instant',
            participationPct: s?.participation_pct ?? DEFAULT_PARTICIPATION_PCT,
            walletSessionId: s?.wallet_session_id ?? null,
            walletRevision: s?.wallet_revision ?? null,
            equity: historical ? [state.config!.starting_balance] : [],
          };
        }),
      };
    }
    case 'BattleAgentPaused':
    case 'BattleAgentResumed':
      return {
        ...state,
        status: event.data.status,
        participants: updateParticipant(state, event.data.agent_id, (p) => ({
          ...p,
          paused: event.type === 'BattleAgentPaused',
        })),
      };
    case 'BattleSnapshotRecorded':
      // Live snapshots are read from the `battle_snapshots` read model (unbounded with wall time: not state).
      return state;
    case 'BattleStepped': {
      const d = event.data;
      return {
        ...state,
        step: d.to_step,
        virtualTime: Date.parse(d.to_time),
        participants: state.participants.map((p) => ({
          ...p,
          equity: [...p.equity, ...(d.equity[p.agentId] ?? [])],
        })),
      };
    }
    case 'BattleSandboxEventRecorded':
      return {
        ...state,
        participants: updateParticipant(state, event.data.agent_id, (p) => ({
          ...p,
          wallet: evolveWallet(p.wallet, event.data.event),
          fills:
            event.data.event.type === 'OrderFilled'
              ? [...p.fills, metricsFillOf(event.data.event.data)]
              : p.fills,
        })),
      };
    case 'BattleCompleted':
      return {
        ...state,
        status: 'completed',
        statusBeforeEnd: state.status,
        endedAt: event.data.completed_at,
        completionReason: event.data.reason,
        finalRankings: event.data.final_rankings,
        summaries: event.data.summaries,
        participants: state.participants.map((p) => ({ ...p, paused: false })),
      };
    case 'BattleCancelled':
      return {
        ...state,
        status: 'cancelled',
        statusBeforeEnd: state.status,
        endedAt: event.data.cancelled_at,
        completionReason: 'cancelled',
      };
    case 'BattleDeleted':
      return { ...state, deleted: true, endedAt: event.data.deleted_at };
  }
};
