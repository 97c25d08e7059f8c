import type { LoadedSession } from '../../commands/backtest';
import { progressPct } from '../../domain/backtest/clock';
import type { BacktestStreamEvent } from '../../domain/backtest/events';
import { closedCandlesBetween, lastClosed, type SessionMarket } from '../../domain/backtest/market';
import type { BacktestConfig } from '../../domain/backtest/state';
import type { Candle } from '../../domain/market/candle';
import { computePerformance } from '../../domain/metrics/performance';
import { DomainError } from '../../domain/shared/errors';
import { type Dec, dec, fmt, HUNDRED, roundHalfEven8, ZERO } from '../../domain/trading/decimal';
import type { WalletState } from '../../domain/wallet/state';

/**
 * The mapping layer between a backtest session (state, sandbox log, candles) and the wire (STYLE: snake_case,
 * 8-place decimal strings, ISO timestamps). Everything here reads the session at its virtual time through
 * `domain/backtest/market` — only candles closed by then — so no response can carry a later price.
 */

const iso = (ms: number): string => new Date(ms).toISOString();
const d8 = (v: Dec): string => fmt(roundHalfEven8(v));

/** The session's virtual time (ms). */
export const virtualTimeOf = (session: LoadedSession): number => session.state.virtualTime;

/** The mark of a symbol at the session's virtual time: the close of its last closed candle. */
const markOf = (market: SessionMarket, at: number) => (symbol: string) => {
  const c = lastClosed(market, symbol, at);
  return c ? dec(c.close) : undefined;
};

/** A position valued at the virtual-time mark (spec "Position"). */
const positionsOf = (wallet: WalletState, market: SessionMarket, at: number) => {
  const mark = markOf(market, at);
  return Object.values(wallet.holdings)
    .sort((a, b) => (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0))
    .map((h) => {
      const avg = h.avgEntry;
      const price = mark(h.symbol);
      const value = price ? h.quantity.times(price) : h.cost;
      const unrealized = value.minus(h.cost);
      return {
        exact: { value, unrealized },
        out: {
          symbol: h.symbol,
          asset: h.asset,
          quantity: fmt(h.quantity),
          avg_entry_price: fmt(avg),
          current_price: d8(price ?? avg),
          market_value: d8(value),
          unrealized_pnl: d8(unrealized),
          unrealized_pnl_pct: h.cost.isZero() ? fmt(ZERO) : d8(unrealized.div(h.cost).times(HUNDRED)),
          opened_at: h.openedAt,
        },
      };
    });
};

/** Portfolio figures at virtual time (spec "Portfolio snapshot"). */
export const portfolioOut = (session: LoadedSession, market: SessionMarket) => {
  const wallet = session.state.wallet;
  const at = virtualTimeOf(session);
  const positions = positionsOf(wallet, market, at);
  const positionValue = positions.reduce((s, p) => s.plus(p.exact.value), ZERO);
  const unrealized = positions.reduce((s, p) => s.plus(p.exact.unrealized), ZERO);
  const equity = wallet.cash.plus(wallet.lockedCash).plus(positionValue);
  const start = dec(session.state.config!.startingBalance);
  const totalPnl = wallet.realizedPnl.plus(unrealized);
  return {
    total_equity: d8(equity),
    available_cash: d8(wallet.cash),
    locked_cash: d8(wallet.lockedCash),
    total_position_value: d8(positionValue),
    unrealized_pnl: d8(unrealized),
    realized_pnl: d8(wallet.realizedPnl),
    total_pnl: d8(totalPnl),
    fees_paid: d8(wallet.feesPaid),
    net_pnl: d8(totalPnl.minus(wallet.feesPaid)),
    roi_pct: d8(equity.minus(start).div(start).times(HUNDRED)),
    starting_balance: d8(start),
    positions: positions.map((p) => p.out),
    timestamp: iso(at),
  };
};

/** Balances at virtual time (spec "Balance"). */
export const balanceOut = (session: LoadedSession, market: SessionMarket) => {
  const wallet = session.state.wallet;
  const portfolio = portfolioOut(session, market);
  return {
    balances: [
      {
        asset: 'USDT',
        available: d8(wallet.cash),
        locked: d8(wallet.lockedCash),
        total: d8(wallet.cash.plus(wallet.lockedCash)),
      },
      ...Object.values(wallet.holdings)
        .sort((a, b) => (a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0))
        .map((h) => ({
          asset: h.asset,
          available: d8(h.quantity.minus(h.locked)),
          locked: d8(h.locked),
          total: d8(h.quantity),
        })),
    ],
    total_equity_usdt: portfolio.total_equity,
    virtual_time: portfolio.timestamp,
  };
};

/** A candle on the wire (spec "Candle"), with its open time: as the market endpoints show it. */
export { candleOut } from '../market/present';

/** A pair's entry in the step response's `prices`: the last candle closed by virtual time. */
interface StepPrice {
  readonly open: string;
  readonly high: string;
  readonly low: string;
  readonly close: string;
  readonly volume: string;
  readonly time: string;
}

/** Entries already built, per candle (candles are immutable; each is shown by many steps and sessions). */
const stepPrices = new WeakMap<Candle, StepPrice>();

const stepPrice = (c: Candle): StepPrice => {
  let p = stepPrices.get(c);
  if (!p) {
    p = Object.freeze({
      open: c.open,
      high: c.high,
      low: c.low,
      close: c.close,
      volume: c.volume,
      time: iso(c.openTime),
    });
    stepPrices.set(c, p);
  }
  return p;
};

