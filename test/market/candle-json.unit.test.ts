import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/market/candle';
import { candleOut } from '../../src/market/present';
import { candlesJson } from '../../src/market/store/candle-json';
import { candleAt, columnsFromCandles } from '../../src/market/store/convert';

/** A decimal of at most 8 places as the venue writes it. */
const decimal = (max: bigint) =>
  fc.bigInt({ min: 1n, max }).map((u) => {
    const s = u.toString().padStart(9, '0');
    return `${s.slice(0, -8)}.${s.slice(-8)}`;
  });

const candle = fc.record({
  // 1970 → 2200, any millisecond (store times are minute-aligned; the writer must not rely on it).
  openTime: fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) }),
  open: decimal(10n ** 14n),
  high: decimal(10n ** 14n),
  low: decimal(10n ** 14n),
  close: decimal(10n ** 14n),
  // Volumes beyond 2^53 units: the store keeps those columns as bigints.
  volume: fc.oneof(decimal(10n ** 10n), decimal(10n ** 24n)),
  quoteVolume: fc.option(decimal(10n ** 24n), { nil: null }),
  tradeCount: fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: null }),
}) satisfies fc.Arbitrary<Candle>;

describe('candles written as JSON from columns', () => {
  it('are byte for byte JSON.stringify(candleOut(candle)) of each candle', () => {
    fc.assert(
      fc.property(fc.array(candle, { maxLength: 40 }), (candles) => {
        candles.sort((a, b) => a.openTime - b.openTime);
        const columns = columnsFromCandles(candles, 60_000);
        const expected = candles.map((_, i) => JSON.stringify(candleOut(candleAt(columns, i))));
        expect(candlesJson(columns)).toBe(expected.join(','));
        // A window of them.
        const from = Math.floor(candles.length / 3);
        const to = Math.ceil((2 * candles.length) / 3);
        expect(candlesJson(columns, from, to)).toBe(expected.slice(from, to).join(','));
      }),
      { numRuns: 300 },
    );
  });

  it('write the times of consecutive minutes across days and years, and a candle without a trade count as 0', () => {
    const start = Date.UTC(2022, 11, 31, 23, 58);
    const candles: Candle[] = Array.from({ length: 4 }, (_, i) => ({
      openTime: start + i * 60_000,
      open: '1.50000000',
      high: '2.00000000',
      low: '1.00000000',
      close: '1.75000000',
      volume: '10.00000000',
      quoteVolume: null,
      tradeCount: i === 0 ? null : i,
    }));
    const json = JSON.parse(`[${candlesJson(columnsFromCandles(candles, 60_000))}]`);
    expect(json.map((c: { time: string }) => c.time)).toEqual([
      '2022-12-31T23:58:00.000Z',
      '2022-12-31T23:59:00.000Z',
      '2023-01-01T00:00:00.000Z',
      '2023-01-01T00:01:00.000Z',
    ]);
    expect(json[0]).toEqual({
      time: '2022-12-31T23:58:00.000Z',
      open: '1.50000000',
      high: '2.00000000',
      low: '1.00000000',
      close: '1.75000000',
      volume: '10.00000000',
      trade_count: 0,
    });
    expect(json.map((c: { trade_count: number }) => c.trade_count)).toEqual([0, 1, 2, 3]);
  });
});
