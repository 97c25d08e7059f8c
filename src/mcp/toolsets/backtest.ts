import { backtestEndpoints as ep } from '../../endpoints/backtest';
import { IDEMPOTENT_WRITE, READ, type ToolDef, WRITE } from '../tool';
import { endpointTools } from '../tool-table';
import { sandboxTradingTools } from './sandbox';

/**
 * Backtest tools (spec "Backtest endpoints"): sessions (create, start, step, step batch, cancel, status), the
 * sandbox at the session's virtual time (orders, market, account) and results. Each serves its endpoint of
 * `src/endpoints/backtest.ts` as `/backtest/*` does; the `backtest` rate-limit group (6,000 per minute).
 */

const common = { toolset: 'backtest', auth: 'key-or-jwt', rateLimitGroup: 'backtest' } as const;
const read = { ...common, annotations: READ } as const;

/** Each tool's description, by its name (what it does, units, errors). */
const describe: Readonly<Record<string, string>> = {
  create_backtest:
    'Creates a backtest session (status created) for an agent of the caller (agent_id; omitted with an agent ' +
    'key) over historical data: start_time < end_time (ISO 8601) inside the data range (get_data_range), ' +
    'candle_interval 1m/5m/15m/1h/4h/1d (or seconds), starting_balance in USDT, pairs (null: all). Errors: ' +
    'VALIDATION_ERROR, INVALID_SYMBOL, BACKTEST_NO_DATA, PERMISSION_DENIED.',
  start_backtest:
    'Loads the candles and starts the virtual clock at start_time (status running). BACKTEST_INVALID_STATE ' +
    'when not created; BACKTEST_NO_DATA when the candles cannot be loaded.',
  step_backtest:
    'Advances a running backtest by one candle: pending sandbox orders are checked against it; answers the new ' +
    'virtual time, prices, fills and is_complete.',
  step_backtest_batch:
    'Advances a running backtest by steps candles (1 to 100,000, clamped at the end) in one append; answers ' +
    'every fill of the batch and the final prices.',
  cancel_backtest: 'Aborts a created or running backtest; partial results are kept.',
  get_backtest_status: 'Progress and state of a backtest: status, step, virtual time, equity.',
  list_backtest_orders:
    'Orders of a backtest sandbox, newest first (filter by status and symbol; limit, offset).',
  get_backtest_order:
    'A sandbox order of a backtest with its fills, oldest first: several when it filled in parts ' +
    '(partially_filled), each with the fill model record that decided it.',
  list_backtest_open_orders:
    'Open orders of a backtest sandbox (pending or partially filled), newest first (optionally of one symbol).',
  get_backtest_trade_history: 'Fills of a backtest sandbox, newest first (filter by symbol and side).',
  get_backtest_price:
    "A pair's price (USDT) at the backtest's virtual time: the close of the last candle closed by then.",
  get_backtest_prices: "Prices (USDT) of the backtest's pairs (or those named) at its virtual time.",
  get_backtest_candles:
    'Candles of a pair closed by the backtest’s virtual time, oldest first (no look-ahead).',
  get_backtest_ticker:
    '24-hour statistics of a session pair at the virtual time (candles closed in the 24 h before it): open, ' +
    'high, low, close (USDT), volume (base), change %. INVALID_SYMBOL for a pair outside the session.',
  get_backtest_indicators:
    'RSI, MACD, SMA, EMA, Bollinger Bands, ATR, VWAP of a session pair over candles closed by the virtual time ' +
    '(no look-ahead); interval defaults to the session interval. A value is null until enough candles exist. ' +
    'Errors: INVALID_SYMBOL, VALIDATION_ERROR (unknown indicator or interval).',
  get_backtest_balance: 'Balances and equity (USDT) of a backtest sandbox at its virtual time.',
  get_backtest_positions:
    'Open positions of a backtest sandbox valued at its virtual time: quantity (base), entry and current price, ' +
    'unrealized PnL (USDT).',
  get_backtest_portfolio:
    'Portfolio of a backtest sandbox at its virtual time: equity, cash, positions, PnL (USDT).',
  get_backtest_results:
    'Results of a backtest: final equity, ROI, Sharpe and Sortino ratios, max drawdown, win rate, profit factor, ' +
    'trade counts, per-pair figures.',
  get_backtest_equity_curve: 'Equity (USDT) at every step so far (step 0 = start), oldest first, paginated.',
  get_backtest_trades: 'The fills of a backtest with their realized PnL, oldest first, paginated.',
  list_backtests:
    'Backtests of the caller (filter by strategy_label and status; sort by roi_pct, sharpe_ratio or created_at).',
  compare_backtests:
    'Compares 1 to 20 backtests side by side (ROI, Sharpe, drawdown, win rate) and names the best.',
  get_best_backtest:
    'The best backtest of the caller by a metric (roi_pct, sharpe_ratio, win_rate, profit_factor).',
};

