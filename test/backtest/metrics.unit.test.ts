import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { m } from '../../domain/metrics/decimal';
import { drawdownSeries, maxDrawdown } from '../../domain/metrics/drawdown';
import { computePerformance } from '../../domain/metrics/performance';
import { periodReturns, periodsPerYear, sharpeRatio, sortinoRatio } from '../../domain/metrics/returns';
import { closedTrades, type MetricsFill, tradeStats } from '../../domain/metrics/trades';

const H = 3_600_000;
const T0 = Date.parse('2024-01-01T00:00:00Z');

/** The §11 formulas written out again with plain floats: an independent check of the decimal code. */
const floatSharpe = (e: number[], periodsPerYearValue: number) => {
  const r = e.slice(1).map((v, i) => v / e[i]! - 1);
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  const std = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / (r.length - 1));
  const dd = Math.sqrt(r.reduce((a, b) => a + Math.min(b, 0) ** 2, 0) / r.length);
  return {
    sharpe: (mean / std) * Math.sqrt(periodsPerYearValue),
    sortino: (mean / dd) * Math.sqrt(periodsPerYearValue),
  };
};

describe('returns and ratios (ARCHITECTURE §11)', () => {
  it('annualises with 365 × 86,400 / Δ periods per year', () => {
    expect(periodsPerYear(60_000).toFixed()).toBe('525600');
    expect(periodsPerYear(H).toFixed()).toBe('8760');
    expect(periodsPerYear(86_400_000).toFixed()).toBe('365');
    expect(() => periodsPerYear(0)).toThrow(RangeError);
  });

  it('matches a float recomputation on a hand-made hourly curve of 40 returns', () => {
    const e = Array.from({ length: 41 }, (_, i) => 10000 + 50 * Math.sin(i) + 3 * i);
    const rounded = e.map((v) => v.toFixed(8));
    const returns = periodReturns(rounded.map((v) => m(v)));
    const float = floatSharpe(
      rounded.map((v) => Number(v)),
      8760,
    );
    expect(Number(sharpeRatio(returns, H))).toBeCloseTo(float.sharpe, 6);
    expect(Number(sortinoRatio(returns, H))).toBeCloseTo(float.sortino, 6);
  });

  it('is null with 29 returns, and with a zero deviation', () => {
    const rising = Array.from({ length: 30 }, (_, i) => m(10000 + i));
    expect(sharpeRatio(periodReturns(rising), H)).toBeNull();
    const rising31 = Array.from({ length: 31 }, (_, i) => m(10000 + i));
    expect(sharpeRatio(periodReturns(rising31), H)).not.toBeNull();
    expect(sortinoRatio(periodReturns(rising31), H)).toBeNull(); // no losing period
    const flat = Array.from({ length: 40 }, () => m(10000));
    expect(sharpeRatio(periodReturns(flat), H)).toBeNull();
  });
});

describe('maximum drawdown', () => {
  it('measures from the running peak and runs to the recovery', () => {
    const points = [100, 120, 90, 110, 121, 60, 70].map((e, i) => ({ time: T0 + i * H, equity: m(e) }));
    const dd = maxDrawdown(points);
    // From 121 (hour 4) to 60 (hour 5): 61 / 121 × 100; never recovered: to hour 6.
    expect(dd.pct.toFixed(8)).toBe(m(61).div(121).times(100).toFixed(8));
    expect([dd.peakAt, dd.troughAt, dd.recoveredAt, dd.durationMs]).toEqual([
      T0 + 4 * H,
      T0 + 5 * H,
      null,
      2 * H,
    ]);
  });

  it('stays within [0, 100] and is 0 for a curve that never falls', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 60 }),
        (values) => {
          const dd = maxDrawdown(values.map((v, i) => ({ time: i * H, equity: m(v) })));
          expect(dd.pct.gte(0) && dd.pct.lte(100)).toBe(true);
          const sorted = [...values].sort((a, b) => a - b);
          if (values.every((v, i) => v === sorted[i])) expect(dd.pct.isZero()).toBe(true);
        },
      ),
    );
  });

  it('drawdownSeries: each point below its running peak; its deepest is maxDrawdown; pages agree with the whole', () => {
    expect(drawdownSeries([100, 120, 90, 121, 60].map((e) => m(e))).map((d) => d.toFixed(8))).toEqual([
      '0.00000000',
      '0.00000000',
      m(30).div(120).times(100).toFixed(8),
      '0.00000000',
      m(61).div(121).times(100).toFixed(8),
    ]);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 60 }),
        fc.nat(),
        (values, cutAt) => {
          const equities = values.map((v) => m(v));
          const series = drawdownSeries(equities);
          const deepest = series.reduce((a, b) => (b.gt(a) ? b : a));
          const dd = maxDrawdown(equities.map((equity, i) => ({ time: i * H, equity })));
          expect(deepest.eq(dd.pct)).toBe(true);
          const cut = cutAt % values.length;
          const peakBefore = cut === 0 ? null : equities.slice(0, cut).reduce((a, b) => (b.gt(a) ? b : a));
          const page = drawdownSeries(equities.slice(cut), peakBefore);
          expect(page.map((d) => d.toFixed())).toEqual(series.slice(cut).map((d) => d.toFixed()));
        },
      ),
    );
  });
});

