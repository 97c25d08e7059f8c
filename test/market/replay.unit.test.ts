import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/market/candle';
import { fromUnits, toUnits, toUnitsNumber } from '../../domain/market/decimal';
import { parseKlineCsv } from '../../domain/market/klines';
import { replayShift, replayTime, replayWindow } from '../../domain/market/replay-clock';
import { RollingWindow, tickerValues } from '../../domain/market/rolling-window';
import { candlePath } from '../../domain/market/tick-path';
import { readData } from './support';

const HOUR = 3_600_000;
const DAY = 86_400_000;

describe('intra-candle tick path (ARCHITECTURE §7, §9)', () => {
  const candles = parseKlineCsv(readData('klines/1h/BTCUSDT-1h.csv'), '1h').candles;

  it('passes through open, low/high and close in the documented order, on the tick grid, inside the range', () => {
    for (const candle of candles.slice(1000, 1040)) {
      const path = candlePath(candle, { symbol: 'BTCUSDT', intervalMs: HOUR, tickUnits: 1_000_000 });
      const prices = [...path.prices];
      const [O, H, L, C] = [candle.open, candle.high, candle.low, candle.close].map(toUnitsNumber) as [
        number,
        number,
        number,
        number,
      ];
      expect(prices).toHaveLength(3600);
      expect(prices[0]).toBe(O);
      expect(prices[3599]).toBe(C);
      expect(Math.max(...prices)).toBe(H);
      expect(Math.min(...prices)).toBe(L);
      const first = C >= O ? prices.indexOf(L) : prices.indexOf(H);
      const second = C >= O ? prices.lastIndexOf(H) : prices.lastIndexOf(L);
      expect(first).toBeLessThan(second);
      expect(prices.every((p) => p % 1_000_000 === 0 || p === H || p === L)).toBe(true);
      expect(path.quantities.reduce((a, b) => a + b, 0n)).toBe(toUnits(candle.volume));
    }
  });

  it('is deterministic: the same candle gives the same path', () => {
    const candle = candles[5]!;
    const a = candlePath(candle, { symbol: 'BTCUSDT', intervalMs: HOUR, tickUnits: 1_000_000 });
    const b = candlePath(candle, { symbol: 'BTCUSDT', intervalMs: HOUR, tickUnits: 1_000_000 });
    expect(a).toEqual(b);
    const other = candlePath(candle, { symbol: 'ETHUSDT', intervalMs: HOUR, tickUnits: 1_000_000 });
    expect(other.prices).not.toEqual(a.prices);
  });

  it('holds for any consistent candle (property)', () => {
    const arb = fc
      .tuple(
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 0, max: 1e7 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.bigInt({ min: 0n, max: 10n ** 14n }),
      )
      .map(
        ([low, span, fo, fc_, vol]): Candle => ({
          openTime: 0,
          low: fromUnits(low),
          high: fromUnits(low + span),
          open: fromUnits(low + Math.round(span * fo)),
          close: fromUnits(low + Math.round(span * fc_)),
          volume: fromUnits(vol),
          quoteVolume: null,
          tradeCount: null,
        }),
      );
    fc.assert(
      fc.property(arb, fc.constantFrom(60_000, HOUR), (candle, intervalMs) => {
        const path = candlePath(candle, { symbol: 'X', intervalMs, tickUnits: 1 });
        const prices = [...path.prices];
        expect(prices[0]).toBe(toUnitsNumber(candle.open));
        expect(prices.at(-1)).toBe(toUnitsNumber(candle.close));
        expect(Math.max(...prices)).toBe(toUnitsNumber(candle.high));
        expect(Math.min(...prices)).toBe(toUnitsNumber(candle.low));
        expect(path.quantities.reduce((a, b) => a + b, 0n)).toBe(toUnits(candle.volume));
      }),
      { numRuns: 60 },
    );
  });
});

describe('replay clock', () => {
  const window = replayWindow(Date.UTC(2021, 3, 4, 20), Date.UTC(2023, 11, 30, 21));

  it('covers the data in whole days and shifts wall time by whole days', () => {
    expect(window.start).toBe(Date.UTC(2021, 3, 4));
    expect(window.length % DAY).toBe(0);
    for (const wall of [Date.UTC(2025, 10, 21, 12, 34, 56), Date.UTC(2030, 0, 1), Date.UTC(2021, 5, 1, 3)]) {
      const t = replayTime(window, wall);
      expect(t).toBeGreaterThanOrEqual(window.start);
      expect(t).toBeLessThan(window.start + window.length);
      expect(replayShift(window, wall) % DAY).toBe(0);
      expect(replayTime(window, wall + 1000) - t).toBe(1000); // real speed (away from the wrap)
    }
  });
});

describe('rolling 24h window (ARCHITECTURE §16: a real window that forgets)', () => {
  it('over the replayed ticks of 24 whole candles equals those candles exactly', () => {
    const candles = parseKlineCsv(readData('klines/1h/BTCUSDT-1h.csv'), '1h').candles.slice(200, 230);
    const w = new RollingWindow();
    for (const candle of candles) {
      const path = candlePath(candle, { symbol: 'BTCUSDT', intervalMs: HOUR, tickUnits: 1_000_000 });
      path.prices.forEach((p, k) => {
        w.add(candle.openTime + k * 1000, p, path.quantities[k]!);
      });
    }
    const lastDay = candles.slice(-24);
    const end = lastDay.at(-1)!.openTime + HOUR - 1;
    const t = tickerValues(w.stats(end)!);
    expect(t.open).toBe(lastDay[0]!.open);
    expect(t.close).toBe(lastDay.at(-1)!.close);
    expect(t.high).toBe(lastDay.map((c) => c.high).reduce((a, b) => (toUnits(a) > toUnits(b) ? a : b)));
    expect(t.low).toBe(lastDay.map((c) => c.low).reduce((a, b) => (toUnits(a) < toUnits(b) ? a : b)));
    expect(t.volume).toBe(fromUnits(lastDay.reduce((s, c) => s + toUnits(c.volume), 0n)));
    expect(t.tradeCount).toBe(24 * 3600);
    // 24 hours later, with no new ticks, everything has left the window.
    expect(w.stats(end + DAY)).toBeUndefined();
    // Half a day later half of it is left.
    expect(w.stats(end + DAY / 2)!.tradeCount).toBe(12 * 3600);
  });

  it('computes change and change_pct exactly', () => {
    const w = new RollingWindow();
    w.add(0, 200_000_000, 1n);
    w.add(1000, 100_000_000, 1n);
    expect(tickerValues(w.stats(1000)!)).toMatchObject({ change: '-1.00000000', changePct: '-50.00000000' });
    const up = new RollingWindow();
    up.add(0, 300_000_000, 1n);
    up.add(1000, 400_000_000, 1n);
    expect(tickerValues(up.stats(1000)!).changePct).toBe('33.33333333');
  });
});
