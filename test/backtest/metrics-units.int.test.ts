import { describe, expect, it } from 'vitest';
import { computePerformance } from '../../domain/metrics/performance';
import { call, H, ok, performanceInputFromResults, useBacktestApp, useTrader } from './http-support';

/**
 * Issue 24: a long session over the real hourly BTCUSDT and ETHUSDT files (2021-04-05 → 2023-12-30, ~24,000 steps),
 * its equity read model packed (a row per batch): the results the venue computes over integer units equal the
 * decimal functions (`computePerformance(…, { decimal: true })`, the way every result was computed before) over the
 * published curve and trade log, figure for figure, and the curve's pages agree with the whole.
 */
const t = useBacktestApp();
const alice = useTrader(t, { max_position_size_pct: 100, max_order_size_pct: 100 });

describe('results over the packed equity of a long session', () => {
  it('are the decimal way to the last digit', async () => {
    const h = alice.headers;
    const created = await ok(t.app, h, 'POST', '/backtest/create', {
      start_time: '2021-04-06T00:00:00Z',
      end_time: '2023-12-30T00:00:00Z',
      starting_balance: '100000',
      candle_interval: '1h',
      agent_id: alice.agentId,
      pairs: ['BTCUSDT', 'ETHUSDT'],
    });
    const id = created.session_id as string;
    await ok(t.app, h, 'POST', `/backtest/${id}/start`);
    const order = (symbol: string, side: string, quantity: string) =>
      ok(t.app, h, 'POST', `/backtest/${id}/trade/order`, { symbol, side, type: 'market', quantity }, 201);
    await ok(t.app, h, 'POST', `/backtest/${id}/step`);
    await order('BTCUSDT', 'buy', '0.5');
    for (const steps of [1, 7, 500, 3000])
      await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps });
    await order('ETHUSDT', 'buy', '4');
    await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps: 6000 });
    await order('BTCUSDT', 'sell', '0.25');
    await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps: 4000 });
    await order('ETHUSDT', 'sell', '4');
    const end = await ok(t.app, h, 'POST', `/backtest/${id}/step/batch`, { steps: 100_000 });
    expect(end.is_complete).toBe(true);
    let results = await call(t.app, h, 'GET', `/backtest/${id}/results`);
    for (let i = 0; results.status === 503 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 200));
      results = await call(t.app, h, 'GET', `/backtest/${id}/results`);
    }
    expect(results.status, results.raw).toBe(200);
    const points: { step: number; time: string; equity: string; drawdown_pct: string }[] = [];
    for (let offset = 0; ; offset += 10_000) {
      const page = await ok(
        t.app,
        h,
        'GET',
        `/backtest/${id}/results/equity-curve?limit=10000&offset=${offset}`,
      );
      points.push(...page.points);
      if (points.length >= page.total) break;
    }
    expect(points.length).toBeGreaterThan(23_000);
    expect(points.map((p) => p.step)).toEqual(points.map((_, i) => i));
    expect(
      points.every((p, i) => i === 0 || Date.parse(p.time) - Date.parse(points[i - 1]!.time) === H),
    ).toBe(true);
    // A page across two batches' rows, with the running peak from the rows before it.
    const page = await ok(t.app, h, 'GET', `/backtest/${id}/results/equity-curve?limit=20&offset=3500`);
    expect(page.points).toEqual(points.slice(3500, 3520));
    const log = await ok(t.app, h, 'GET', `/backtest/${id}/results/trades?limit=1000`);
    const input = performanceInputFromResults({
      startingBalance: '100000',
      intervalMs: H,
      points,
      trades: log.trades,
      prices: end.prices,
      period: { start: Date.parse(points[0]!.time), end: Date.parse(points[points.length - 1]!.time) },
    });
    const decimal = computePerformance(input, { decimal: true });
    expect(decimal.metrics.sharpe_ratio).not.toBeNull();
    expect(Number(decimal.metrics.max_drawdown_pct)).toBeGreaterThan(0);
    expect(computePerformance(input)).toEqual(decimal);
    expect(results.body.metrics).toEqual(decimal.metrics);
    expect(results.body.by_pair).toEqual(decimal.by_pair);
    expect(results.body.summary).toMatchObject({
      ...decimal.summary,
      duration_real_seconds: expect.any(String),
    });
  }, 300_000);
});
