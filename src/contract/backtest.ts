import { z } from 'zod';
import { MAX_BATCH_STEPS } from '../../domain/backtest/clock';
import { FILL_MODELS } from '../../domain/fill-model/model';
import { INTERVAL_CHOICES } from '../../domain/market/intervals';
import { decimalText } from '../../domain/trading/decimal';
import { ORDER_SIDES, ORDER_TYPES } from '../../domain/trading/orders';
import type { BacktestRequest } from '../application/backtest/sessions';
import {
  decimalOutput,
  intervalInput,
  intervalQuery,
  intervalText,
  ohlcvFields,
  pageEnvelope,
  pageFields,
  pageResponse,
  queryInt,
  startingBalanceInput,
  timestamp,
} from './common';
import { gapSchema } from './market';
import { orderFigures, orderFillResponse, portfolioFigures, positionEntry, symbolInput } from './trading';

/** `{id}` path parameter: any string (an unknown or malformed id is `BACKTEST_NOT_FOUND`). */
export const sessionParams = z.object({ id: z.string().min(1).max(100).describe('session id, `bt_…`') });
export const sessionOrderParams = sessionParams.extend({ order_id: z.string().min(1).max(100) });
/** `{symbol}`: up to the router's parameter length; a symbol outside the session is `INVALID_SYMBOL` 400. */
export const sessionSymbolParams = sessionParams.extend({
  symbol: z.string().min(1).max(100).describe('pair symbol of the session, case-insensitive'),
});

export const STATUSES = ['created', 'running', 'completed', 'failed', 'cancelled'] as const;

/** `POST /backtest/create` body (spec). */
export const createBody = z
  .object({
    start_time: z.string().min(1).max(40).describe('ISO 8601; UTC when no zone is given'),
    end_time: z.string().min(1).max(40),
    starting_balance: startingBalanceInput("the sandbox wallet's cash at start_time"),
    candle_interval: intervalInput,
    agent_id: z
      .string()
      .uuid()
      .optional()
      .describe(
        'an agent of the caller: its risk profile is copied; may be omitted with an agent key (that agent)',
      ),
    strategy_label: z.string().trim().min(1).max(100).nullable().optional(),
    pairs: z
      .array(z.string().trim().min(1).max(30))
      .max(1000)
      .nullable()
      .optional()
      .describe('null: every pair with data'),
  })
  .strict();

/**
 * The use case's input from a `POST /backtest/create` body, with the original clients' forms read
 * (docs/compatibility.md): `candle_interval` in seconds becomes its name; an absent `agent_id` is left for the
 * use case to fill from an agent credential.
 */
export const backtestRequestOf = (b: z.output<typeof createBody>): BacktestRequest => ({
  startTime: b.start_time,
  endTime: b.end_time,
  candleInterval: intervalText(b.candle_interval),
  startingBalance:
    typeof b.starting_balance === 'number' ? b.starting_balance : decimalText(b.starting_balance),
  strategyLabel: b.strategy_label ?? null,
  pairs: b.pairs ?? null,
  ...(b.agent_id !== undefined ? { agentId: b.agent_id } : {}),
});

/**
 * How the session's sandbox fills, fixed when it was created (docs/backtesting.md): its fill model and fee rates,
 * which every step and every replay of the session use, whatever the venue's settings are today.
 */
export const executionTerms = {
  fill_model: z.enum(FILL_MODELS).describe("the agent wallet's fill model when the session was created"),
  participation_pct: z
    .number()
    .int()
    .describe(
      "the agent wallet's participation share (%) when the session was created: under `realistic`, the most a resting order takes of a candle's volume",
    ),
  fee_rate: decimalOutput.describe('taker fee per fill (fraction of notional), fixed at creation'),
  maker_fee_rate: decimalOutput.describe('maker fee per resting limit fill, fixed at creation'),
};

export const createResponse = z.object({
  session_id: z.string(),
  status: z.literal('created'),
  total_steps: z.number().int(),
  estimated_pairs: z.number().int(),
  pairs: z.array(z.string()),
  candle_interval: z.string(),
  start_time: timestamp,
  end_time: timestamp,
  starting_balance: decimalOutput,
  agent_id: z.string(),
  strategy_label: z.string().nullable(),
  ...executionTerms,
  created_at: timestamp,
  data_gaps: z
    .array(gapSchema)
    .describe('candles missing inside the window for these pairs: no order fills or trades on a price there'),
});

