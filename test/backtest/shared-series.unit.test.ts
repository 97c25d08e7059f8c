import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { seriesOfCandles } from '../../domain/backtest/market';
import { parseKlineCsv } from '../../domain/market/klines';
import { seriesOfShared, shareColumns } from '../../src/backtest/shared-series';
import { candleAt, columnsFromCandles } from '../../src/market/store/convert';
import { concatColumns, sliceColumn } from '../../src/market/store/decimal-column';
import { readData } from '../market/support';

/**
 * Issue 24 item 3: a backtest holds its candles as shared columns and makes candle objects on demand; those objects
 * must be the store's own, byte for byte (the step responses and the decisions' volumes are made from them), and
 * the memory must cross to a worker thread without a copy.
 */

const H = 3_600_000;
// The widest and the smallest prices of the data set (4–5 significant decimals vs 2).
const hourly = ['BTCUSDT-1h.csv', 'DOGEUSDT-1h.csv', 'TRXUSDT-1h.csv', 'MATICUSDT-1h.csv'];

describe('backtest series over shared columns', () => {
  it('makes the same candles as the store, for every candle of four hourly pairs and the 1m files', () => {
    const files = [
      ...hourly.map((f) => ({ file: `klines/1h/${f}`, interval: '1h' as const, ms: H })),
      ...['01', '02', '03'].map((d) => ({
        file: `klines/1m/BTCUSDT-1m-2020-01-${d}.csv`,
        interval: '1m' as const,
        ms: 60_000,
      })),
    ];
    let compared = 0;
    for (const { file, interval, ms } of files) {
      const candles = parseKlineCsv(readData(file), interval).candles;
      const columns = columnsFromCandles(candles, ms);
      const shared = shareColumns(columns)!;
      const series = seriesOfShared(shared);
      const reference = seriesOfCandles(candles);
      expect(series.openTime.length).toBe(candles.length);
      // The store's own conversion agrees (spot checks: the loop below compares with the source's candles).
      for (let i = 0; i < candles.length; i += 1009) expect(series.candleAt(i)).toEqual(candleAt(columns, i));
      for (let i = 0; i < candles.length; i++) {
        const c = series.candleAt(i);
        const want = candles[i]!;
        if (
          c.openTime !== want.openTime ||
          c.open !== want.open ||
          c.high !== want.high ||
          c.low !== want.low ||
          c.close !== want.close ||
          c.volume !== want.volume ||
          c.quoteVolume !== want.quoteVolume ||
          c.tradeCount !== want.tradeCount ||
          series.volumeAt(i) !== want.volume ||
          series.quoteUnitsAt(i) !== reference.quoteUnitsAt(i) ||
          series.close[i] !== reference.close[i]
        ) {
          expect({ file, i, got: c, quote: series.quoteUnitsAt(i) }).toEqual({
            file,
            i,
            got: candles[i],
            quote: reference.quoteUnitsAt(i),
          });
        }
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(95_000);
  });

  it('reads columns of any scale (the store joins month blocks of different scales)', () => {
    const candles = parseKlineCsv(readData('klines/1h/DOGEUSDT-1h.csv'), '1h').candles;
    const columns = columnsFromCandles(candles, H);
    // Re-joined from two halves: the common scale can be wider than either half's.
    const half = Math.floor(columns.length / 2);
    const joined = {
      ...columns,
      volume: concatColumns([
        sliceColumn(columns.volume, 0, half),
        sliceColumn(columns.volume, half, columns.length),
      ]),
      close: concatColumns([
        sliceColumn(columns.close, 0, half),
        sliceColumn(columns.close, half, columns.length),
      ]),
    };
    const series = seriesOfShared(shareColumns(joined)!);
    for (let i = 0; i < candles.length; i += 97) expect(series.candleAt(i)).toEqual(candles[i]);
  });

  it('shares its memory with a worker thread instead of copying it', async () => {
    const candles = parseKlineCsv(readData('klines/1h/BTCUSDT-1h.csv'), '1h').candles;
    const shared = shareColumns(columnsFromCandles(candles, H))!;
    for (const a of [
      shared.openTime,
      shared.open,
      shared.high,
      shared.low,
      shared.close,
      shared.volume.ints!,
    ]) {
      expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    }
    // The worker writes into the close column it was posted; the write shows here: one memory, not a copy.
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       parentPort.once('message', (s) => { s.close[0] = -42; parentPort.postMessage(s.close.length); });`,
      { eval: true },
    );
    try {
      const length = await new Promise<number>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage(shared);
      });
      expect(length).toBe(candles.length);
      expect(shared.close[0]).toBe(-42);
    } finally {
      await worker.terminate();
    }
  });
});
