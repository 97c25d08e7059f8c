import { z } from 'zod';
import { INTERVAL_MS, INTERVALS, type Interval, MAX_INTERVAL_TEXT } from '../../domain/market/intervals';
import { RISK_PROFILE_BOUNDS, type RiskProfile } from '../../domain/shared/risk-profile';
import { MAX_STARTING_BALANCE } from '../../domain/shared/starting-balance';
import { CONTROL_CHARACTER, CONTROL_CHARACTER_MESSAGE } from '../../domain/shared/text';

/** The error envelope (spec "Errors"), for the OpenAPI document of error responses. */
export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.string().describe('machine-readable code; branch on this (several codes share a status)'),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .describe('Error envelope');

/**
 * `schema` refusing control characters (`CONTROL_CHARACTER`, `domain/shared/text.ts`: line breaks, tabs, escapes) as
 * `VALIDATION_ERROR` 422 naming the field: one line of text, the rule of account and agent names, agent labels
 * (`llm_model`, `framework`, `strategy_tags`) and webhook descriptions. Not shown in the OpenAPI document.
 */
export const oneLine = <S extends z.ZodType<string>>(schema: S): S =>
  schema.refine((s) => !CONTROL_CHARACTER.test(s), CONTROL_CHARACTER_MESSAGE);

/** Error responses of the given statuses, all in the envelope. */
export const errorResponses = <S extends number>(...statuses: S[]): Record<S, typeof errorEnvelopeSchema> =>
  Object.fromEntries(statuses.map((s) => [s, errorEnvelopeSchema])) as Record<S, typeof errorEnvelopeSchema>;

/**
 * What a JSON value is, as a refusal names it: `null`, `array`, `object`, `boolean`, ...; a number too large for
 * a double (`1e400`, which JSON.parse reads as Infinity) is `Infinity`, as zod names it.
 */
export const jsonType = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'number' && !Number.isFinite(value)
        ? String(value)
        : typeof value;

/**
 * The refusal of a value that is neither a string nor a number where {@link decimalInput} is expected: a missing
 * field is `required`, any other value names its JSON type (zod's union alone said only "Invalid input").
 */
const decimalInputError = (issue: { code?: string; input?: unknown }): string | undefined => {
  if (issue.code !== 'invalid_union') return undefined;
  return issue.input === undefined
    ? 'required: a decimal string such as "0.001"'
    : `Invalid input: expected a decimal string such as "0.001" (or a number), received ${jsonType(issue.input)}`;
};

/**
 * A decimal amount on input: a decimal string (the contract) or a number (accepted, loses precision). Any
 * other JSON value is refused saying what was expected and what came ({@link decimalInputError}); the string
 * itself is checked where it is read (`domain/wallet/decide.ts`, the account and agent commands).
 */
export const decimalInput = z
  .union([z.string().max(40), z.number()], { error: decimalInputError })
  .describe(
    'decimal string with up to 8 decimal places, e.g. "10000.00" (numbers accepted, may lose precision)',
  );

/**
 * A starting balance on input (an account's, an agent's, a backtest's, a battle's, a reset's): a
 * {@link decimalInput} described with its unit and the bounds `normalizeStartingBalance` enforces
 * (`domain/shared/starting-balance.ts`: > 0 and at most `MAX_STARTING_BALANCE` USDT, up to 8 decimal places), then
 * `more` (its default, whose it is).
 */
export const startingBalanceInput = (more: string) =>
  decimalInput.describe(
    `USDT, greater than 0 and at most ${MAX_STARTING_BALANCE}, up to 8 decimal places; ${more}`,
  );

/** A decimal amount on output: a string with 8 decimal places. */
export const decimalOutput = z.string().describe('decimal string, 8 decimal places');

/** A query integer's text: decimal digits with an optional leading minus (`after=-1`), nothing else. */
const DECIMAL_INTEGER = /^-?\d+$/;

/**
 * A whole number from `min` to `max` (inclusive; no upper bound when omitted; `default` when absent) read from a query string (`limit`,
 * `offset`, a revision): only decimal digits, with an optional leading `-`, are read as a number; any other text —
 * empty (`limit=`), `5e1`, `1.0`, ` 5`, `0x10`, `abc`, `1.5` — is refused with `must be an integer` (a plain
 * number coercion read `5e1` as 50, `0x10` as 16, and an empty value as 0, refused as "Too small"). A number (a JSON
 * argument of an MCP tool) is taken as it is and must be whole. A description is chained on. Its
 * JSON schema (OpenAPI, MCP) is the number's: `integer` with its bounds, as before.
 */
export const queryInt = (bounds: { min: number; max?: number; default: number }) => {
  const n = z
    .number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be an integer' : undefined) })
    .int({ error: 'must be an integer' })
    .min(bounds.min);
  return z.preprocess(
    // Text that is not a decimal integer becomes NaN, which the number refuses as `must be an integer`.
    (v) => (typeof v === 'string' ? (DECIMAL_INTEGER.test(v) ? Number(v) : Number.NaN) : v),
    // The default inside the pipe: the JSON schema (input side: the number's) then shows it.
    (bounds.max === undefined ? n : n.max(bounds.max)).default(bounds.default),
  );
};

/**
 * `limit` (1 to `max`, default `fallback`) and `offset` (≥ 0, default 0) of a list query (spec "Limits"), to spread
 * into the query's object: one definition for every list of every door.
 */