export const startResponse = z.object({
  session_id: z.string(),
  status: z.enum(STATUSES),
  total_steps: z.number().int(),
  virtual_time: timestamp,
  pairs: z.array(z.object({ symbol: z.string(), candles: z.number().int() })),
  failure_reason: z.string().nullable(),
  data_gaps: z
    .array(gapSchema)
    .describe(
      'candles missing inside the window at the session interval: no order fills or trades on a price there',
    ),
});

export const batchBody = z
  .object({ steps: z.number().int().min(1).max(MAX_BATCH_STEPS).describe(`1 to ${MAX_BATCH_STEPS}`) })
  .strict();

/** A sandbox position: the live position's fields (spec "Position") without `price_source`. */
const positionOut = positionEntry.omit({ price_source: true });

const candlePrices = z.object({
  ...ohlcvFields,
  time: timestamp.describe('open time of the candle (closed at or before virtual time)'),
});

export const stepResponse = z.object({
  session_id: z.string(),
  virtual_time: timestamp,
  step: z.number().int(),
  total_steps: z.number().int(),
  progress_pct: z.number(),
  remaining_steps: z.number().int(),
  is_complete: z.boolean(),
  status: z.enum(STATUSES),
  prices: z.record(z.string(), candlePrices),
  orders_filled: z.array(
    z.object({
      order_id: z.string(),
      trade_id: z.string(),
      symbol: z.string(),
      side: z.enum(ORDER_SIDES),
      type: z.enum(ORDER_TYPES),
      quantity: decimalOutput,
      executed_price: decimalOutput,
      reference_price: decimalOutput,
      slippage_pct: decimalOutput,
      fee: decimalOutput,
      total: decimalOutput,
      realized_pnl: decimalOutput,
      candle_time: timestamp,
      filled_at: timestamp,
    }),
  ),
  orders_cancelled: z.array(
    z.object({
      order_id: z.string(),
      symbol: z.string(),
      reason: z.string(),
      unlocked_amount: decimalOutput,
      cancelled_at: timestamp,
    }),
  ),
  portfolio: z.object({
    total_equity: decimalOutput,
    available_cash: decimalOutput,
    locked_cash: decimalOutput,
    unrealized_pnl: decimalOutput,
    positions: z.array(positionOut),
  }),
});

const summary = z.object({
  starting_balance: decimalOutput,
  final_equity: decimalOutput,
  total_pnl: decimalOutput,
  roi_pct: decimalOutput,
  total_trades: z.number().int(),
  total_fees: decimalOutput,
  duration_simulated_days: decimalOutput,
  duration_real_seconds: z.string(),
});

export const cancelResponse = z.object({
  session_id: z.string(),
  status: z.literal('cancelled'),
  step: z.number().int(),
  virtual_time: timestamp,
  summary,
});

/** A session's terms as its status and list show them: label, agent, candle interval, time range, pairs. */
const sessionTerms = {
  strategy_label: z.string().nullable(),
  agent_id: z.string(),
  candle_interval: z.string(),
  start_time: timestamp,
  end_time: timestamp,
  pairs: z.array(z.string()),
};

export const statusResponse = z.object({
  session_id: z.string(),
  status: z.enum(STATUSES),
  step: z.number().int(),
  total_steps: z.number().int(),
  progress_pct: z.number(),
  virtual_time: timestamp,
  ...sessionTerms,
  ...executionTerms,
  created_at: timestamp,
  started_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  ended_at: timestamp.nullable(),
  failure_reason: z.string().nullable(),
});

export const sandboxOrder = z.object({
  order_id: z.string(),
  status: z
    .enum(['pending', 'partially_filled', 'filled', 'cancelled', 'rejected'])
    .describe(
      '`partially_filled`: open, filled in part (executed figures: its fills so far; lock: what remains)',
    ),
  ...orderFigures,
  locked_amount: decimalOutput,
  created_at: timestamp,
  filled_at: timestamp.nullable(),
  cancelled_at: timestamp.nullable(),
  cancel_reason: z.string().nullable(),
  order_list_id: z.string().optional().describe('the order list (an OCO, a bracket) the order belongs to'),
  list_kind: z.enum(['oco', 'bracket']).optional(),
  list_role: z.enum(['entry', 'take_profit', 'stop_loss']).optional(),
  rejection: z
    .object({ code: z.string(), rule: z.string(), step: z.number(), message: z.string() })
    .nullable(),
  client_order_id: z.string().optional().describe('present when the order was placed with one'),
});

// The sandbox's list filters take the live lists' symbol grammar (`symbolInput`: trimmed, 1 to 30 characters, no
// control character), so an empty `symbol=` is refused as on `GET /trade/orders` rather than read as no filter.
export const ordersQuery = z.object({
  status: z.enum(['pending', 'partially_filled', 'filled', 'cancelled', 'rejected']).optional(),
  symbol: symbolInput.optional(),
  ...pageFields(500, 100),
});
/**
 * Same bounds as the live `GET /trade/orders/open` (spec "Limits"), without its keyset `cursor`: a sandbox holds
 * at most `max_open_orders` open orders.
 */