describe('closed trades', () => {
  const fill = (
    side: 'buy' | 'sell',
    quantity: string,
    price: string,
    pnl: string,
    hour: number,
  ): MetricsFill => ({
    symbol: 'BTCUSDT',
    side,
    quantity,
    price,
    fee: '0',
    realizedPnl: pnl,
    time: T0 + hour * H,
  });

  it('counts sells as closed trades, with the duration since the position opened', () => {
    const trades = closedTrades([
      fill('buy', '1', '100', '0', 0),
      fill('buy', '1', '110', '0', 1),
      fill('sell', '1', '120', '15', 3),
      fill('sell', '1', '90', '-15', 5),
      fill('buy', '1', '100', '0', 6),
      fill('sell', '1', '100', '0', 7),
    ]);
    expect(trades.map((t) => [t.realizedPnl.toFixed(), (t.time - t.openedAt!) / H])).toEqual([
      ['15', 3],
      ['-15', 5],
      ['0', 1],
    ]);
    const stats = tradeStats(trades);
    expect(stats.profitFactor?.toFixed()).toBe('1');
    expect(stats.avgLoss?.toFixed()).toBe('-15');
    expect(stats.currentStreak).toBe(0);
  });

  it('has no profit factor and no average loss without losses', () => {
    const stats = tradeStats(
      closedTrades([fill('buy', '1', '100', '0', 0), fill('sell', '1', '120', '20', 1)]),
    );
    expect(stats.profitFactor).toBeNull();
    expect(stats.avgLoss).toBeNull();
    expect(stats.winRate?.toFixed()).toBe('100');
    expect(stats.currentStreak).toBe(1);
  });

  it('splits the total PnL exactly over the pairs (Σ net_pnl = final equity − start)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            symbol: fc.constantFrom('BTCUSDT', 'ETHUSDT'),
            qty: fc.integer({ min: 1, max: 50 }),
            price: fc.integer({ min: 100, max: 200 }),
            sell: fc.boolean(),
          }),
          { maxLength: 30 },
        ),
        fc.integer({ min: 100, max: 200 }),
        (orders, markPrice) => {
          // A tiny spot ledger: sell only what is held; fees 0.1 % of notional.
          const held = new Map<string, { q: number; cost: ReturnType<typeof m> }>();
          let cash = m(100000);
          const fills: MetricsFill[] = [];
          orders.forEach((o, i) => {
            const h = held.get(o.symbol) ?? { q: 0, cost: m(0) };
            const qty = o.sell ? Math.min(o.qty, h.q) : o.qty;
            if (qty === 0) return;
            const notional = m(qty).times(o.price);
            const fee = notional.times('0.001');
            let pnl = m(0);
            if (o.sell) {
              const share = h.cost.times(qty).div(h.q);
              pnl = notional.minus(share);
              held.set(o.symbol, { q: h.q - qty, cost: h.cost.minus(share) });
              cash = cash.plus(notional).minus(fee);
            } else {
              held.set(o.symbol, { q: h.q + qty, cost: h.cost.plus(notional) });
              cash = cash.minus(notional).minus(fee);
            }
            fills.push({
              symbol: o.symbol,
              side: o.sell ? 'sell' : 'buy',
              quantity: String(qty),
              price: String(o.price),
              fee: fee.toFixed(),
              realizedPnl: pnl.toFixed(),
              time: T0 + i * H,
            });
          });
          let equity = cash;
          for (const h of held.values()) equity = equity.plus(m(h.q).times(markPrice));
          const result = computePerformance({
            startingBalance: '100000',
            intervalMs: H,
            equity: [
              { time: T0, equity: '100000' },
              { time: T0 + H, equity: equity.toFixed(8) },
            ],
            fills,
            marks: { BTCUSDT: String(markPrice), ETHUSDT: String(markPrice) },
          });
          const net = result.by_pair.reduce((s, p) => s.plus(p.net_pnl), m(0));
          expect(net.minus(result.summary.total_pnl).abs().lte('0.00000002')).toBe(true);
          for (const p of result.by_pair)
            if (p.win_rate !== null) expect(Number(p.win_rate)).toBeLessThanOrEqual(100);
          if (result.metrics.avg_loss !== null) expect(Number(result.metrics.avg_loss)).toBeLessThan(0);
        },
      ),
    );
  });
});
