import type { LoadedSession } from '../../../commands/backtest';
import { normalizeSymbol } from '../../../domain/market/pair';
import { m, out8 } from '../../../domain/metrics/decimal';
import { drawdownSeries } from '../../../domain/metrics/drawdown';
import { DomainError } from '../../../domain/shared/errors';
import { dec, fmt, ZERO } from '../../../domain/trading/decimal';
import type { BacktestResults } from '../../../projections/backtests';
import {
  type BacktestRow,
  type BestMetric,
  backtestTrades,
  bestBacktest,
  getBacktest,
  listBacktests as readBacktests,
  equityCurve as readEquityCurve,
} from '../../../queries/backtests';
import { executionTermsOut } from '../../backtest/present';
import type { Call } from '../call';
import { settleOwnWrites } from '../read-your-writes';
import { backtestCaller, ownedSession } from './sessions';

/**
 * Backtest results (spec "Backtest endpoints": results, equity curve, trade log, list, compare, best), read from
 * the `backtests` read models (metrics of docs/metrics.md).
 */

const iso = (v: Date | string | number): string => new Date(v).toISOString();
const text = (v: string | null): string | null => (v === null ? null : fmt(dec(v)));

/**
 * The session's read-model row once it reflects the session's current status and step (a bounded wait: steps
 * answer before their fold); `SERVICE_UNAVAILABLE` 503 while its results are still being computed.
 */
const rowOf = async (call: Call, session: LoadedSession): Promise<BacktestRow> => {
  const { services } = call;
  const db = services.database.db;
  const fresh = (r: BacktestRow | undefined) =>
    r !== undefined && r.status === session.state.status && r.step === session.state.step;
  let row = await getBacktest(db, session.id);
  if (!fresh(row)) {
    const target = session.position ?? (await services.eventStore.headPosition());
    await services.projections.waitFor(target, services.config.READ_MODEL_WAIT_MS, ['backtests']);
    row = await getBacktest(db, session.id);
  }
  if (!row || !fresh(row)) {
    throw new DomainError(
      'SERVICE_UNAVAILABLE',
      'the results of this session are being computed; retry shortly',
      {
        session_id: session.id,
      },
    );
  }
  return row;
};

/** Full results of a completed or cancelled session: its configuration, summary, metrics and by-pair table. */
export const backtestResults = async (call: Call, id: string) => {
  const session = await ownedSession(call, id);
  const status = session.state.status;
  if (status !== 'completed' && status !== 'cancelled') {
    throw new DomainError(
      'BACKTEST_INVALID_STATE',
      `results exist once a session is completed or cancelled; this one is ${status}`,
      { status },
    );
  }
  const row = await rowOf(call, session);
  const results = row.results as BacktestResults | null;
  if (!results) throw new DomainError('SERVICE_UNAVAILABLE', 'the results are being computed; retry shortly');
  const c = session.state.config!;
  return {
    session_id: session.id,
    status,
    config: {
      start_time: iso(c.startTime),
      end_time: iso(c.endTime),
      starting_balance: c.startingBalance,
      strategy_label: c.strategyLabel,
      candle_interval: c.interval,
      pairs: c.pairs,
      agent_id: c.agentId,
      ...executionTermsOut(c),
    },
    summary: results.summary,
    metrics: results.metrics,
    by_pair: results.by_pair,
  };
};

/** Equity and drawdown (%) at every step so far (step 0 = start), oldest first, a page of it. */
export const backtestEquityCurve = async (
  call: Call,
  id: string,
  page: { limit: number; offset: number },
) => {
  const session = await ownedSession(call, id);
  await rowOf(call, session);
  const rows = await readEquityCurve(call.services.database.db, session.id, page);
  // Each point's drawdown from the running peak, the page's peak taken from the points before it.
  const drawdowns = drawdownSeries(
    rows.rows.map((r) => m(r.equity)),
    rows.peakBefore === null ? null : m(rows.peakBefore),
  );
  return {
    session_id: session.id,
    candle_interval: session.state.config!.interval,
    points: rows.rows.map((r, i) => ({
      step: r.step,
      time: iso(r.time),
      equity: r.equity,
      drawdown_pct: out8(drawdowns[i]!),
    })),
    total: rows.total,
    limit: page.limit,
    offset: page.offset,
  };
};

