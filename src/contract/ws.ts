import { z } from 'zod';
import { INTERVALS } from '../../domain/market/intervals';
import { ORDER_SIDES } from '../../domain/trading/orders';
import { BATTLE_STATUSES } from './battle';
import { decimalOutput, ohlcvFields, timestamp } from './common';

/**
 * The `data` of the `/ws/v1` server messages that no REST schema already describes (docs/market-data.md
 * "WebSocket", docs/battles.md "The battle WebSocket channel"). The channels build their messages to these
 * shapes (checked by the compiler), and clients type what they receive from them. `portfolio` messages carry
 * `portfolioResponse` (schemas/trading.ts) and `orders` messages an item of `eventsResponse.events`.
 */

/** `ticker` / `ticker` and each item of `ticker_all` / `tickers`: the price, and the rolling 24 h once known. */
export const tickerMessageData = z.object({
  symbol: z.string(),
  price: decimalOutput,
  timestamp: timestamp.describe('time of the price, microseconds'),
  open: decimalOutput.optional(),
  high: decimalOutput.optional(),
  low: decimalOutput.optional(),
  close: decimalOutput.optional(),
  volume: decimalOutput.optional(),
  quote_volume: decimalOutput.optional(),
  change: decimalOutput.optional(),
  change_pct: decimalOutput.optional(),
  trade_count: z.number().int().optional(),
  window_timestamp: timestamp.optional(),
});

/** `battle` / `battle:update`: every live snapshot (5 s) or historical step. */
export const battleUpdateData = z.object({
  battle_id: z.string(),
  participants: z.array(z.object({ agent_id: z.string(), equity: decimalOutput, roi_pct: decimalOutput })),
  timestamp,
});

/** `battle` / `battle:trade`: a participant's fill inside the battle. */
export const battleTradeData = z.object({
  battle_id: z.string(),
  agent_id: z.string(),
  symbol: z.string(),
  side: z.enum(ORDER_SIDES),
  quantity: decimalOutput,
  price: decimalOutput.describe('executed price'),
  timestamp,
});

/** `battle` / `battle:status`: a status change (`completed` adds `final_rankings`). */
export const battleStatusData = z.object({
  battle_id: z.string(),
  status: z.enum([...BATTLE_STATUSES, 'deleted']),
  previous_status: z.enum(BATTLE_STATUSES).nullable(),
  event: z.enum(['started', 'agent_paused', 'agent_resumed', 'completed', 'cancelled', 'deleted']),
  agent_id: z.string().nullable(),
  reason: z.string().nullable(),
  timestamp,
});

/**
 * `candles` / `candle` (the forming candle, on every tick) and `candles` / `candle_closed` (once, at its close):
 * one candle of a symbol and interval built from the live ticks (docs/market-data.md "WebSocket").
 */
export const candleMessageData = z.object({
  symbol: z.string(),
  interval: z.enum(INTERVALS),
  time: timestamp.describe('open time of the candle (wall clock, like the ticks)'),
  close_time: timestamp.describe('last millisecond the candle covers'),
  ...ohlcvFields,
  quote_volume: decimalOutput,
  trade_count: z.number().int(),
  is_closed: z.boolean().describe('false while the candle forms; true on `candle_closed`'),
});
