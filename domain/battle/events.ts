import type { FillModelName } from '../fill-model/model';
import type { Interval } from '../market/intervals';
import type { DomainEvent } from '../shared/decider';
import type { RiskProfile } from '../shared/risk-profile';
import type { WalletEvent } from '../wallet/events';

/** How a battle runs (spec "Battle": mode `live` or `historical`). */
export type BattleMode = 'live' | 'historical';

/** The metrics a battle may rank by (spec "Battle": ranking metrics). */
export const RANKING_METRICS = ['roi_pct', 'total_pnl', 'sharpe_ratio', 'win_rate', 'profit_factor'] as const;
export type RankingMetric = (typeof RANKING_METRICS)[number];

/** Candle intervals a historical battle may step at (spec "POST /battles": `1m`, `5m`, `1h`, `1d`). */
export const BATTLE_INTERVALS = ['1m', '5m', '1h', '1d'] as const satisfies readonly Interval[];
export type BattleInterval = (typeof BATTLE_INTERVALS)[number];

/** The historical configuration as recorded: the pairs resolved against the market data (ARCHITECTURE §9). */
export interface BacktestConfigData {
  start_time: string;
  end_time: string;
  candle_interval: BattleInterval;
  /** What the client asked for: a list, or null for every pair with data. */
  pairs_requested: string[] | null;
  /** The pairs the battle trades, resolved, sorted. */
  pairs: string[];
  /** floor((end − start) / interval). */
  total_steps: number;
}

/** A battle's configuration (spec "POST /battles"); editable while `draft`. */
export interface BattleConfigData {
  name: string;
  battle_mode: BattleMode;
  /** USDT per participant, 8 places. */
  starting_balance: string;
  /** Live mode: minutes until the battle stops by itself; null = no limit. */
  duration_minutes: number | null;
  ranking_metric: RankingMetric;
  /** Required for historical battles, null for live ones. */
  backtest_config: BacktestConfigData | null;
}

/** A ranked participant (spec "Live" ranking entry), decimal strings with 8 places. */
export interface RankingEntry {
  rank: number;
  agent_id: string;
  agent_name: string;
  /** USDT. */
  equity: string;
  /** %. */
  roi_pct: string;
  /** USDT, equity − starting balance (net of fees). */
  total_pnl: string;
  /** Fills inside the battle window. */
  trade_count: number;
  /** % of closed trades that won; null without closed trades. */
  win_rate: string | null;
  /** Null with fewer than 30 returns or zero deviation (ARCHITECTURE §11). */
  sharpe_ratio: string | null;
  /** Null without losing trades. */
  profit_factor: string | null;
}

/** Per-agent performance summary stored with the final rankings (spec "Results": per-agent summaries). */
export interface PerformanceSummaryEntry {
  agent_id: string;
  /** `Performance.summary` of `domain/metrics`. */
  summary: Record<string, unknown>;
  /** `Performance.metrics` of `domain/metrics`. */
  metrics: Record<string, unknown>;
}

/** What a participant starts with (recorded at start). */
export interface StartedParticipant {
  agent_id: string;
  /** Copied from the agent at start (historical sandboxes apply it; live wallets use the agent's own). */
  risk_profile: RiskProfile;
  /**
   * Historical: the agent wallet's fill model at start, which its sandbox fills with (live wallets use their own);
   * absent (battles started before 2026-11-25): `instant`.
   */
  fill_model?: FillModelName;
  /**
   * Historical: the agent wallet's participation share (%) at start, which its sandbox's resting orders fill with
   * under `realistic`; absent (battles started before 2026-11-28): 10.
   */
  participation_pct?: number;
  /** Live: the wallet session the battle started for the agent, and the wallet stream revision it began at. */
  wallet_session_id: string | null;
  wallet_revision: number | null;
}

/**
 * Events of the `battle-{battle_id}` stream (ARCHITECTURE §4, §10; catalogue in `docs/events.md`): config,
 * participants, state changes, pauses, historical steps, per-agent sandbox events (historical), equity snapshots
 * (live) and final rankings. Money is decimal strings with 8 places; times ISO 8601 UTC.
 */
export type BattleEvent =
  | DomainEvent<'BattleCreated', BattleCreatedData>
  | DomainEvent<'BattleConfigUpdated', BattleConfigUpdatedData>
  | DomainEvent<'BattleParticipantAdded', BattleParticipantAddedData>
  | DomainEvent<'BattleParticipantRemoved', BattleParticipantRemovedData>
  | DomainEvent<'BattleStarted', BattleStartedData>
  | DomainEvent<'BattleAgentPaused', BattleAgentPauseData>
  | DomainEvent<'BattleAgentResumed', BattleAgentPauseData>
  | DomainEvent<'BattleSnapshotRecorded', BattleSnapshotRecordedData>
  | DomainEvent<'BattleStepped', BattleSteppedData>
  | DomainEvent<'BattleSandboxEventRecorded', BattleSandboxEventRecordedData>
  | DomainEvent<'BattleCompleted', BattleCompletedData>
  | DomainEvent<'BattleCancelled', BattleCancelledData>
  | DomainEvent<'BattleDeleted', BattleDeletedData>;