export const backtestTools: ToolDef[] = [
  ...endpointTools(read, ep, describe, {
    create: [
      'create_backtest',
      'Create a backtest',
      (r) => `backtest ${r.session_id} created: ${r.total_steps} steps of ${r.candle_interval}`,
      WRITE,
    ],
    start: [
      'start_backtest',
      'Start a backtest',
      (r) => `backtest ${r.session_id} ${r.status} at ${r.virtual_time}`,
      WRITE,
    ],
    step: [
      'step_backtest',
      'Step a backtest',
      (r) => `step ${r.step}/${r.total_steps} at ${r.virtual_time}${r.is_complete ? ', complete' : ''}`,
      WRITE,
    ],
    stepBatch: [
      'step_backtest_batch',
      'Step a backtest by N candles',
      (r) => `step ${r.step}/${r.total_steps} at ${r.virtual_time}${r.is_complete ? ', complete' : ''}`,
      WRITE,
    ],
    cancel: [
      'cancel_backtest',
      'Cancel a backtest',
      (r) => `backtest ${r.session_id} ${r.status}`,
      IDEMPOTENT_WRITE,
    ],
    status: ['get_backtest_status', 'Backtest status', (r) => `backtest ${r.session_id} ${r.status}`],
  }),
  ...sandboxTradingTools({
    common,
    prefix: 'backtest',
    ep,
    title: 'sandbox',
    noun: 'sandbox',
    describe: {
      order:
        "Places an order in a running backtest's sandbox at its virtual time, under the live order rules and risk " +
        'chain: market orders fill at the close of the last closed candle; a limit order that price already reaches ' +
        'and a stop already triggered fill at it at once (as live); others wait for the candles that reach them.',
      oco:
        "Places an OCO in a running backtest's sandbox (as place_oco_order live): a take-profit and a stop-loss of " +
        'one quantity sharing one lock; the first candle that reaches a leg fills it and cancels the other.',
      cancel:
        'Cancels an open sandbox order of a backtest (pending or partially filled); its remaining lock is released.',
    },
  }),
  ...endpointTools(read, ep, describe, {
    orders: [
      'list_backtest_orders',
      'Sandbox orders',
      (r) => `${r.orders.length} of ${r.total} sandbox orders`,
    ],
    order: [
      'get_backtest_order',
      'One sandbox order and its fills',
      (r) => `sandbox order ${r.order_id} ${r.status}, ${r.fills.length} fill(s)`,
    ],
    openOrders: ['list_backtest_open_orders', 'Open sandbox orders', (r) => `${r.total} open sandbox orders`],
    fills: [
      'get_backtest_trade_history',
      'Sandbox fills',
      (r) => `${r.trades.length} of ${r.total} sandbox fills`,
    ],
    price: ['get_backtest_price', 'Sandbox price', (r) => `${r.symbol} ${r.price} USDT at virtual time`],
    prices: [
      'get_backtest_prices',
      'Sandbox prices',
      (r) => `${Object.keys(r.prices).length} prices at virtual time`,
    ],
    candles: ['get_backtest_candles', 'Sandbox candles', (r) => `${r.candles.length} candles`],
    ticker: [
      'get_backtest_ticker',
      'Sandbox 24h ticker',
      (r) => `${r.symbol} at ${r.virtual_time}: close ${r.close} USDT, ${r.change_pct} %`,
    ],
    indicators: [
      'get_backtest_indicators',
      'Sandbox indicators',
      (r) => `${r.symbol} ${r.interval} indicators over ${r.candles_used} candles at ${r.virtual_time}`,
    ],
    balance: [
      'get_backtest_balance',
      'Sandbox balances',
      (r) => `sandbox equity ${r.total_equity_usdt} USDT`,
    ],
    positions: [
      'get_backtest_positions',
      'Sandbox positions',
      (r) => `${r.positions.length} sandbox positions, unrealized ${r.total_unrealized_pnl} USDT`,
    ],
    portfolio: [
      'get_backtest_portfolio',
      'Sandbox portfolio',
      (r) => `sandbox equity ${r.total_equity} USDT`,
    ],
    results: ['get_backtest_results', 'Backtest results', (r) => `backtest ${r.session_id} ${r.status}`],
    equityCurve: [
      'get_backtest_equity_curve',
      'Backtest equity curve',
      (r) => `${r.points.length} equity points`,
    ],
    trades: ['get_backtest_trades', 'Backtest trade log', (r) => `${r.trades.length} trades`],
    list: ['list_backtests', 'Backtests', (r) => `${r.backtests.length} of ${r.total} backtests`],
    compare: [
      'compare_backtests',
      'Compare backtests',
      (r) => `${r.comparisons.length} compared; best by ROI ${r.best_by_roi ?? '—'}`,
    ],
    best: ['get_best_backtest', 'Best backtest', (r) => `best by ${r.metric}: ${r.session_id} (${r.value})`],
  }),
];