export const openOrdersQuery = z.object({
  symbol: symbolInput.optional(),
  ...pageFields(200, 100),
});
export const ordersResponse = pageResponse('orders', sandboxOrder);

/** A sandbox cancel answers exactly like a live one. */
export { cancelResponse as sandboxCancelResponse } from './trading';

export const sandboxFill = z.object({
  trade_id: z.string(),
  order_id: z.string(),
  symbol: z.string(),
  side: z.enum(ORDER_SIDES),
  type: z.string(),
  trigger: z.string(),
  quantity: decimalOutput,
  price: decimalOutput,
  notional: decimalOutput,
  fee: decimalOutput,
  total: decimalOutput,
  realized_pnl: decimalOutput,
  slippage_pct: decimalOutput,
  reference_price: decimalOutput,
  reference_time: timestamp,
  price_source: z.string(),
  executed_at: timestamp,
});

/** `GET /backtest/{id}/trade/order/{order_id}`: a sandbox order and its fills, oldest first. */
export const sandboxOrderDetail = sandboxOrder.extend({
  fills: z
    .array(sandboxFill.extend({ fill: orderFillResponse.shape.fill }))
    .describe('the fills so far, oldest first (several when partially filled)'),
});

export const historyQuery = z.object({
  symbol: symbolInput.optional(),
  side: z.enum(ORDER_SIDES).optional(),
  ...pageFields(500, 50),
});
export const historyResponse = pageResponse('trades', sandboxFill);

export const priceResponse = z.object({
  symbol: z.string(),
  price: decimalOutput,
  timestamp: timestamp.describe('close time of the candle the price comes from (≤ virtual time)'),
  virtual_time: timestamp,
});

export const pricesQuery = z.object({ symbols: z.string().max(2000).optional() });
export const pricesResponse = z.object({
  prices: z.record(z.string(), decimalOutput),
  timestamp: timestamp.describe('virtual time'),
  count: z.number().int(),
});

export const tickerResponse = z.object({
  symbol: z.string(),
  ...ohlcvFields,
  quote_volume: decimalOutput,
  change: decimalOutput,
  change_pct: decimalOutput,
  trade_count: z.number().int(),
  timestamp: timestamp,
  virtual_time: timestamp,
});

export const candlesQuery = z.object({
  interval: intervalQuery.describe(
    `${INTERVAL_CHOICES}; default: the session interval (another value: INVALID_SYMBOL 400)`,
  ),
  limit: queryInt({ min: 1, max: 1000, default: 100 }),
  start_time: z.string().max(40).optional().describe('ISO 8601 UTC or epoch ms, inclusive (open time)'),
  end_time: z.string().max(40).optional().describe('ISO 8601 UTC or epoch ms, inclusive (open time)'),
});
export const candlesResponse = z.object({
  symbol: z.string(),
  interval: z.string(),
  candles: z.array(
    z.object({
      time: timestamp,
      ...ohlcvFields,
      trade_count: z.number().int(),
    }),
  ),
  count: z.number().int(),
  virtual_time: timestamp,
});

export const balanceResponse = z.object({
  balances: z.array(
    z.object({ asset: z.string(), available: decimalOutput, locked: decimalOutput, total: decimalOutput }),
  ),
  total_equity_usdt: decimalOutput,
  virtual_time: timestamp,
});

export const positionsResponse = z.object({
  positions: z.array(positionOut),
  total_unrealized_pnl: decimalOutput,
  virtual_time: timestamp,
});

export const portfolioResponse = z.object({
  ...portfolioFigures,
  positions: z.array(positionOut),
  timestamp: timestamp.describe('virtual time'),
});

const nullableDecimal = decimalOutput.nullable();

