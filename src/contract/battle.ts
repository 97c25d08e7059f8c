import { z } from 'zod';
import type { BattleChanges } from '../../commands/battle';
import { MAX_BATCH_STEPS } from '../../domain/backtest/clock';
import { type BattleRequest, MAX_DURATION_MINUTES } from '../../domain/battle/config';
import { BATTLE_INTERVALS, RANKING_METRICS } from '../../domain/battle/events';
import { BATTLE_PRESETS } from '../../domain/battle/presets';
import { FILL_MODELS } from '../../domain/fill-model/model';
import { parseIsoTime } from '../../domain/market/time';
import { DomainError, nestedUnder } from '../../domain/shared/errors';
import { decimalText } from '../../domain/trading/decimal';
import {
  decimalOutput,
  intervalInput,
  intervalText,
  queryInt,
  startingBalanceInput,
  timestamp,
} from './common';
import { placeOcoBody, placeOrderBody } from './trading';

/** `{id}` path parameter: any string (an unknown or malformed id is `BATTLE_NOT_FOUND` 404). */
export const battleParams = z.object({ id: z.string().min(1).max(100).describe('battle id (UUID)') });
/** `{id}/trade/order/{order_id}` path parameters of a historical battle's sandbox order. */
export const battleOrderParams = battleParams.extend({
  order_id: z.string().min(1).max(100).describe('order id (UUID)'),
});
export const battleAgentParams = battleParams.extend({
  agent_id: z.string().min(1).max(100).describe('agent id (UUID)'),
});

/** Statuses of a battle (spec "States and transitions / Battle"; `pending` is reserved and never entered). */
export const BATTLE_STATUSES = ['draft', 'pending', 'active', 'paused', 'completed', 'cancelled'] as const;

const backtestConfigBody = z
  .object({
    start_time: z.string().min(1).max(40).describe('ISO 8601 (UTC when no zone is given)'),
    end_time: z
      .string()
      .min(1)
      .max(40)
      .describe(
        'ISO 8601, after start_time (with a historical `preset`: start_time + its days when omitted)',
      ),
    candle_interval: intervalInput.describe(
      `one of ${BATTLE_INTERVALS.join(', ')}, or seconds (60, 300, 3600, 86400); with a \`preset\`: its interval when omitted`,
    ),
    pairs: z
      .array(z.string().trim().min(1).max(30))
      .max(1000)
      .nullable()
      .optional()
      .describe('symbols, or null / absent for every pair with data in the range'),
  })
  // Each of the three is required in the end; a `preset` may fill the interval and the end (see battleChangesOf).
  .partial({ start_time: true, end_time: true, candle_interval: true })
  .strict();

const configFields = {
  name: z.string().max(200).describe('1–100 characters'),
  battle_mode: z.enum(['live', 'historical']).describe('`live` (default) or `historical`'),
  starting_balance: startingBalanceInput('per agent, default "10000.00"'),
  duration_minutes: z
    .number()
    .int()
    .nullable()
    .describe(
      `live mode: minutes until the battle stops by itself, an integer from 1 to ${MAX_DURATION_MINUTES}; null = no time limit`,
    ),
  ranking_metric: z.enum(RANKING_METRICS).describe('default `roi_pct`'),
  backtest_config: backtestConfigBody
    .nullable()
    .describe('required for historical battles: start_time, end_time, candle_interval, pairs'),
};

const PRESET_KEYS = Object.keys(BATTLE_PRESETS) as [string, ...string[]];

/**
 * The configuration fields nested under `config`, as the original clients send them (docs/compatibility.md); each
 * optional, as at the top level (a preset or the defaults fill the others).
 */
const nestedConfig = z.object(configFields).partial().strict();

/**
 * The fields of a battle configuration body: the spec's (top level), and the original clients' `preset` and
 * `config` (docs/compatibility.md). Precedence: the preset's values, then `config`'s, then the top-level fields.
 */
export const battleBodyObject = z
  .object({
    ...nestedConfig.shape,
    preset: z
      .enum(PRESET_KEYS)
      .optional()
      .describe('a key of `GET /battles/presets`: fills the fields it names (explicit fields win)'),
    config: nestedConfig
      .nullable()
      .optional()
      .describe("the configuration fields nested in one object (the original clients' form)"),
  })
  .strict();

