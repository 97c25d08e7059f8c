import type { LoadedBattle } from '../../commands/battle';
import type { BacktestConfigData, RankingEntry } from '../../domain/battle/events';
import type { BattleState } from '../../domain/battle/state';
import { dec, fmt, roundHalfEven8 } from '../../domain/trading/decimal';
import type { BattleRow, ParticipantRow } from '../../queries/battles';

const iso = (v: Date | string | number | null): string | null =>
  v === null ? null : new Date(v).toISOString();

const backtestConfigOut = (bc: BacktestConfigData | null) =>
  bc
    ? {
        start_time: bc.start_time,
        end_time: bc.end_time,
        candle_interval: bc.candle_interval,
        pairs: bc.pairs_requested,
        resolved_pairs: bc.pairs,
        total_steps: bc.total_steps,
      }
    : null;

/**
 * A ranking entry with its fields in the documented order (`rankingEntry`): entries read back from the database
 * (read models, stored events) come with their keys in storage order.
 */
export const rankingOut = (e: RankingEntry): RankingEntry => ({
  rank: e.rank,
  agent_id: e.agent_id,
  agent_name: e.agent_name,
  equity: e.equity,
  roi_pct: e.roi_pct,
  total_pnl: e.total_pnl,
  trade_count: e.trade_count,
  win_rate: e.win_rate,
  sharpe_ratio: e.sharpe_ratio,
  profit_factor: e.profit_factor,
});

/** A decimal string in the wire's 8 places. */
const d8 = (v: string): string => fmt(roundHalfEven8(dec(v)));

/** A battle on the wire (`battleResponse`) from its state (the fold of its stream): command answers, detail. */
export const battleOut = (battle: LoadedBattle) => {
  const s: BattleState = battle.state;
  const c = s.config!;
  const historical = c.battle_mode === 'historical';
  return {
    battle_id: battle.id,
    id: battle.id,
    name: c.name,
    status: s.status!,
    battle_mode: c.battle_mode,
    starting_balance: c.starting_balance,
    duration_minutes: c.duration_minutes,
    ranking_metric: c.ranking_metric,
    backtest_config: backtestConfigOut(c.backtest_config),
    participants: s.participants.map((p) => ({
      agent_id: p.agentId,
      agent_name: p.agentName,
      status: p.paused ? ('paused' as const) : ('active' as const),
      joined_at: p.joinedAt,
      // What the sandbox fills with, recorded at start (StartedParticipant).
      ...(historical && s.startedAt !== null
        ? { fill_model: p.fillModel, participation_pct: p.participationPct }
        : {}),
    })),
    final_rankings: s.finalRankings?.map(rankingOut) ?? null,
    replay_of: s.replayOf,
    created_at: s.createdAt!,
    started_at: s.startedAt,
    ended_at: s.endedAt,
    completion_reason: s.completionReason,
    fee_rate: d8(s.feeRate),
    maker_fee_rate: d8(s.makerFeeRate),
    step: historical ? s.step : null,
    virtual_time: historical && s.virtualTime !== null ? iso(s.virtualTime) : null,
  };
};

/** A battle on the wire from its read-model rows (`GET /battles`). */
export const battleRowOut = (row: BattleRow, participants: readonly ParticipantRow[]) => {
  const historical = row.battle_mode === 'historical';
  const bc = row.backtest_config as BacktestConfigData | null;
  return {
    battle_id: row.battle_id,
    id: row.battle_id,
    name: row.name,
    status: row.status as ReturnType<typeof battleOut>['status'],
    battle_mode: row.battle_mode as 'live' | 'historical',
    starting_balance: row.starting_balance,
    duration_minutes: row.duration_minutes,
    ranking_metric: row.ranking_metric as ReturnType<typeof battleOut>['ranking_metric'],
    backtest_config: backtestConfigOut(bc),
    participants: participants.map((p) => ({
      agent_id: p.agent_id,
      agent_name: p.agent_name,
      status: p.paused ? ('paused' as const) : ('active' as const),
      joined_at: iso(p.joined_at)!,
    })),
    final_rankings: (row.final_rankings as RankingEntry[] | null)?.map(rankingOut) ?? null,
    replay_of: row.replay_of,
    created_at: iso(row.created_at)!,
    started_at: iso(row.started_at),
    ended_at: iso(row.ended_at),
    completion_reason: row.completion_reason,
    fee_rate: d8(row.fee_rate),
    maker_fee_rate: d8(row.maker_fee_rate),
    step: historical ? row.step : null,
    virtual_time: historical ? iso(row.virtual_time) : null,
  };
};
