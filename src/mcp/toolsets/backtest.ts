import { backtestEndpoints as ep } from '../../endpoints/backtest';
import { defineTool, READ, servesEndpoint, type ToolDef, WRITE } from '../tool';
import { sandboxTradingTools } from './sandbox';

/**
 * Backtest tools (spec "Backtest endpoints"): sessions (create, start, step, step batch, cancel, status), the
 * sandbox at the session's virtual time (orders, market, account) and results. Each serves its endpoint of
 * `src/endpoints/backtest.ts` as `/backtest/*` does; the `backtest` rate-limit group (6,000 per minute).
 */

const common = { toolset: 'backtest', auth: 'key-or-jwt', rateLimitGroup: 'backtest' } as const;
const read = { ...common, annotations: READ } as const;

export const backtestTools: ToolDef[] = [
  defineTool({
    ...common,
    name: 'create_backtest',
    title: 'Create a backtest',
    description:
      'Creates a backtest session (status created) for an agent of the caller (agent_id; omitted with an agent ' +
      'key) over historical data: start_time < end_time (ISO 8601) inside the data range (get_data_range), ' +
      'candle_interval 1m/5m/15m/1h/4h/1d (or seconds), starting_balance in USDT, pairs (null: all). Errors: ' +
      'VALIDATION_ERROR, INVALID_SYMBOL, BACKTEST_NO_DATA, PERMISSION_DENIED.',
    ...servesEndpoint(ep.create),
    annotations: WRITE,
    summary: (r) => `backtest ${r.session_id} created: ${r.total_steps} steps of ${r.candle_interval}`,
  }),
  defineTool({
    ...common,
    name: 'start_backtest',
    title: 'Start a backtest',
    description:
      'Loads the candles and starts the virtual clock at start_time (status running). BACKTEST_INVALID_STATE ' +
      'when not created; BACKTEST_NO_DATA when the candles cannot be loaded.',
    ...servesEndpoint(ep.start),
    annotations: WRITE,
    summary: (r) => `backtest ${r.session_id} ${r.status} at ${r.virtual_time}`,
  }),
  defineTool({
    ...common,
    name: 'step_backtest',
    title: 'Step a backtest',
    description:
      'Advances a running backtest by one candle: pending sandbox orders are checked against it; answers the new ' +
      'virtual time, prices, fills and is_complete.',
    ...servesEndpoint(ep.step),
    annotations: WRITE,
    summary: (r) =>
      `step ${r.step}/${r.total_steps} at ${r.virtual_time}${r.is_complete ? ', complete' : ''}`,
  }),
  defineTool({
    ...common,
    name: 'step_backtest_batch',
    title: 'Step a backtest by N candles',
    description:
      'Advances a running backtest by steps candles (1 to 100,000, clamped at the end) in one append; answers ' +
      'every fill of the batch and the final prices.',
    ...servesEndpoint(ep.stepBatch),
    annotations: WRITE,
    summary: (r) =>
      `step ${r.step}/${r.total_steps} at ${r.virtual_time}${r.is_complete ? ', complete' : ''}`,
  }),
  defineTool({
    ...common,
    name: 'cancel_backtest',
    title: 'Cancel a backtest',
    description: 'Aborts a created or running backtest; partial results are kept.',
    ...servesEndpoint(ep.cancel),
    annotations: { ...WRITE, idempotentHint: true },
    summary: (r) => `backtest ${r.session_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_status',
    title: 'Backtest status',
    description: 'Progress and state of a backtest: status, step, virtual time, equity.',
    ...servesEndpoint(ep.status),
    summary: (r) => `backtest ${r.session_id} ${r.status}`,
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
  defineTool({
    ...read,
    name: 'list_backtest_orders',
    title: 'Sandbox orders',
    description: 'Orders of a backtest sandbox, newest first (filter by status and symbol; limit, offset).',
    ...servesEndpoint(ep.orders),
    summary: (r) => `${r.orders.length} of ${r.total} sandbox orders`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_order',
    title: 'One sandbox order and its fills',
    description:
      'A sandbox order of a backtest with its fills, oldest first: several when it filled in parts ' +
      '(partially_filled), each with the fill model record that decided it.',
    ...servesEndpoint(ep.order),
    summary: (r) => `sandbox order ${r.order_id} ${r.status}, ${r.fills.length} fill(s)`,
  }),
  defineTool({
    ...read,
    name: 'list_backtest_open_orders',
    title: 'Open sandbox orders',
    description:
      'Open orders of a backtest sandbox (pending or partially filled), newest first (optionally of one symbol).',
    ...servesEndpoint(ep.openOrders),
    summary: (r) => `${r.total} open sandbox orders`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_trade_history',
    title: 'Sandbox fills',
    description: 'Fills of a backtest sandbox, newest first (filter by symbol and side).',
    ...servesEndpoint(ep.fills),
    summary: (r) => `${r.trades.length} of ${r.total} sandbox fills`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_price',
    title: 'Sandbox price',
    description:
      "A pair's price (USDT) at the backtest's virtual time: the close of the last candle closed by then.",
    ...servesEndpoint(ep.price),
    summary: (r) => `${r.symbol} ${r.price} USDT at virtual time`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_prices',
    title: 'Sandbox prices',
    description: "Prices (USDT) of the backtest's pairs (or those named) at its virtual time.",
    ...servesEndpoint(ep.prices),
    summary: (r) => `${Object.keys(r.prices).length} prices at virtual time`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_candles',
    title: 'Sandbox candles',
    description: 'Candles of a pair closed by the backtest’s virtual time, oldest first (no look-ahead).',
    ...servesEndpoint(ep.candles),
    summary: (r) => `${r.candles.length} candles`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_ticker',
    title: 'Sandbox 24h ticker',
    description:
      '24-hour statistics of a session pair at the virtual time (candles closed in the 24 h before it): open, ' +
      'high, low, close (USDT), volume (base), change %. INVALID_SYMBOL for a pair outside the session.',
    ...servesEndpoint(ep.ticker),
    summary: (r) => `${r.symbol} at ${r.virtual_time}: close ${r.close} USDT, ${r.change_pct} %`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_indicators',
    title: 'Sandbox indicators',
    description:
      'RSI, MACD, SMA, EMA, Bollinger Bands, ATR, VWAP of a session pair over candles closed by the virtual time ' +
      '(no look-ahead); interval defaults to the session interval. A value is null until enough candles exist. ' +
      'Errors: INVALID_SYMBOL, VALIDATION_ERROR (unknown indicator or interval).',
    ...servesEndpoint(ep.indicators),
    summary: (r) =>
      `${r.symbol} ${r.interval} indicators over ${r.candles_used} candles at ${r.virtual_time}`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_balance',
    title: 'Sandbox balances',
    description: 'Balances and equity (USDT) of a backtest sandbox at its virtual time.',
    ...servesEndpoint(ep.balance),
    summary: (r) => `sandbox equity ${r.total_equity_usdt} USDT`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_positions',
    title: 'Sandbox positions',
    description:
      'Open positions of a backtest sandbox valued at its virtual time: quantity (base), entry and current price, ' +
      'unrealized PnL (USDT).',
    ...servesEndpoint(ep.positions),
    summary: (r) => `${r.positions.length} sandbox positions, unrealized ${r.total_unrealized_pnl} USDT`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_portfolio',
    title: 'Sandbox portfolio',
    description: 'Portfolio of a backtest sandbox at its virtual time: equity, cash, positions, PnL (USDT).',
    ...servesEndpoint(ep.portfolio),
    summary: (r) => `sandbox equity ${r.total_equity} USDT`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_results',
    title: 'Backtest results',
    description:
      'Results of a backtest: final equity, ROI, Sharpe and Sortino ratios, max drawdown, win rate, profit factor, ' +
      'trade counts, per-pair figures.',
    ...servesEndpoint(ep.results),
    summary: (r) => `backtest ${r.session_id} ${r.status}`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_equity_curve',
    title: 'Backtest equity curve',
    description: 'Equity (USDT) at every step so far (step 0 = start), oldest first, paginated.',
    ...servesEndpoint(ep.equityCurve),
    summary: (r) => `${r.points.length} equity points`,
  }),
  defineTool({
    ...read,
    name: 'get_backtest_trades',
    title: 'Backtest trade log',
    description: 'The fills of a backtest with their realized PnL, oldest first, paginated.',
    ...servesEndpoint(ep.trades),
    summary: (r) => `${r.trades.length} trades`,
  }),
  defineTool({
    ...read,
    name: 'list_backtests',
    title: 'Backtests',
    description:
      'Backtests of the caller (filter by strategy_label and status; sort by roi_pct, sharpe_ratio or created_at).',
    ...servesEndpoint(ep.list),
    summary: (r) => `${r.backtests.length} of ${r.total} backtests`,
  }),
  defineTool({
    ...read,
    name: 'compare_backtests',
    title: 'Compare backtests',
    description:
      'Compares 1 to 20 backtests side by side (ROI, Sharpe, drawdown, win rate) and names the best.',
    ...servesEndpoint(ep.compare),
    summary: (r) => `${r.comparisons.length} compared; best by ROI ${r.best_by_roi ?? '—'}`,
  }),
  defineTool({
    ...read,
    name: 'get_best_backtest',
    title: 'Best backtest',
    description:
      'The best backtest of the caller by a metric (roi_pct, sharpe_ratio, win_rate, profit_factor).',
    ...servesEndpoint(ep.best),
    summary: (r) => `best by ${r.metric}: ${r.session_id} (${r.value})`,
  }),
];
