import { describe, expect, it } from 'vitest';
import { aggregateCandles, combineSources } from '../../domain/market/aggregate';
import type { Candle } from '../../domain/market/candle';
import { findGaps, groupGaps } from '../../domain/market/gaps';
import { parseKlineCsv } from '../../domain/market/klines';
import { readData } from './support';

const c = (
  openTime: number,
  o: string,
  h: string,
  l: string,
  cl: string,
  v: string,
  n: number | null = 1,
): Candle => ({
  openTime,
  open: o,
  high: h,
  low: l,
  close: cl,
  volume: v,
  quoteVolume: n === null ? null : v,
  tradeCount: n,
});
const H = 3_600_000;

describe('aggregation (ARCHITECTURE §7)', () => {
  it('takes first open, last close, max high, min low and exact sums', () => {
    const hours = [
      c(0, '10.00000000', '12.00000000', '9.00000000', '11.00000000', '0.10000000'),
      c(H, '11.00000000', '15.00000000', '10.00000000', '14.00000000', '0.20000000'),
      c(2 * H, '14.00000000', '14.50000000', '8.00000000', '9.50000000', '0.30000000'),
      c(4 * H, '9.50000000', '10.00000000', '9.00000000', '9.75000000', '1.00000000', null),
    ];
    expect(aggregateCandles(hours, '1h', '4h')).toEqual([
      {
        openTime: 0,
        open: '10.00000000',
        high: '15.00000000',
        low: '8.00000000',
        close: '9.50000000',
        volume: '0.60000000',
        quoteVolume: '0.60000000',
        tradeCount: 3,
        parts: 3,
      },
      {
        openTime: 4 * H,
        open: '9.50000000',
        high: '10.00000000',
        low: '9.00000000',
        close: '9.75000000',
        volume: '1.00000000',
        quoteVolume: null,
        tradeCount: null,
        parts: 1,
      },
    ]);
    expect(() => aggregateCandles(hours, '4h', '1h')).toThrow();
  });

  it('combines sources per bucket: best coverage wins, native on a tie, coarser sources ignored', () => {
    const minute = 60_000;
    const minutes = Array.from({ length: 60 }, (_, i) =>
      c(i * minute, '1.00000000', '2.00000000', '0.50000000', '1.00000000', '1.00000000'),
    );
    const nativeHour = [
      c(0, '1.00000000', '3.00000000', '0.50000000', '1.00000000', '99.00000000'),
      c(H, '1.00000000', '1.00000000', '1.00000000', '1.00000000', '5.00000000'),
    ];
    const hours = combineSources(
      [
        { interval: '1m', candles: minutes },
        { interval: '1h', candles: nativeHour },
      ],
      '1h',
    );
    expect(hours.map((x) => x.volume)).toEqual(['99.00000000', '5.00000000']); // full coverage tie: native
    const partial = combineSources(
      [
        { interval: '1m', candles: minutes.slice(0, 30) },
        { interval: '1h', candles: nativeHour },
      ],
      '1h',
    );
    expect(partial[0]!.volume).toBe('99.00000000');
    expect(combineSources([{ interval: '1h', candles: nativeHour }], '1m')).toEqual([]);
  });
});

describe('data gaps on the real hourly data', () => {
  it('finds the five real exchange outages of PROVENANCE.md, the same in every pair', () => {
    const btc = parseKlineCsv(readData('klines/1h/BTCUSDT-1h.csv'), '1h').candles;
    const eth = parseKlineCsv(readData('klines/1h/ETHUSDT-1h.csv'), '1h').candles;
    const gaps = findGaps(btc, '1h');
    expect(gaps.map((g) => [new Date(g.start).toISOString(), g.missingCandles])).toEqual([
      ['2021-04-20T02:00:00.000Z', 2],
      ['2021-04-25T05:00:00.000Z', 3],
      ['2021-08-13T02:00:00.000Z', 4],
      ['2021-09-29T07:00:00.000Z', 2],
      ['2023-03-24T13:00:00.000Z', 1],
    ]);
    expect(new Date(gaps[0]!.end).toISOString()).toBe('2021-04-20T04:00:00.000Z');
    const shared = groupGaps(
      new Map([
        ['ETHUSDT', findGaps(eth, '1h')],
        ['BTCUSDT', gaps],
      ]),
    );
    expect(shared).toHaveLength(5);
    expect(shared.every((g) => g.symbols.join() === 'BTCUSDT,ETHUSDT')).toBe(true);
  });
});