export const resultsResponse = z.object({
  session_id: z.string(),
  status: z.enum(STATUSES),
  config: z.object({
    start_time: timestamp,
    end_time: timestamp,
    starting_balance: decimalOutput,
    strategy_label: z.string().nullable(),
    candle_interval: z.string(),
    pairs: z.array(z.string()),
    agent_id: z.string(),
    ...executionTerms,
  }),
  summary,
  metrics: z.object({
    sharpe_ratio: nullableDecimal,
    sortino_ratio: nullableDecimal,
    max_drawdown_pct: decimalOutput,
    max_drawdown_duration_days: z.number().int(),
    max_drawdown_peak_at: timestamp.nullable(),
    max_drawdown_trough_at: timestamp.nullable(),
    max_drawdown_recovered_at: timestamp.nullable(),
    win_rate: nullableDecimal,
    profit_factor: nullableDecimal,
    avg_win: nullableDecimal,
    avg_loss: nullableDecimal,
    best_trade: nullableDecimal,
    worst_trade: nullableDecimal,
    avg_trade_duration_minutes: nullableDecimal,
    trades_per_day: nullableDecimal,
    closed_trades: z.number().int(),
    winning_trades: z.number().int(),
    losing_trades: z.number().int(),
    gross_profit: decimalOutput,
    gross_loss: decimalOutput,
    current_streak: z.number().int(),
    longest_win_streak: z.number().int(),
    longest_loss_streak: z.number().int(),
    returns_count: z.number().int(),
    periods_per_year: decimalOutput,
  }),
  by_pair: z.array(
    z.object({
      symbol: z.string(),
      trades: z.number().int(),
      closed_trades: z.number().int(),
      win_rate: nullableDecimal,
      realized_pnl: decimalOutput,
      fees: decimalOutput,
      open_quantity: decimalOutput,
      net_pnl: decimalOutput,
    }),
  ),
});

/** A list query of only `limit` (1 to `max`, default `fallback`) and `offset`. */
export const pageQuery = (max: number, fallback: number) => z.object(pageFields(max, fallback));

export const equityCurveResponse = z.object({
  session_id: z.string(),
  candle_interval: z.string(),
  points: z.array(
    z.object({
      step: z.number().int(),
      time: timestamp,
      equity: decimalOutput,
      drawdown_pct: decimalOutput.describe(
        '(running peak − equity) / running peak × 100 at this step; its maximum is metrics.max_drawdown_pct',
      ),
    }),
  ),
  ...pageEnvelope(),
});

export const tradesQuery = pageQuery(1000, 100).extend({ symbol: symbolInput.optional() });
export const tradesResponse = z.object({
  session_id: z.string(),
  trades: z.array(sandboxFill),
  ...pageEnvelope(),
});

const listItem = z.object({
  session_id: z.string(),
  status: z.enum(STATUSES),
  ...sessionTerms,
  step: z.number().int(),
  total_steps: z.number().int(),
  final_equity: nullableDecimal,
  roi_pct: nullableDecimal,
  sharpe_ratio: nullableDecimal,
  max_drawdown_pct: nullableDecimal,
  win_rate: nullableDecimal,
  profit_factor: nullableDecimal,
  total_trades: z.number().int(),
  created_at: timestamp,
  ended_at: timestamp.nullable(),
});

/** A `strategy_label` filter, trimmed and bounded like the label `POST /backtest/create` stores (1 to 100
 * characters): an empty one could match no session, so it is refused like every other empty filter. */
const labelFilter = z.string().trim().min(1).max(100);

export const listQuery = z.object({
  strategy_label: labelFilter.optional(),
  status: z.enum(STATUSES).optional(),
  sort_by: z.enum(['roi_pct', 'sharpe_ratio', 'created_at']).default('created_at'),
  ...pageFields(200, 20),
});
export const listResponse = pageResponse('backtests', listItem);

export const compareQuery = z.object({
  sessions: z.string().min(1).max(2200).describe('comma-separated session ids (1 to 20)'),
});
export const compareResponse = z.object({
  comparisons: z.array(
    z.object({
      session_id: z.string(),
      strategy_label: z.string().nullable(),
      status: z.enum(STATUSES),
      roi_pct: nullableDecimal,
      sharpe_ratio: nullableDecimal,
      sortino_ratio: nullableDecimal,
      max_drawdown_pct: nullableDecimal,
      win_rate: nullableDecimal,
      profit_factor: nullableDecimal,
      total_trades: z.number().int(),
      final_equity: nullableDecimal,
    }),
  ),
  best_by_roi: z.string().nullable(),
  best_by_sharpe: z.string().nullable(),
  best_by_drawdown: z.string().nullable(),
  recommendation: z.string(),
});

export const bestQuery = z.object({
  metric: z.enum(['roi_pct', 'sharpe_ratio', 'win_rate', 'profit_factor']).default('roi_pct'),
  strategy_label: labelFilter.optional(),
});
export const bestResponse = z.object({
  session_id: z.string(),
  metric: z.string(),
  value: decimalOutput,
  strategy_label: z.string().nullable(),
  status: z.enum(STATUSES),
  roi_pct: nullableDecimal,
  sharpe_ratio: nullableDecimal,
  win_rate: nullableDecimal,
  profit_factor: nullableDecimal,
  created_at: timestamp,
});