/** A draft battle was created (by `POST /battles` or `POST /battles/{id}/replay`). */
export interface BattleCreatedData extends BattleConfigData {
  battle_id: string;
  account_id: string;
  /** Fee per fill as a fraction, fixed at creation (historical sandboxes): the taker rate. */
  fee_rate: string;
  /** The maker rate (resting limit fills), fixed at creation; absent (battles created before 2026-11-28): `fee_rate`. */
  maker_fee_rate?: string;
  /** The completed battle this draft copies (`POST /battles/{id}/replay`), else null. */
  replay_of: string | null;
  /**
   * A replay of a historical battle: each original participant's sandbox fill model and participation share as the
   * original started with them; the replay's start gives them to those agents instead of their wallets' current
   * settings, so the replay fills as its original did. Absent: a new battle, a live one's replay, or a replay
   * recorded before 2026-11-29 (its start read the wallets).
   */
  replay_fills?: ReplayFill[];
  created_at: string;
}

/** One participant's fill settings carried from a historical battle into its replay (`BattleCreated.replay_fills`). */
export interface ReplayFill {
  agent_id: string;
  fill_model: FillModelName;
  participation_pct: number;
}

/** The draft's configuration was replaced (the full configuration after the change). */
export interface BattleConfigUpdatedData extends BattleConfigData {
  battle_id: string;
  updated_at: string;
}

export interface BattleParticipantAddedData {
  battle_id: string;
  agent_id: string;
  /** The agent's display name when added (shown in rankings). */
  agent_name: string;
  added_at: string;
}

export interface BattleParticipantRemovedData {
  battle_id: string;
  agent_id: string;
  removed_at: string;
}

/** The battle started (status `active`): config locked; historical: the virtual clock at `start_time`. */
export interface BattleStartedData {
  battle_id: string;
  started_at: string;
  participants: StartedParticipant[];
  /** Historical: virtual time after the start (`start_time`), else null. */
  virtual_time: string | null;
  /** Historical: SHA-256 over the loaded candles (a continuation after a restart checks it), else null. */
  data_fingerprint: string | null;
}

/** One agent paused or resumed; `status` is the battle's status afterwards (`paused` while any agent is). */
export interface BattleAgentPauseData {
  battle_id: string;
  agent_id: string;
  status: 'active' | 'paused';
  at: string;
}

/** Live: the equity of every participant at `timestamp` (every 5 s while active; spec "Battle"). */
export interface BattleSnapshotRecordedData {
  battle_id: string;
  timestamp: string;
  participants: { agent_id: string; equity: string }[];
}

/**
 * Historical: the shared virtual clock advanced from `from_step` to `to_step`. `equity[agent_id][i]` is the agent's
 * equity at step `from_step + 1 + i`. The sandbox events of these steps precede it in the same append.
 */
export interface BattleSteppedData {
  battle_id: string;
  from_step: number;
  to_step: number;
  from_time: string;
  to_time: string;
  equity: Record<string, string[]>;
  fills: number;
}

/** Historical: one event of a participant's sandbox wallet (the live wallet's event types, at virtual time). */
export interface BattleSandboxEventRecordedData {
  battle_id: string;
  agent_id: string;
  event: WalletEvent;
}

/** Why a battle completed. */
export type CompletionReason = 'stopped' | 'duration_elapsed' | 'last_step';

/** The battle completed: ranked, `final_rankings` stored (spec "Stop"). */
export interface BattleCompletedData {
  battle_id: string;
  reason: CompletionReason;
  completed_at: string;
  /** Historical: the virtual time it ended at, else null. */
  virtual_time: string | null;
  final_rankings: RankingEntry[];
  summaries: PerformanceSummaryEntry[];
}

/** An active or paused battle was cancelled (`DELETE /battles/{id}`; kept, not ranked). */
export interface BattleCancelledData {
  battle_id: string;
  previous_status: 'active' | 'paused';
  cancelled_at: string;
}

/** A draft battle was deleted (`DELETE /battles/{id}`): it no longer exists for any endpoint. */
export interface BattleDeletedData {
  battle_id: string;
  deleted_at: string;
}

/** Every battle event type, for projections' `eventTypes`. */
export const BATTLE_EVENT_TYPES = [
  'BattleCreated',
  'BattleConfigUpdated',
  'BattleParticipantAdded',
  'BattleParticipantRemoved',
  'BattleStarted',
  'BattleAgentPaused',
  'BattleAgentResumed',
  'BattleSnapshotRecorded',
  'BattleStepped',
  'BattleSandboxEventRecorded',
  'BattleCompleted',
  'BattleCancelled',
  'BattleDeleted',
] as const satisfies readonly BattleEvent['type'][];

export const BATTLE_CATEGORY = 'battle';

/** Stream of one battle. */
export const battleStreamId = (battleId: string): string => `${BATTLE_CATEGORY}-${battleId}`;

/** The battle id of a battle stream, or undefined for another stream. */
export const battleOf = (streamId: string): string | undefined =>
  streamId.startsWith(`${BATTLE_CATEGORY}-`) ? streamId.slice(BATTLE_CATEGORY.length + 1) : undefined;