/** The step response (spec `POST /backtest/{id}/step`), from the session after the step and its new events. */
export const stepOut = (
  session: LoadedSession,
  market: SessionMarket,
  events: readonly BacktestStreamEvent[],
) => {
  const config = session.state.config!;
  const at = virtualTimeOf(session);
  const prices: Record<string, StepPrice> = {};
  // Every pair's last candle: from its resident chunk, or one candle from the store for a pair the step did not walk.
  for (const s of market.series) {
    const c = lastClosed(market, s.symbol, at);
    if (c) prices[s.symbol] = stepPrice(c);
  }
  const portfolio = portfolioOut(session, market);
  const filled = [];
  const cancelled = [];
  for (const e of events) {
    if (e.type === 'OrderFilled') {
      const d = e.data;
      filled.push({
        order_id: d.order_id,
        trade_id: d.trade_id,
        symbol: d.symbol,
        side: d.side,
        type: d.type,
        quantity: d.quantity,
        executed_price: d.executed_price,
        reference_price: d.reference_price,
        slippage_pct: d.slippage_pct,
        fee: d.fee,
        total: d.total,
        realized_pnl: d.realized_pnl,
        candle_time: d.reference_time,
        filled_at: d.filled_at,
      });
    } else if (e.type === 'OrderCancelled') {
      const d = e.data;
      cancelled.push({
        order_id: d.order_id,
        symbol: d.symbol,
        reason: d.reason,
        unlocked_amount: d.unlocked_amount,
        cancelled_at: d.cancelled_at,
      });
    }
  }
  const step = session.state.step;
  return {
    session_id: session.id,
    virtual_time: iso(at),
    step,
    total_steps: config.totalSteps,
    progress_pct: progressPct(step, config.totalSteps),
    remaining_steps: config.totalSteps - step,
    is_complete: step === config.totalSteps,
    status: session.state.status!,
    prices,
    orders_filled: filled,
    orders_cancelled: cancelled,
    portfolio: {
      total_equity: portfolio.total_equity,
      available_cash: portfolio.available_cash,
      locked_cash: portfolio.locked_cash,
      unrealized_pnl: portfolio.unrealized_pnl,
      positions: portfolio.positions,
    },
  };
};

/** The session's fill model and fee rates, fixed at creation (`executionTerms` of the contract). */
export const executionTermsOut = (config: BacktestConfig) => ({
  fill_model: config.fillModel,
  participation_pct: config.participationPct,
  fee_rate: fmt(roundHalfEven8(dec(config.feeRate))),
  maker_fee_rate: fmt(roundHalfEven8(dec(config.makerFeeRate))),
});

/** Status of a session (ARCHITECTURE §14b). */
export const statusOut = (session: LoadedSession) => {
  const s = session.state;
  const config = s.config!;
  return {
    session_id: session.id,
    status: s.status!,
    step: s.step,
    total_steps: config.totalSteps,
    progress_pct: progressPct(s.step, config.totalSteps),
    virtual_time: iso(s.virtualTime),
    strategy_label: config.strategyLabel,
    agent_id: config.agentId,
    candle_interval: config.interval,
    start_time: iso(config.startTime),
    end_time: iso(config.endTime),
    pairs: config.pairs,
    ...executionTermsOut(config),
    created_at: config.createdAt,
    started_at: s.startedAt,
    completed_at: s.status === 'completed' ? s.endedAt : null,
    ended_at: s.endedAt,
    failure_reason: s.failure,
  };
};

/** The summary of a session's results so far, from memory (same formulas as the results read model). */
export const summaryOut = (session: LoadedSession, finalEquity: string, durationRealSeconds: string) => {
  const config = session.state.config!;
  const performance = computePerformance({
    startingBalance: config.startingBalance,
    equity: [
      { time: config.startTime, equity: config.startingBalance },
      { time: session.state.virtualTime, equity: finalEquity },
    ],
    intervalMs: config.intervalMs,
    fills: session.log.fills.map((f) => ({
      symbol: f.symbol,
      side: f.side,
      quantity: f.quantity,
      price: f.price,
      notional: f.notional,
      fee: f.fee,
      realizedPnl: f.realized_pnl,
      time: Date.parse(f.executed_at),
    })),
    period: { start: config.startTime, end: session.state.virtualTime },
  });
  return { ...performance.summary, duration_real_seconds: durationRealSeconds };
};

/** 24h statistics at virtual time (spec "Ticker"), from the candles closed in (T − 24h, T]. */
export const tickerOut = (market: SessionMarket, symbol: string, at: number) => {
  const candles = closedCandlesBetween(market, symbol, at, at - 86_400_000 - market.intervalMs + 1, at);
  const window = candles.filter((c) => c.openTime + market.intervalMs > at - 86_400_000);
  const first = window[0];
  const last = window[window.length - 1];
  if (!first || !last) {
    throw new DomainError(
      'PRICE_NOT_AVAILABLE',
      `no ${symbol} candle closed in the 24 hours before virtual time`,
      {
        symbol,
      },
    );
  }
  let high = dec(first.high);
  let low = dec(first.low);
  let volume = ZERO;
  let quote = ZERO;
  let trades = 0;
  for (const c of window) {
    if (dec(c.high).gt(high)) high = dec(c.high);
    if (dec(c.low).lt(low)) low = dec(c.low);
    volume = volume.plus(c.volume);
    quote = quote.plus(c.quoteVolume ?? dec(c.volume).times(c.close));
    trades += c.tradeCount ?? 0;
  }
  const open = dec(first.open);
  const change = dec(last.close).minus(open);
  return {
    symbol,
    open: first.open,
    high: fmt(high),
    low: fmt(low),
    close: last.close,
    volume: fmt(volume),
    quote_volume: d8(quote),
    change: fmt(change),
    change_pct: d8(change.div(open).times(HUNDRED)),
    trade_count: trades,
    timestamp: iso(last.openTime + market.intervalMs),
    virtual_time: iso(at),
  };
};
