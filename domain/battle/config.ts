import { totalSteps } from '../backtest/clock';
import type { BacktestCatalog } from '../backtest/commands';
import { resolveSessionPairs } from '../backtest/pairs';
import { normalizeSymbol } from '../market/pair';
import { DomainError, isDomainError } from '../shared/errors';
import { normalizeStartingBalance } from '../shared/starting-balance';
import {
  BATTLE_INTERVALS,
  type BattleConfigData,
  type BattleInterval,
  type BattleMode,
  RANKING_METRICS,
  type RankingMetric,
} from './events';

/** The historical configuration as the client sent it (times already parsed to ms). */
export interface BacktestConfigRequest {
  startTime: number;
  endTime: number;
  candleInterval: string;
  /** Symbols, or null for every pair with data in the range. */
  pairs: string[] | null;
}

/** A battle configuration as the client sent it (spec "POST /battles"), defaults not yet applied. */
export interface BattleRequest {
  name: string;
  battleMode?: BattleMode;
  startingBalance?: string | number;
  durationMinutes?: number | null;
  rankingMetric?: RankingMetric;
  backtestConfig?: BacktestConfigRequest | null;
}

/** Longest `duration_minutes` accepted: one year (a design bound; the spec gives none). */
export const MAX_DURATION_MINUTES = 525_600;

const invalid = (field: string, message: string) => new DomainError('VALIDATION_ERROR', message, { field });

/**
 * Validates a battle configuration and applies the spec's defaults (spec "POST /battles"): `battle_mode` `live`,
 * `starting_balance` `10000.00` USDT (> 0, ≤ 8 places), `ranking_metric` `roi_pct`, `duration_minutes` a positive
 * integer or null (live only: a historical battle ends on its last step, so it must be null there). A historical
 * battle needs `backtest_config`: `start_time` < `end_time` at least one interval apart, `candle_interval` one of
 * `1m 5m 1h 1d`, `pairs` an array or null, resolved against the market data like a backtest's (ARCHITECTURE §9;
 * the range inside the stored data). Data errors answer `VALIDATION_ERROR` 422 naming `backtest_config` (an
 * unknown pair `INVALID_SYMBOL` 400). A live battle must not carry `backtest_config`.
 */
export const validateBattleConfig = (
  request: BattleRequest,
  catalog: BacktestCatalog | undefined,
): BattleConfigData => {
  const name = request.name.trim();
  if (name.length < 1 || name.length > 100) throw invalid('name', 'name must have 1 to 100 characters');
  const mode = request.battleMode ?? 'live';
  const metric = request.rankingMetric ?? 'roi_pct';
  if (!RANKING_METRICS.includes(metric)) {
    throw invalid('ranking_metric', `ranking_metric must be one of ${RANKING_METRICS.join(', ')}`);
  }
  const duration = request.durationMinutes ?? null;
  if (duration !== null && (!Number.isInteger(duration) || duration < 1 || duration > MAX_DURATION_MINUTES)) {
    throw invalid(
      'duration_minutes',
      `duration_minutes must be an integer from 1 to ${MAX_DURATION_MINUTES}, or null`,
    );
  }
  const startingBalance = normalizeStartingBalance(request.startingBalance);
  const base = { name, battle_mode: mode, starting_balance: startingBalance, ranking_metric: metric };
  if (mode === 'live') {
    if (request.backtestConfig) {
      throw invalid('backtest_config', 'backtest_config is only for historical battles');
    }
    return { ...base, duration_minutes: duration, backtest_config: null };
  }
  if (duration !== null) {
    throw invalid(
      'duration_minutes',
      'a historical battle ends on its last step: duration_minutes must be null',
    );
  }
  const bc = request.backtestConfig;
  if (!bc) throw invalid('backtest_config', 'a historical battle needs backtest_config');
  if (!(BATTLE_INTERVALS as readonly string[]).includes(bc.candleInterval)) {
    throw invalid(
      'backtest_config.candle_interval',
      `candle_interval must be one of ${BATTLE_INTERVALS.join(', ')}`,
    );
  }
  const interval = bc.candleInterval as BattleInterval;
  if (!Number.isFinite(bc.startTime) || !Number.isFinite(bc.endTime) || bc.startTime >= bc.endTime) {
    throw invalid('backtest_config.start_time', 'start_time must be before end_time');
  }
  const steps = totalSteps(bc.startTime, bc.endTime, interval);
  if (steps < 1) {
    throw invalid('backtest_config.end_time', `end_time must be at least one ${interval} after start_time`);
  }
  if (!catalog) throw new DomainError('SERVICE_UNAVAILABLE', 'market data is not available on this server');
  let pairs: string[];
  try {
    pairs = resolveSessionPairs(catalog, interval, bc.startTime, bc.endTime, bc.pairs);
  } catch (error) {
    if (isDomainError(error) && error.code === 'BACKTEST_NO_DATA') {
      // The details say where the data is (`earliest`, `latest`; resolveSessionPairs), as a backtest's do.
      throw new DomainError('VALIDATION_ERROR', error.message, {
        ...error.details,
        field: 'backtest_config',
      });
    }
    if (isDomainError(error) && error.code === 'VALIDATION_ERROR') {
      throw invalid('backtest_config.pairs', error.message);
    }
    throw error;
  }
  return {
    ...base,
    duration_minutes: null,
    backtest_config: {
      start_time: new Date(bc.startTime).toISOString(),
      end_time: new Date(bc.endTime).toISOString(),
      candle_interval: interval,
      // As requested, each pair once (in the order first named), as a backtest's `pairs` are.
      pairs_requested: bc.pairs === null ? null : [...new Set(bc.pairs.map(normalizeSymbol))],
      pairs,
      total_steps: steps,
    },
  };
};

/** The request that reproduces a recorded configuration (replay, partial updates). */
export const requestOf = (config: BattleConfigData): BattleRequest => ({
  name: config.name,
  battleMode: config.battle_mode,
  startingBalance: config.starting_balance,
  durationMinutes: config.duration_minutes,
  rankingMetric: config.ranking_metric,
  backtestConfig: config.backtest_config
    ? {
        startTime: Date.parse(config.backtest_config.start_time),
        endTime: Date.parse(config.backtest_config.end_time),
        candleInterval: config.backtest_config.candle_interval,
        pairs: config.backtest_config.pairs_requested,
      }
    : null,
});
