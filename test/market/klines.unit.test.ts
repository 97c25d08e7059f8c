import { describe, expect, it } from 'vitest';
import { INTERVAL_MS } from '../../domain/market/intervals';
import { parseKlineCsv, parseKlineJson } from '../../domain/market/klines';
import { csvRows, readData } from './support';

describe('kline loaders on the real Binance files', () => {
  it('reads the hourly CSV (7 columns, header) exactly as Binance returned it', () => {
    const parsed = parseKlineCsv(readData('klines/1h/BTCUSDT-1h.csv'), '1h');
    const rows = csvRows('klines/1h/BTCUSDT-1h.csv');
    expect(parsed.problems).toEqual([]);
    expect(parsed.headerLine).toBe(true);
    expect(parsed.candles).toHaveLength(rows.length);
    expect(parsed.candles[0]).toEqual({
      openTime: 1617566400000,
      open: '57953.86000000',
      high: '58051.25000000',
      low: '57826.16000000',
      close: '58025.11000000',
      volume: '1240.20901600',
      quoteVolume: null,
      tradeCount: null,
    });
    const last = rows[rows.length - 1]!;
    expect(parsed.candles.at(-1)).toMatchObject({ openTime: Number(last[0]), close: last[4] });
  });

  it('reads a daily file of data.binance.vision (12 columns, no header)', () => {
    const parsed = parseKlineCsv(readData('klines/1m/BTCUSDT-1m-2020-01-01.csv'), '1m');
    expect(parsed.problems).toEqual([]);
    expect(parsed.headerLine).toBe(false);
    expect(parsed.candles).toHaveLength(1440);
    expect(parsed.candles[0]).toEqual({
      openTime: 1577836800000,
      open: '7195.24000000',
      high: '7196.25000000',
      low: '7183.14000000',
      close: '7186.68000000',
      volume: '51.64281200',
      quoteVolume: '371233.51835535',
      tradeCount: 493,
    });
    for (let i = 1; i < parsed.candles.length; i++) {
      expect(parsed.candles[i]!.openTime - parsed.candles[i - 1]!.openTime).toBe(INTERVAL_MS['1m']);
    }
  });

  it('reads a raw GET /api/v3/klines response', () => {
    const parsed = parseKlineJson(JSON.parse(readData('rest-klines-btcusdt-1m.json')), '1m');
    expect(parsed.problems).toEqual([]);
    expect(parsed.candles).toHaveLength(10);
    expect(parsed.candles[0]).toMatchObject({
      openTime: 1634943780000,
      open: '60685.22000000',
      tradeCount: 617,
    });
  });

  it('accepts 6 columns and microsecond timestamps (Binance spot files from 2025)', () => {
    const text = '1735689600000000,1,2,0.5,1.5,10\n1735689660000000,1.5,1.6,1.4,1.45,3\n';
    const parsed = parseKlineCsv(text, '1m');
    expect(parsed.problems).toEqual([]);
    expect(parsed.candles.map((c) => c.openTime)).toEqual([1735689600000, 1735689660000]);
  });
});

describe('kline loaders on malformed copies: every problem reported with its line', () => {
  const good = readData('klines/1m/BTCUSDT-1m-2020-01-01.csv').trim().split('\n');

  const corrupt = (edits: Record<number, (cols: string[]) => string[] | string>): string =>
    good
      .map((line, i) => {
        const edit = edits[i + 1];
        if (!edit) return line;
        const out = edit(line.split(','));
        return typeof out === 'string' ? out : out.join(',');
      })
      .join('\n');

  it('flags unparseable values, high < low, open outside the range, duplicates, bad columns', () => {
    const text = corrupt({
      3: (c) => [c[0]!, 'abc', ...c.slice(2)],
      5: (c) => [c[0]!, c[1]!, '1.00000000', '9000.00000000', ...c.slice(4)],
      7: (c) => [c[0]!, '9999.00000000', ...c.slice(2)],
      9: () => good[7]!, // line 9 repeats line 8
      11: (c) => c.slice(0, 4),
      13: (c) => [c[0]!, c[1]!, c[2]!, c[3]!, c[4]!, c[5]!, String(Number(c[6]) + 1), ...c.slice(7)],
      15: (c) => [String(Number(c[0]) + 1), ...c.slice(1, 6), String(Number(c[6]) + 1), ...c.slice(7)],
      17: (c) => [c[0]!, c[1]!, c[2]!, c[3]!, c[4]!, '-1', ...c.slice(6)],
      19: (c) => [...c.slice(0, 8), '12.5', ...c.slice(9)],
    });
    const parsed = parseKlineCsv(text, '1m');
    expect(parsed.problems.map((p) => p.line)).toEqual([3, 5, 7, 9, 11, 13, 15, 17, 19]);
    const byLine = Object.fromEntries(parsed.problems.map((p) => [p.line, p.message]));
    expect(byLine[3]).toMatch(/open is not a decimal/);
    expect(byLine[5]).toMatch(/high 1\.00000000 < low 9000\.00000000/);
    expect(byLine[7]).toMatch(/open 9999\.00000000 outside/);
    expect(byLine[9]).toMatch(/duplicate 1m candle .* \(first at 8\)/);
    expect(byLine[11]).toMatch(/expected 6 to 12 columns, got 4/);
    expect(byLine[13]).toMatch(/close_time .* does not match/);
    expect(byLine[15]).toMatch(/not aligned/);
    expect(byLine[17]).toMatch(/volume is not a decimal|volume must not be negative/);
    expect(byLine[19]).toMatch(/trade_count is not an integer/);
  });

  it('flags a stray text line after the first and bad JSON rows by row number', () => {
    const text = `${good.slice(0, 3).join('\n')}\nnot,a,kline,row,at,all\n${good.slice(3, 5).join('\n')}`;
    expect(parseKlineCsv(text, '1m').problems).toEqual([
      expect.objectContaining({ line: 4, message: expect.stringMatching(/open_time is not an integer/) }),
    ]);
    const rows = JSON.parse(readData('rest-klines-btcusdt-1m.json')) as unknown[][];
    rows[2] = [rows[2]![0], '1', '0.5', '2', '1', '1', rows[2]![6]];
    rows[4] = 'oops' as unknown as unknown[];
    const parsed = parseKlineJson(rows, '1m');
    expect(parsed.problems.map((p) => p.line)).toEqual([3, 5]);
    expect(parseKlineJson({ not: 'an array' }, '1m').problems).toHaveLength(1);
  });
});