/** The complete trade log of a session in execution order, a page of it (optionally of one symbol). */
export const backtestTradeLog = async (
  call: Call,
  id: string,
  q: { symbol?: string | undefined; limit: number; offset: number },
) => {
  const session = await ownedSession(call, id);
  await rowOf(call, session);
  const page = await backtestTrades(call.services.database.db, session.id, {
    limit: q.limit,
    offset: q.offset,
    ...(q.symbol ? { symbol: normalizeSymbol(q.symbol) } : {}),
  });
  return {
    session_id: session.id,
    trades: page.rows.map((r) => ({
      trade_id: r.trade_id,
      order_id: r.order_id,
      symbol: r.symbol,
      side: r.side,
      type: r.type,
      trigger: r.fill_trigger,
      quantity: r.quantity,
      price: r.price,
      notional: r.notional,
      fee: r.fee,
      total: r.total,
      realized_pnl: r.realized_pnl,
      slippage_pct: r.slippage_pct,
      reference_price: r.reference_price,
      reference_time: iso(r.reference_time),
      price_source: r.price_source,
      executed_at: iso(r.executed_at),
    })),
    total: page.total,
    limit: q.limit,
    offset: q.offset,
  };
};

/** Filter, sort and page of {@link listBacktests}. */
export interface BacktestListQuery {
  strategyLabel?: string | undefined;
  status?: BacktestRow['status'] | undefined;
  sortBy: 'roi_pct' | 'sharpe_ratio' | 'created_at';
  limit: number;
  offset: number;
}

/** The caller's sessions (the agent's with an agent credential), filtered by label and status, sorted. */
export const listBacktests = async (call: Call, q: BacktestListQuery) => {
  await settleOwnWrites(call, ['backtests']);
  const page = await readBacktests(call.services.database.db, backtestCaller(call), {
    ...(q.strategyLabel !== undefined ? { strategyLabel: q.strategyLabel } : {}),
    ...(q.status ? { status: q.status } : {}),
    sortBy: q.sortBy,
    limit: q.limit,
    offset: q.offset,
  });
  return {
    backtests: page.rows.map((r) => ({
      session_id: r.session_id,
      status: r.status,
      strategy_label: r.strategy_label,
      agent_id: r.agent_id,
      candle_interval: r.candle_interval,
      start_time: iso(r.start_time),
      end_time: iso(r.end_time),
      pairs: r.pairs,
      step: r.step,
      total_steps: r.total_steps,
      final_equity: text(r.final_equity),
      roi_pct: text(r.roi_pct),
      sharpe_ratio: text(r.sharpe_ratio),
      max_drawdown_pct: text(r.max_drawdown_pct),
      win_rate: text(r.win_rate),
      profit_factor: text(r.profit_factor),
      total_trades: r.total_trades,
      created_at: iso(r.created_at),
      ended_at: r.ended_at ? iso(r.ended_at) : null,
    })),
    total: page.total,
    limit: q.limit,
    offset: q.offset,
  };
};

/** The sentence of a comparison: which session leads on return, risk-adjusted return and drawdown. */
const recommendation = (
  rows: { session_id: string; label: string; roi: string | null; sharpe: string | null; dd: string | null }[],
  best: { roi: string | null; sharpe: string | null; dd: string | null },
): string => {
  const name = (id: string | null) => {
    const r = rows.find((x) => x.session_id === id);
    return r ? (r.label ? `${r.session_id} (${r.label})` : r.session_id) : '';
  };
  if (!best.roi) return 'None of these sessions has results yet: complete or cancel them first.';
  const roi = rows.find((r) => r.session_id === best.roi)!;
  const parts = [`${name(best.roi)} has the highest return (ROI ${dec(roi.roi!).toFixed(2)}%)`];
  if (best.sharpe && best.sharpe === best.roi && best.dd === best.roi) {
    return `Prefer ${name(best.roi)}: it leads on return, risk-adjusted return and drawdown.`;
  }
  if (best.sharpe) {
    const s = rows.find((r) => r.session_id === best.sharpe)!;
    parts.push(
      best.sharpe === best.roi
        ? 'also the best risk-adjusted return'
        : `${name(best.sharpe)} the best risk-adjusted return (Sharpe ${dec(s.sharpe!).toFixed(2)})`,
    );
  }
  if (best.dd) {
    const d = rows.find((r) => r.session_id === best.dd)!;
    parts.push(`${name(best.dd)} the smallest drawdown (${dec(d.dd!).toFixed(2)}%)`);
  }
  const pick = best.sharpe ?? best.roi;
  return `${parts.join('; ')}. Prefer ${name(pick)}${best.sharpe ? ' for the best return per unit of risk' : ''}.`;
};

