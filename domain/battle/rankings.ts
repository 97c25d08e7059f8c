import { computePerformance, type Performance } from '../metrics/performance';
import type { MetricsFill } from '../metrics/trades';
import { dec, fmt, roundHalfEven8 } from '../trading/decimal';
import type { OrderFilledData } from '../wallet/events';
import type { PerformanceSummaryEntry, RankingEntry, RankingMetric } from './events';

/** What one participant is ranked on (ARCHITECTURE §10, §11): activity inside the battle window only. */
export interface ParticipantRecord {
  agentId: string;
  agentName: string;
  /** USDT, the battle's starting balance. */
  startingBalance: string;
  /**
   * Equity points (time ms, USDT), oldest first: the starting balance at the start, then the snapshots (live,
   * every 5 s) or the equity at every step (historical), ending with the current (or final) equity.
   */
  equity: readonly { time: number; equity: string }[];
  /** Δ between equity points (ms): 5,000 live, the candle interval historical. */
  intervalMs: number;
  /** Fills inside the battle window, in execution order. */
  fills: readonly MetricsFill[];
  /** Prices valuing open positions at the end (per-pair net PnL). */
  marks?: Readonly<Record<string, string>>;
  period: { start: number; end: number };
  /**
   * USDT: the equity now when it was measured after the last point (historical: orders placed at the virtual
   * time since the last step); the entry's `equity`, `roi_pct` and `total_pnl` (`computePerformance`'s
   * `finalEquity`). Default: the last point.
   */
  finalEquity?: string;
}

/** A fill of the wallet ledger as the metrics read it. */
export const metricsFillOf = (d: OrderFilledData): MetricsFill => ({
  symbol: d.symbol,
  side: d.side,
  quantity: d.quantity,
  price: d.executed_price,
  notional: d.notional,
  fee: d.fee,
  realizedPnl: d.realized_pnl,
  time: Date.parse(d.filled_at),
});

const metricOf = (entry: RankingEntry, metric: RankingMetric): string | null => entry[metric];

/** Descending by the metric with nulls last, then by ROI, then by agent id (a total, deterministic order). */
const compare =
  (metric: RankingMetric) =>
  (a: RankingEntry, b: RankingEntry): number => {
    const x = metricOf(a, metric);
    const y = metricOf(b, metric);
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      const d = Number(y) - Number(x);
      if (d !== 0) return d;
    }
    const r = Number(b.roi_pct) - Number(a.roi_pct);
    if (r !== 0) return r;
    return a.agent_id < b.agent_id ? -1 : a.agent_id > b.agent_id ? 1 : 0;
  };

/**
 * Ranks participants by the battle's `ranking_metric` (spec "Live" ranking entry; ARCHITECTURE §10, §11). Every
 * figure comes from `computePerformance` of `domain/metrics` over the participant's window: `equity` the last
 * equity point (cash + locked + Σ quantity × price, USDT), `roi_pct` and `total_pnl` against the starting
 * balance, `trade_count` the fills, `win_rate` over closed (reducing) fills, `sharpe_ratio` from the equity
 * returns (null with fewer than 30 returns). Order: the metric descending, nulls last; ties by ROI, then agent id.
 * Ranks are 1-based and distinct.
 */
export const rankParticipants = (
  records: readonly ParticipantRecord[],
  metric: RankingMetric,
): {
  rankings: RankingEntry[];
  summaries: PerformanceSummaryEntry[];
  performance: Map<string, Performance>;
} => {
  const performance = new Map<string, Performance>();
  const entries = records.map((r): RankingEntry => {
    const p = computePerformance({
      startingBalance: r.startingBalance,
      equity: r.equity,
      intervalMs: r.intervalMs,
      fills: r.fills,
      ...(r.marks ? { marks: r.marks } : {}),
      ...(r.finalEquity !== undefined ? { finalEquity: r.finalEquity } : {}),
      period: r.period,
    });
    performance.set(r.agentId, p);
    return {
      rank: 0,
      agent_id: r.agentId,
      agent_name: r.agentName,
      equity: p.summary.final_equity,
      roi_pct: p.summary.roi_pct,
      total_pnl: p.summary.total_pnl,
      trade_count: p.summary.total_trades,
      win_rate: p.metrics.win_rate,
      sharpe_ratio: p.metrics.sharpe_ratio,
      profit_factor: p.metrics.profit_factor,
    };
  });
  const rankings = entries.sort(compare(metric)).map((e, i) => ({ ...e, rank: i + 1 }));
  const summaries = rankings.map((e) => {
    const p = performance.get(e.agent_id)!;
    return {
      agent_id: e.agent_id,
      summary: { ...p.summary },
      metrics: { ...p.metrics },
    };
  });
  return { rankings, summaries, performance };
};

/** ROI in % of an equity against the starting balance (8 places, half to even): (equity − start) / start × 100. */
export const roiPct = (equity: string, startingBalance: string): string => {
  const start = dec(startingBalance);
  return start.isZero() ? '0.00000000' : fmt(roundHalfEven8(dec(equity).minus(start).div(start).times(100)));
};
