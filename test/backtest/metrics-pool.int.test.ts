import { afterAll, describe, expect, it } from 'vitest';
import { packUnits } from '../../domain/metrics/equity-points';
import { computePerformance, type PerformanceInput } from '../../domain/metrics/performance';
import type { MetricsFill } from '../../domain/metrics/trades';
import { backtestsProjection } from '../../projections/backtests';
import type { EquityRowsText, SessionPerformanceInput } from '../../projections/equity-rows-text';
import { allProjections } from '../../projections/registry';
import { createMetricsPool, withResultsOffThread } from '../../src/backtest/metrics-pool';

/**
 * Issue 24 item 4: a session's results are computed on a worker thread when backtests run on threads; the figures
 * are the in-process function's, exactly (the `backtests` projection writes whichever it is given).
 */

const H = 3_600_000;
const T0 = Date.parse('2021-04-05T00:00:00Z');
const pool = createMetricsPool();
afterAll(() => pool.close());

/** A whole-range-sized session: 23,977 hourly equity points and 400 fills on two pairs. */
const input = (): PerformanceInput => {
  let x = 17;
  const rnd = () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
  let equity = 100_000;
  const points = Array.from({ length: 23_977 }, (_, i) => {
    if (i > 0) equity *= 1 + (rnd() - 0.5) * 0.01;
    return { time: T0 + i * H, equity: equity.toFixed(8) };
  });
  const fills: MetricsFill[] = Array.from({ length: 400 }, (_, i) => {
    const price = (20_000 + rnd() * 1_000).toFixed(2);
    return {
      symbol: i % 3 === 0 ? 'ETHUSDT' : 'BTCUSDT',
      side: i % 2 === 0 ? 'buy' : 'sell',
      quantity: '0.10000000',
      price,
      notional: (Number(price) * 0.1).toFixed(8),
      fee: (Number(price) * 0.0001).toFixed(8),
      realizedPnl: i % 2 === 0 ? '0.00000000' : ((rnd() - 0.45) * 100).toFixed(8),
      time: T0 + i * 50 * H,
    };
  });
  return {
    startingBalance: '100000',
    equity: points,
    intervalMs: H,
    fills,
    marks: { BTCUSDT: '20500.00000000', ETHUSDT: '1500.00000000' },
    period: { start: T0, end: T0 + 23_976 * H },
  };
};

describe('backtest results on a worker thread', () => {
  it('computes exactly the in-process figures', async () => {
    const i = input();
    const off = await pool.performance(i);
    expect(off).toEqual(computePerformance(i));
    expect(off.metrics.returns_count).toBe(23_976);
  }, 120_000);

  it('takes the point times of a packed curve by transfer, with the in-process figures', async () => {
    // As the backtests projection hands them over: each call its own packed curve (the pool detaches its times).
    const packed = (): PerformanceInput => {
      const i = input();
      const points = i.equity as readonly { time: number; equity: string }[];
      return {
        ...i,
        equity: {
          times: Float64Array.from(points, (p) => p.time),
          chunks: [packUnits(points.map((p) => p.equity))],
        },
      };
    };
    const sent = packed();
    const times = (sent.equity as { times: Float64Array }).times;
    const off = await pool.performance(sent);
    expect(times.byteLength).toBe(0);
    expect(off).toEqual(computePerformance(packed()));
    expect(off.metrics.returns_count).toBe(23_976);
  }, 120_000);

  it("takes a session's rows as bytes by transfer, with the in-process figures", async () => {
    // As the backtests projection hands them over: the rows' COPY text, step 0 alone and then batches.
    const rows = (): SessionPerformanceInput => {
      const i = input();
      const values = (i.equity as readonly { equity: string }[]).map((p) => p.equity);
      const text = [
        `0\t1\t${packUnits(values.slice(0, 1))}\n`,
        `1\t10000\t${packUnits(values.slice(1, 10_001))}\n`,
        `10001\t${values.length - 10_001}\t${packUnits(values.slice(10_001))}\n`,
      ].join('');
      const lines = text.split(/(?<=\n)/);
      return { ...i, equity: { start: T0, stepMs: H, rows: lines.map((l) => new TextEncoder().encode(l)) } };
    };
    const sent = rows();
    const bytes = (sent.equity as EquityRowsText).rows;
    expect(bytes.length).toBe(3);
    const off = await pool.performance(sent);
    expect(bytes.map((b) => b.byteLength)).toEqual([0, 0, 0]);
    expect(off).toEqual(computePerformance(input()));
    expect(off.metrics.returns_count).toBe(23_976);
  }, 120_000);

  it('replaces only the backtests projection, keeping the order', () => {
    const list = withResultsOffThread(allProjections, pool.performance);
    expect(list.map((p) => p.name)).toEqual(allProjections.map((p) => p.name));
    const changed = list.filter((p, k) => p !== allProjections[k]);
    expect(changed.map((p) => [p.name, p.version])).toEqual([['backtests', backtestsProjection.version]]);
  });
});