/** `POST /battles` body (spec; `name` required unless a `preset` or `config.name` gives it). */
export const createBattleBody = battleBodyObject.superRefine((b, ctx) => {
  if (b.name === undefined && b.config?.name === undefined && b.preset === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['name'],
      message: 'Invalid input: expected string, received undefined',
    });
  }
});

/** `PUT /battles/{id}` body: any of the create fields (absent = unchanged); at least one. */
export const updateBattleBody = battleBodyObject.refine(
  (b) => Object.values(b).some((v) => v !== undefined),
  { message: 'give at least one field to change' },
);

/** `POST /battles/{id}/participants` body (spec). */
export const addParticipantBody = z
  .object({ agent_id: z.string().uuid().describe('an agent of the caller') })
  .strict();

/** The fields of a `POST /battles/{id}/replay` body (spec), both optional. */
export const replayFields = z
  .object({
    override_config: battleBodyObject
      .optional()
      .describe('configuration fields replacing the original ones, e.g. a new starting_balance'),
    agent_ids: z
      .array(z.string().uuid())
      .max(50)
      .optional()
      .describe('the participants of the new draft; the original agents when omitted'),
  })
  .strict();

/** `POST /battles/{id}/replay` body: both fields are optional, so the body is too (none: the battle as it was). */
export const replayBody = replayFields.nullish();

/** What a replay body asks for: the configuration overrides and the new participants (undefined: the original). */
export const replayRequestOf = (
  body: z.infer<typeof replayBody>,
): { overrides: BattleChanges; agentIds: string[] | undefined } => ({
  overrides: nestedUnder('override_config', () => battleChangesOf(body?.override_config ?? {})),
  agentIds: body?.agent_ids,
});

/** `GET /battles` query (ARCHITECTURE §14b). */
export const listBattlesQuery = z.object({
  status: z.enum(BATTLE_STATUSES).optional(),
  limit: queryInt({ min: 1, max: 200, default: 50 }),
  offset: queryInt({ min: 0, max: 1_000_000, default: 0 }),
});

/** `POST /battles/{id}/step/batch` body (spec: `steps` required; at most 100,000, ARCHITECTURE §14b). */
export const stepBatchBody = z
  .object({ steps: z.number().int().min(1).max(MAX_BATCH_STEPS).describe(`1 to ${MAX_BATCH_STEPS}`) })
  .strict();

const rankingEntry = z.object({
  rank: z.number().int(),
  agent_id: z.string(),
  agent_name: z.string(),
  equity: decimalOutput.describe('USDT: cash + locked + Σ quantity × price'),
  roi_pct: decimalOutput,
  total_pnl: decimalOutput.describe('USDT, equity − starting balance'),
  trade_count: z.number().int(),
  win_rate: decimalOutput.nullable().describe('% of closed (filled, reducing) trades that won'),
  sharpe_ratio: decimalOutput.nullable().describe('null with fewer than 30 returns'),
  profit_factor: decimalOutput.nullable(),
});

const participantOut = z.object({
  agent_id: z.string(),
  agent_name: z.string(),
  status: z.enum(['active', 'paused']).describe('paused: the agent cannot place orders in this battle'),
  joined_at: timestamp,
  fill_model: z
    .enum(FILL_MODELS)
    .optional()
    .describe(
      "historical, once started: the agent wallet's fill model its sandbox fills with (on one battle's answers)",
    ),
  participation_pct: z
    .number()
    .int()
    .optional()
    .describe("historical, once started: the agent wallet's participation share (%) its sandbox fills with"),
});

