import type { BattleEvent } from '../../domain/battle/events';

/** The documented fields of a final ranking entry, in their order (docs/battles.md, spec "Battle endpoints"). */
export const RANKING_FIELDS = [
  'rank',
  'agent_id',
  'agent_name',
  'equity',
  'roi_pct',
  'total_pnl',
  'trade_count',
  'win_rate',
  'sharpe_ratio',
  'profit_factor',
];

/**
 * The `BattleCreated` event of a historical battle of account `acct` over one day of hourly BTCUSDT candles
 * (2022-01-01, 24 steps), 1,000 USDT each, ranked by ROI, created at `at`: the start of the battle-channel
 * message tests' histories.
 */
export const historicalBattleCreated = (battleId: string, name: string, at: string): BattleEvent => ({
  type: 'BattleCreated',
  data: {
    battle_id: battleId,
    account_id: 'acct',
    name,
    battle_mode: 'historical',
    starting_balance: '1000.00000000',
    duration_minutes: null,
    ranking_metric: 'roi_pct',
    backtest_config: {
      start_time: '2022-01-01T00:00:00.000Z',
      end_time: '2022-01-02T00:00:00.000Z',
      candle_interval: '1h',
      pairs_requested: null,
      pairs: ['BTCUSDT'],
      total_steps: 24,
    },
    fee_rate: '0.001',
    replay_of: null,
    created_at: at,
  },
});

/**
 * The `BattleStepped` event of the first `toStep` hourly steps of the battle of {@link historicalBattleCreated}
 * (virtual time from 2022-01-01T00:00Z, no fills), with `equity` per agent id (one string per step covered).
 */
export const historicalBattleStepped = (
  battleId: string,
  toStep: number,
  equity: Record<string, string[]>,
): BattleEvent => ({
  type: 'BattleStepped',
  data: {
    battle_id: battleId,
    from_step: 0,
    to_step: toStep,
    from_time: '2022-01-01T00:00:00.000Z',
    to_time: new Date(Date.UTC(2022, 0, 1, toStep)).toISOString(),
    equity,
    fills: 0,
  },
});