/**
 * Compares 1 to 20 sessions of the caller: their headline metrics, the best by ROI, Sharpe and drawdown, and a
 * recommendation. `VALIDATION_ERROR` for an empty or too long list.
 */
export const compareBacktests = async (call: Call, sessionIds: readonly string[]) => {
  const ids = [...new Set(sessionIds.map((s) => s.trim()).filter(Boolean))];
  if (ids.length === 0 || ids.length > 20) {
    throw new DomainError('VALIDATION_ERROR', 'sessions must list 1 to 20 session ids, comma-separated', {
      field: 'sessions',
    });
  }
  const rows = [];
  for (const id of ids) rows.push(await rowOf(call, await ownedSession(call, id)));
  const comparisons = rows.map((r) => ({
    session_id: r.session_id,
    strategy_label: r.strategy_label,
    status: r.status,
    roi_pct: text(r.roi_pct),
    sharpe_ratio: text(r.sharpe_ratio),
    sortino_ratio: text(r.sortino_ratio),
    max_drawdown_pct: text(r.max_drawdown_pct),
    win_rate: text(r.win_rate),
    profit_factor: text(r.profit_factor),
    total_trades: r.total_trades,
    final_equity: text(r.final_equity),
  }));
  const pick = (value: (c: (typeof comparisons)[number]) => string | null, lowest = false) => {
    let best: { id: string; v: ReturnType<typeof dec> } | null = null;
    for (const c of comparisons) {
      const v = value(c);
      if (v === null) continue;
      const d = dec(v);
      if (!best || (lowest ? d.lt(best.v) : d.gt(best.v))) best = { id: c.session_id, v: d };
    }
    return best?.id ?? null;
  };
  const best = {
    roi: pick((c) => c.roi_pct),
    sharpe: pick((c) => c.sharpe_ratio),
    dd: pick((c) => c.max_drawdown_pct, true),
  };
  return {
    comparisons,
    best_by_roi: best.roi,
    best_by_sharpe: best.sharpe,
    best_by_drawdown: best.dd,
    recommendation: recommendation(
      comparisons.map((c) => ({
        session_id: c.session_id,
        label: c.strategy_label ?? '',
        roi: c.roi_pct,
        sharpe: c.sharpe_ratio,
        dd: c.max_drawdown_pct,
      })),
      best,
    ),
  };
};

/** The caller's completed session with the highest value of `metric`; `BACKTEST_NOT_FOUND` when none has it. */
export const bestBacktestOf = async (call: Call, metric: BestMetric, strategyLabel?: string) => {
  await settleOwnWrites(call, ['backtests']);
  const row = await bestBacktest(call.services.database.db, backtestCaller(call), metric, strategyLabel);
  if (!row) {
    throw new DomainError('BACKTEST_NOT_FOUND', `no completed backtest with a ${metric}`, { metric });
  }
  return {
    session_id: row.session_id,
    metric,
    value: text(row[metric]) ?? fmt(ZERO),
    strategy_label: row.strategy_label,
    status: row.status,
    roi_pct: text(row.roi_pct),
    sharpe_ratio: text(row.sharpe_ratio),
    win_rate: text(row.win_rate),
    profit_factor: text(row.profit_factor),
    created_at: iso(row.created_at),
  };
};
