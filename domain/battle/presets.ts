/** A built-in battle preset (spec "Presets"). */
export interface BattlePreset {
  name: string;
  battle_mode: 'live' | 'historical';
  /** Live presets: minutes, null = unlimited; historical presets: null. */
  duration_minutes: number | null;
  /** USDT per agent. */
  starting_balance: string;
  /** Historical presets: the span of market time replayed (days) and the candle interval. */
  historical_days: number | null;
  candle_interval: '1m' | '5m' | '1h' | null;
}

/**
 * The presets table of the spec ("Presets", exactly): five live presets (duration, starting balance) and three
 * historical ones (span, candle interval; starting balance the default 10,000 USDT). A historical preset names a
 * span, not dates: the client picks `start_time` and sets `end_time` = start + `historical_days`.
 */
export const BATTLE_PRESETS: Readonly<Record<string, BattlePreset>> = {
  quick_1h: live('Quick Sprint', 60, '10000.00'),
  day_trader: live('Day Trader', 24 * 60, '10000.00'),
  marathon: live('Marathon', 7 * 24 * 60, '10000.00'),
  scalper_duel: live('Scalper Duel', 4 * 60, '5000.00'),
  survival: live('Survival Mode', null, '10000.00'),
  historical_day: historical('Historical Day', 1, '1m'),
  historical_week: historical('Historical Week', 7, '5m'),
  historical_month: historical('Historical Month', 30, '1h'),
};

function live(name: string, minutes: number | null, balance: string): BattlePreset {
  return {
    name,
    battle_mode: 'live',
    duration_minutes: minutes,
    starting_balance: balance,
    historical_days: null,
    candle_interval: null,
  };
}

function historical(name: string, days: number, interval: '1m' | '5m' | '1h'): BattlePreset {
  return {
    name,
    battle_mode: 'historical',
    duration_minutes: null,
    starting_balance: '10000.00',
    historical_days: days,
    candle_interval: interval,
  };
}