/** A battle (spec "Battle": known fields, plus the progress and times decided in docs/battles.md). */
export const battleResponse = z.object({
  battle_id: z.string(),
  id: z.string().describe('the battle id again, as the original clients read it (docs/compatibility.md)'),
  name: z.string(),
  status: z.enum(BATTLE_STATUSES),
  battle_mode: z.enum(['live', 'historical']),
  starting_balance: decimalOutput,
  duration_minutes: z.number().int().nullable(),
  ranking_metric: z.enum(RANKING_METRICS),
  backtest_config: z
    .object({
      start_time: timestamp,
      end_time: timestamp,
      candle_interval: z.string(),
      pairs: z.array(z.string()).nullable().describe('as requested (null: all pairs)'),
      resolved_pairs: z.array(z.string()),
      total_steps: z.number().int(),
    })
    .nullable(),
  participants: z.array(participantOut),
  final_rankings: z.array(rankingEntry).nullable(),
  replay_of: z.string().nullable(),
  created_at: timestamp,
  started_at: timestamp.nullable(),
  ended_at: timestamp.nullable(),
  completion_reason: z.string().nullable(),
  fee_rate: decimalOutput
    .optional()
    .describe(
      "the taker fee rate the battle recorded at creation: a historical battle's sandboxes fill with it (live battles trade at the venue's rates, which it was then); absent only from answers that predate it",
    ),
  maker_fee_rate: decimalOutput
    .optional()
    .describe('the maker fee rate (resting limit fills) the battle recorded at creation; as fee_rate'),
  step: z.number().int().nullable().describe('historical: steps taken'),
  virtual_time: timestamp.nullable().describe('historical: the shared virtual clock'),
});

export const battleListResponse = z.object({ battles: z.array(battleResponse), total: z.number().int() });

export const deleteBattleResponse = z.object({
  battle_id: z.string(),
  status: z
    .enum(['deleted', 'cancelled'])
    .describe('a draft is deleted; an active or paused battle cancelled'),
});

const presetOut = z.object({
  name: z.string(),
  battle_mode: z.enum(['live', 'historical']),
  duration_minutes: z.number().int().nullable(),
  starting_balance: z.string(),
  historical_days: z.number().int().nullable(),
  candle_interval: z.string().nullable(),
});
export const presetsResponse = z.record(z.string(), presetOut);

export const liveResponse = z.object({
  battle_id: z.string(),
  status: z.enum(BATTLE_STATUSES),
  elapsed_seconds: z.number().int(),
  rankings: z.array(rankingEntry),
});

export const resultsResponse = liveResponse.extend({
  completed_at: timestamp,
  completion_reason: z.string().nullable(),
  performance: z.array(
    z.object({
      agent_id: z.string(),
      agent_name: z.string(),
      summary: z.record(z.string(), z.unknown()),
      metrics: z.record(z.string(), z.unknown()),
    }),
  ),
});

export const replaySnapshotsResponse = z.object({
  battle_id: z.string(),
  snapshots: z.array(
    z.object({
      timestamp,
      participants: z.array(
        z.object({ agent_id: z.string(), agent_name: z.string(), equity: decimalOutput }),
      ),
    }),
  ),
});

export const stepResponse = z.object({
  battle_id: z.string(),
  status: z.enum(BATTLE_STATUSES),
  virtual_time: timestamp,
  step: z.number().int(),
  total_steps: z.number().int(),
  progress_pct: z.string().describe('decimal string, 2 places'),
  is_complete: z.boolean(),
  prices: z
    .record(z.string(), z.string())
    .describe('close of each pair’s last candle closed by virtual_time'),
  participants: z.array(
    z.object({
      agent_id: z.string(),
      equity: decimalOutput,
      pnl: decimalOutput,
      trade_count: z.number().int(),
    }),
  ),
  fills: z.number().int().describe('fills of all participants during this step or batch'),
});

export const pricesResponse = z.object({
  battle_id: z.string(),
  virtual_time: timestamp,
  prices: z.record(z.string(), z.string()),
});

/** `POST /battles/{id}/trade/order` body (spec): the live order body plus `agent_id`. */
export const battleOrderBody = placeOrderBody.extend({
  agent_id: z.string().uuid().describe('the participant placing the order'),
});

/** `POST /battles/{id}/trade/order/oco`: the body of `POST /trade/order/oco` plus the participant's `agent_id`. */
export const battleOcoBody = placeOcoBody
  .extend({ agent_id: z.string().uuid().describe('the participant placing the OCO') })
  .strict();

/** A battle configuration as a client sends it (create, update, a replay's `override_config`). */
type ConfigBody = z.infer<typeof battleBodyObject>;
type BacktestConfigBody = NonNullable<z.infer<typeof backtestConfigBody>>;
type FlatConfig = Omit<ConfigBody, 'preset' | 'config'>;