export const pageFields = (max: number, fallback: number) => ({
  limit: queryInt({ min: 1, max: max, default: fallback }),
  offset: queryInt({ min: 0, default: 0 }),
});

/** `total` (the rows matching the filter), `limit` and `offset` of a list response, to spread after its rows. */
export const pageEnvelope = () => ({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});

/**
 * A list response: the rows under `key` (an array of `item`), then {@link pageEnvelope}'s `total`, `limit` and
 * `offset`. One shape for every door's lists (orders, fills, sessions); a list with more fields extends it.
 */
export const pageResponse = <K extends string, T extends z.ZodType>(key: K, item: T) =>
  z.object({ [key]: z.array(item), ...pageEnvelope() } as Record<K, z.ZodArray<T>> &
    ReturnType<typeof pageEnvelope>);

/**
 * The price figures of a candle or a ticker window: `open`, `high`, `low`, `close` (USDT) and `volume` (base
 * asset), decimal strings, to spread into a response object (a field spread after it with its own description
 * keeps its place).
 */
export const ohlcvFields = {
  open: decimalOutput,
  high: decimalOutput,
  low: decimalOutput,
  close: decimalOutput,
  volume: decimalOutput,
};

/** ISO 8601 UTC timestamp on output. */
export const timestamp = z.string().describe('ISO 8601 UTC timestamp');

const bounded = (field: keyof typeof RISK_PROFILE_BOUNDS, description: string) => {
  const [min, max] = RISK_PROFILE_BOUNDS[field];
  return z.number().int().min(min).max(max).describe(`${description} (integer ${min}–${max})`);
};

/**
 * A risk profile on input (`PUT /agents/{id}/risk-profile`, `PUT /account/risk-profile`): the spec's three
 * fields, all required, and `max_order_size_pct` (ARCHITECTURE §8 risk step 5, §14b), optional: when omitted
 * the current value is kept. Unknown fields are refused (a misspelt limit must not be silently ignored).
 */
export const riskProfileSchema = z.strictObject({
  max_position_size_pct: bounded(
    'max_position_size_pct',
    'largest single-coin position as % of total equity',
  ),
  daily_loss_limit_pct: bounded('daily_loss_limit_pct', 'daily loss limit as % of starting balance'),
  max_open_orders: bounded('max_open_orders', 'simultaneous pending orders'),
  max_order_size_pct: bounded('max_order_size_pct', 'largest single order as % of available cash')
    .optional()
    .describe('largest single order as % of available cash (integer 1–100, default 50); omitted: unchanged'),
});

/** The risk fields on create: any subset, the rest default (25 / 20 / 50 / 50). */
export const partialRiskProfileSchema = riskProfileSchema.partial();

/** A risk profile on output: the spec's three fields and `max_order_size_pct` (ARCHITECTURE §14b). */
export const riskProfileResponse = z.object({
  max_position_size_pct: bounded(
    'max_position_size_pct',
    'largest single-coin position as % of total equity',
  ),
  daily_loss_limit_pct: bounded('daily_loss_limit_pct', 'daily loss limit as % of starting balance'),
  max_open_orders: bounded('max_open_orders', 'simultaneous pending orders'),
  max_order_size_pct: bounded('max_order_size_pct', 'largest single order as % of available cash'),
});

/** The wire form of a risk profile (the spec's three fields and `max_order_size_pct`, integers). */
export const riskProfileOut = (p: RiskProfile): z.infer<typeof riskProfileResponse> => ({
  max_position_size_pct: p.max_position_size_pct,
  daily_loss_limit_pct: p.daily_loss_limit_pct,
  max_open_orders: p.max_open_orders,
  max_order_size_pct: p.max_order_size_pct,
});

/**
 * Interval names by length in seconds: the original product's clients send `candle_interval` as integer seconds
 * (60, 300, 900, 3600, 14400, 86400; docs/compatibility.md). Derived from {@link INTERVAL_MS}, so every interval
 * the venue serves has its number.
 */
const INTERVAL_BY_SECONDS: ReadonlyMap<number, Interval> = new Map(
  INTERVALS.map((i) => [INTERVAL_MS[i] / 1000, i] as const),
);

/**
 * A candle interval on input: the spec's name (`1m` … `1d`) or, for the original clients, integer seconds as a
 * JSON number or an all-digit string. {@link intervalText} turns it into the name the domain checks.
 */
export const intervalInput = z
  .union([z.string().max(10), z.number().int().min(1).max(10_000_000)])
  .describe(`one of ${INTERVALS.join(', ')}; also integer seconds (60, 300, 900, 3600, 14400, 86400)`);

/**
 * The interval name of an {@link intervalInput}: a number of seconds (or an all-digit string) becomes its name
 * (`60` → `1m`); any other value passes unchanged, so an unknown one is refused by the domain's own check
 * (`VALIDATION_ERROR` naming the intervals, or the market endpoints' `INVALID_SYMBOL`) exactly like a wrong name.
 */
export const intervalText = (value: string | number): string => {
  const text = String(value);
  if (!/^\d{1,8}$/.test(text)) return text;
  return INTERVAL_BY_SECONDS.get(Number(text)) ?? text;
};

/**
 * The optional `interval` of a query (candles, indicators): up to 8 characters (`MAX_INTERVAL_TEXT`), a name or seconds, handed on as
 * its {@link intervalText}; each query describes its own default.
 */
export const intervalQuery = z
  .string()
  .max(MAX_INTERVAL_TEXT)
  .optional()
  .transform((v) => (v === undefined ? undefined : intervalText(v)));
