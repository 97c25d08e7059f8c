import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDirectory, problemLines } from '../../src/market/importer';
import { MarketData } from '../../src/market/market-data';
import { loadCandleSeries, loadLatestPairs, loadReferenceTickers } from '../../src/market/repository';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { BINANCE, linkedDataDir, readData, writeFile } from './support';

/**
 * `import-market-data` on the real files (linked, not copied) and on malformed copies: idempotent re-import,
 * whole-file rejection with file and line, nothing half-imported; the store reloads identically.
 */
const REAL = [
  'exchangeInfo.json',
  'ticker_24hr.json',
  'klines/1m/BTCUSDT-1m-2020-01-01.csv',
  'klines/1m/BTCUSDT-1m-2020-01-02.csv',
];

let database: TestDatabase;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
  for (const c of cleanups) c();
});

const countCandles = async () =>
  Number(
    (await sql<{ n: string }>`select count(*)::text as n from market_candles`.execute(database.all)).rows[0]!
      .n,
  );

describe('import-market-data', () => {
  it('imports the real files into the append-only store, and a second run changes nothing', async () => {
    const { dir, remove } = linkedDataDir(REAL);
    cleanups.push(remove);
    const data = new MarketData();
    const first = await importDirectory(dir, { db: database.all, data });
    await first.persisted;
    expect(first.rejected).toBe(0);
    expect(first.files.map((f) => [f.file, f.status])).toEqual([
      ['exchangeInfo.json', 'imported'],
      ['ticker_24hr.json', 'imported'],
      [path.join('klines', '1m', 'BTCUSDT-1m-2020-01-01.csv'), 'imported'],
      [path.join('klines', '1m', 'BTCUSDT-1m-2020-01-02.csv'), 'imported'],
    ]);
    expect(await countCandles()).toBe(2 * 1440);

    const again = await importDirectory(dir, { db: database.all, data: new MarketData() });
    await again.persisted;
    expect(again.files.every((f) => f.status === 'unchanged')).toBe(true);
    expect(await countCandles()).toBe(2 * 1440);

    // The store reloads to the same candles, exact strings (numeric(38,8) read back as text), all 12 columns
    // kept where the file has them.
    const series = await loadCandleSeries(database.all);
    const btc1m = series.find((s) => s.symbol === 'BTCUSDT' && s.interval === '1m')!;
    expect(btc1m.candles).toEqual(data.candles.nativeSeries('BTCUSDT', '1m'));
    const row = readData('klines/1m/BTCUSDT-1m-2020-01-01.csv').split('\n')[0]!.split(',');
    expect(btc1m.candles[0]).toEqual({
      openTime: Number(row[0]),
      open: row[1],
      high: row[2],
      low: row[3],
      close: row[4],
      volume: row[5],
      quoteVolume: row[7],
      tradeCount: Number(row[8]),
    });
    const pairs = await loadLatestPairs(database.all, 'files');
    expect(pairs?.pairs).toHaveLength(456);
    expect(pairs?.pairs.find((p) => p.symbol === 'ETHUSDT')).toEqual(data.pair('ETHUSDT'));
    expect((await loadReferenceTickers(database.all)).find((t) => t.symbol === 'BTCUSDT')?.quoteVolume).toBe(
      '2167538240.48367050',
    );
  });

  it('rejects malformed copies as a whole, naming file and line, and stores none of their rows', async () => {
    const { dir, remove } = linkedDataDir(['exchangeInfo.json']);
    cleanups.push(remove);
    const good = fs
      .readFileSync(path.join(BINANCE, 'klines/1m/BTCUSDT-1m-2020-01-03.csv'), 'utf8')
      .split('\n');
    const bad = [...good];
    bad[9] = bad[9]!.replace(/^(\d+),([\d.]+),([\d.]+),([\d.]+)/, '$1,$2,1.00000000,9999999.00000000'); // high < low
    bad[20] = 'garbage,row';
    bad[30] = bad[29]!; // duplicate
    writeFile(dir, 'klines/1m/BTCUSDT-1m-2020-01-03.csv', bad.join('\n'));
    writeFile(
      dir,
      'klines/1h/ETHUSDT-1h.csv',
      readData('klines/1h/ETHUSDT-1h.csv').replace(/\n(\d+),2/, '\n$1,x'),
    );
    writeFile(dir, 'klines/1h/SOLUSDT-1h.json', '[[1, 2,');
    writeFile(dir, 'klines/1h/ADAUSDT-1h.zip', 'PK');
    writeFile(dir, 'klines/2h/ADAUSDT-2h.csv', good[0]!);
    const before = await countCandles();
    const result = await importDirectory(dir, { db: database.all, data: new MarketData() });
    await result.persisted;
    const byFile = Object.fromEntries(result.files.map((f) => [f.file, f]));
    expect(result.rejected).toBe(3);
    expect(byFile[path.join('klines', '1m', 'BTCUSDT-1m-2020-01-03.csv')]).toMatchObject({
      status: 'rejected',
      rows: 1440,
      problems: [
        { line: 10, message: expect.stringMatching(/high 1\.00000000 < low 9999999\.00000000/) },
        { line: 21, message: expect.stringMatching(/expected 6 to 12 columns/) },
        { line: 31, message: expect.stringMatching(/duplicate 1m candle .*first at 30/) },
      ],
    });
    expect(byFile[path.join('klines', '1h', 'ETHUSDT-1h.csv')]!.problems[0]).toMatchObject({
      line: 2,
      message: expect.stringMatching(/open is not a decimal/),
    });
    expect(byFile[path.join('klines', '1h', 'SOLUSDT-1h.json')]!.problems[0]!.message).toMatch(/not JSON/);
    expect(byFile[path.join('klines', '1h', 'ADAUSDT-1h.zip')]).toMatchObject({ status: 'skipped' });
    expect(byFile[path.join('klines', '2h', 'ADAUSDT-2h.csv')]).toMatchObject({ status: 'skipped' });
    expect(problemLines(result)).toContain(
      `${path.join('klines', '1m', 'BTCUSDT-1m-2020-01-03.csv')}:21: expected 6 to 12 columns, got 2`,
    );
    expect(await countCandles()).toBe(before);
    const imports = await sql<{
      n: string;
    }>`select count(*)::text as n from market_imports where path like '%2020-01-03%' or path like '%ETHUSDT%'`.execute(
      database.all,
    );
    expect(imports.rows[0]!.n).toBe('0');
  });

  it('rejects a file that disagrees with stored candles, and accepts a harmless overlap', async () => {
    const { dir, remove } = linkedDataDir([]);
    cleanups.push(remove);
    const data = new MarketData();
    for (const s of await loadCandleSeries(database.all)) data.candles.merge(s.symbol, s.interval, s.candles);
    const day = readData('klines/1m/BTCUSDT-1m-2020-01-02.csv').trim().split('\n');
    // Same rows with a header and CRLF line ends: a different file, the same candles.
    writeFile(
      dir,
      'klines/1m/BTCUSDT-1m-2020-01-02-copy.csv',
      `open_time,open,high,low,close,volume,close_time\r\n${day.map((l) => l.split(',').slice(0, 7).join(',')).join('\r\n')}\r\n`,
    );
    const changed = [...day];
    changed[99] = changed[99]!.replace(/^(\d+,[\d.]+,[\d.]+,[\d.]+,[\d.]+),([\d.]+)/, '$1,123.00000000');
    writeFile(dir, 'klines/1m/BTCUSDT-1m-2020-01-02-edited.csv', changed.join('\n'));
    const before = await countCandles();
    const result = await importDirectory(dir, { db: database.all, data });
    await result.persisted;
    const [copy, edited] = [...result.files].sort((a, b) => (a.file < b.file ? -1 : 1));
    expect(copy).toMatchObject({ status: 'imported', rows: 1440, added: 0 });
    expect(edited).toMatchObject({ status: 'rejected' });
    expect(edited!.problems).toEqual([
      { line: 100, message: expect.stringMatching(/conflicts with the stored one/) },
    ]);
    expect(await countCandles()).toBe(before);
  });
});