/** Only the fields that are present (an explicit `null` is present). */
const present = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * The flat configuration of a body: a `preset`'s values (`GET /battles/presets`), overlaid with `config`'s,
 * overlaid with the top-level fields (docs/compatibility.md). A historical preset gives `backtest_config` its
 * interval and, when only `start_time` is sent, the end (start + the preset's days).
 */
const flatConfigOf = (b: ConfigBody): FlatConfig => {
  const { preset: presetKey, config, ...top } = b;
  const preset = presetKey === undefined ? undefined : BATTLE_PRESETS[presetKey];
  // The preset's name is not among them: it names a new battle (battleRequestOf), it does not rename one.
  const fromPreset: FlatConfig = preset
    ? {
        battle_mode: preset.battle_mode,
        starting_balance: preset.starting_balance,
        duration_minutes: preset.duration_minutes,
      }
    : {};
  const flat: FlatConfig = { ...fromPreset, ...present(config ?? {}), ...present(top) };
  if (preset?.battle_mode === 'historical' && flat.battle_mode === 'historical' && flat.backtest_config) {
    const bc: BacktestConfigBody = { ...flat.backtest_config };
    bc.candle_interval ??= preset.candle_interval ?? undefined;
    if (bc.end_time === undefined && bc.start_time !== undefined && preset.historical_days !== null) {
      const start = parseIsoTime(bc.start_time);
      if (start !== undefined) {
        bc.end_time = new Date(start + preset.historical_days * 86_400_000).toISOString();
      }
    }
    flat.backtest_config = bc;
  }
  return flat;
};

/** An ISO 8601 time of a battle's `backtest_config`; `VALIDATION_ERROR` naming the field otherwise. */
const parseTime = (value: string | undefined, field: string): number => {
  if (value === undefined) throw new DomainError('VALIDATION_ERROR', `${field} is required`, { field });
  const ms = parseIsoTime(value);
  if (ms === undefined) {
    throw new DomainError('VALIDATION_ERROR', `${field} must be an ISO 8601 timestamp`, { field });
  }
  return ms;
};

/**
 * The client's configuration fields as the domain reads them (absent fields stay absent), from the spec's form
 * or the original clients' (`preset`, `config`, `candle_interval` in seconds). `VALIDATION_ERROR` naming the
 * field when a `backtest_config` lacks a time or interval no preset fills.
 */
export const battleChangesOf = (body: ConfigBody): BattleChanges => {
  const b = flatConfigOf(body);
  const out: BattleChanges = {};
  if (b.name !== undefined) out.name = b.name;
  if (b.battle_mode !== undefined) out.battleMode = b.battle_mode;
  if (b.starting_balance !== undefined) {
    out.startingBalance =
      typeof b.starting_balance === 'number' ? b.starting_balance : decimalText(b.starting_balance);
  }
  if (b.duration_minutes !== undefined) out.durationMinutes = b.duration_minutes;
  if (b.ranking_metric !== undefined) out.rankingMetric = b.ranking_metric;
  if (b.backtest_config !== undefined) {
    const bc = b.backtest_config;
    if (bc !== null && bc.candle_interval === undefined) {
      throw new DomainError('VALIDATION_ERROR', 'backtest_config.candle_interval is required', {
        field: 'backtest_config.candle_interval',
      });
    }
    out.backtestConfig =
      bc === null
        ? null
        : {
            startTime: parseTime(bc.start_time, 'backtest_config.start_time'),
            endTime: parseTime(bc.end_time, 'backtest_config.end_time'),
            candleInterval: intervalText(bc.candle_interval!),
            pairs: bc.pairs ?? null,
          };
  }
  return out;
};

/** The create request of a `POST /battles` body (its name given at the top, in `config`, or by the preset). */
export const battleRequestOf = (body: ConfigBody): BattleRequest => {
  const changes = battleChangesOf(body);
  const presetName = body.preset === undefined ? undefined : BATTLE_PRESETS[body.preset]?.name;
  return { ...changes, name: changes.name ?? presetName ?? '' };
};
