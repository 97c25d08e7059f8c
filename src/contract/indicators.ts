import { z } from 'zod';
import { INTERVALS } from '../../domain/market/intervals';
import { DEFAULT_INDICATORS, MAX_PERIOD } from '../market/indicators';
import { intervalQuery, queryInt, timestamp } from './common';

/**
 * `GET /market/indicators/{symbol}` and `/backtest/{id}/market/indicators/{symbol}` (issue 17, item 10;
 * docs/market-data.md "Indicators"): which indicators, over which candles.
 */
export const indicatorsQuery = z.object({
  indicators: z
    .string()
    .max(500)
    .optional()
    .describe(
      `comma-separated: rsi, macd, sma, ema, bbands, atr, vwap, with a period as name_period (e.g. sma_20, ema_50, rsi_7; 1–${MAX_PERIOD}); default ${DEFAULT_INDICATORS.join(',')}`,
    ),
  interval: intervalQuery.describe(
    `${INTERVALS.join(', ')} or seconds; default 1h (a backtest: its interval). Another value: VALIDATION_ERROR`,
  ),
  limit: queryInt({ min: 1, max: 1000, default: 200 }).describe(
    'how many closed candles the indicators are computed over (the newest ones), 1–1000',
  ),
});

const value = z
  .union([z.string(), z.record(z.string(), z.string())])
  .nullable()
  .describe(
    'at the last candle: a decimal string (macd: {macd, signal, histogram}; bbands: {upper, middle, lower}); null when the candles are too few',
  );

export const indicatorsResponse = z.object({
  symbol: z.string(),
  interval: z.enum(INTERVALS),
  indicators: z.record(z.string(), value).describe('keyed by the name as asked (e.g. sma_20)'),
  candles_used: z.number().int().describe('closed candles the values were computed over (≤ limit)'),
  last_candle_time: timestamp
    .nullable()
    .describe('open time of the newest candle used: the values are those at its close'),
});

export const sandboxIndicatorsResponse = indicatorsResponse.extend({
  virtual_time: timestamp.describe('only candles closed by this time were used'),
});

export const availableIndicatorsResponse = z.object({
  indicators: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      default_period: z.number().int().nullable(),
      takes_period: z.boolean(),
      required_candles: z.number().int().describe('candles needed before a value, at the default period'),
      output: z.union([z.literal('value'), z.array(z.string())]),
    }),
  ),
  default: z.array(z.string()).describe('what a request without `indicators` gets'),
  intervals: z.array(z.enum(INTERVALS)),
  max_limit: z.number().int(),
});
