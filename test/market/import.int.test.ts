import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKlineCsv } from '../../domain/market/klines';
import { generateMarketData } from '../../src/market/generator/generate';
import { importDirectory, problemLines } from '../../src/market/importer';
import { MarketData } from '../../src/market/market-data';
import { loadLatestPairs, loadReferenceTickers } from '../../src/market/repository';
import { ColumnStore } from '../../src/market/store/column-store';
import { candlesFromColumns } from '../../src/market/store/convert';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { BINANCE, linkedDataDir, MARKET_DATA, readData, tempDir, writeFile } from './support';

/**
 * `import-market-data` into the candle store (issue 24 item 1) on the real files (linked, not copied), on malformed
 * copies and on generated Binance zips: idempotent re-import, whole-file rejection with file and line, checksums,
 * resuming after an interrupted run, gaps reported exactly; the store reopens to the same candles.
 */
const REAL = [
  'exchangeInfo.json',
  'ticker_24hr.json',
  'klines/1m/BTCUSDT-1m-2020-01-01.csv',
  'klines/1m/BTCUSDT-1m-2020-01-02.csv',
];

let database: TestDatabase;
const cleanups: (() => void)[] = [];
const storeDir = tempDir('ptv-store-');
cleanups.push(storeDir.remove);
const store = new ColumnStore(storeDir.dir);

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
  for (const c of cleanups) c();
});

/** A fresh store in its own temporary directory. */
const freshStore = () => {
  const t = tempDir('ptv-store-');
  cleanups.push(t.remove);
  return new ColumnStore(t.dir);
};

/** Every month file of a store with its SHA-256, by path: equal maps mean byte-identical candle data. */
const storeFiles = (s: ColumnStore): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const symbol of fs.readdirSync(s.root).sort()) {
    const dir = path.join(s.root, symbol);
    if (!fs.statSync(dir).isDirectory()) continue;
    for (const f of fs.readdirSync(dir).sort()) {
      out[`${symbol}/${f}`] = createHash('sha256')
        .update(fs.readFileSync(path.join(dir, f)))
        .digest('hex');
    }
  }
  return out;
};

describe('import-market-data', () => {
  it('imports the real files into the candle store, and a second run changes nothing', async () => {
    const { dir, remove } = linkedDataDir(REAL);
    cleanups.push(remove);
    const data = new MarketData(store);
    const first = await importDirectory(dir, { db: database.all, data });
    expect(first.rejected).toBe(0);
    expect(first.files.map((f) => [f.file, f.status])).toEqual([
      ['exchangeInfo.json', 'imported'],
      ['ticker_24hr.json', 'imported'],
      [path.join('klines', '1m', 'BTCUSDT-1m-2020-01-01.csv'), 'imported'],
      [path.join('klines', '1m', 'BTCUSDT-1m-2020-01-02.csv'), 'imported'],
    ]);
    expect(store.size()).toBe(2 * 1440);
    expect(first.pairs).toEqual([
      { symbol: 'BTCUSDT', interval: '1m', files: 2, added: 2880, overlapping: 0, gaps: [] },
    ]);
    const bytes = storeFiles(store);

    const again = await importDirectory(dir, { db: database.all, data: new MarketData(store) });
    expect(again.files.map((f) => f.status)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged']);
    expect(store.size()).toBe(2 * 1440);
    expect(storeFiles(store)).toEqual(bytes);

    // A store opened afresh reads the same candles, exact strings, every column the file has.
    const reopened = new ColumnStore(storeDir.dir);
    const day = Date.UTC(2020, 0, 1);
    const candles = candlesFromColumns(reopened.read('BTCUSDT', '1m', day, day + 2 * 86_400_000));
    expect(candles).toEqual([
      ...parseKlineCsv(readData('klines/1m/BTCUSDT-1m-2020-01-01.csv'), '1m').candles,
      ...parseKlineCsv(readData('klines/1m/BTCUSDT-1m-2020-01-02.csv'), '1m').candles,
    ]);
    const row = readData('klines/1m/BTCUSDT-1m-2020-01-01.csv').split('\n')[0]!.split(',');
    expect(candles[0]).toEqual({
      openTime: Number(row[0]),
      open: row[1],
      high: row[2],
      low: row[3],
      close: row[4],
      volume: row[5],
      quoteVolume: row[7],
      tradeCount: Number(row[8]),
    });
    // Coarser intervals are served from the minutes, aggregated when written.
    expect(reopened.servedIntervals('BTCUSDT')).toEqual(['1m', '5m', '15m', '1h', '4h', '1d']);
    const daily = candlesFromColumns(reopened.read('BTCUSDT', '1d', day, day + 2 * 86_400_000));
    expect(daily.map((c) => [c.open, c.close])).toEqual([
      [candles[0]!.open, candles[1439]!.close],
      [candles[1440]!.open, candles[2879]!.close],
    ]);
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
    const before = store.size();
    const result = await importDirectory(dir, { db: database.all, data: new MarketData(store) });
    const byFile = Object.fromEntries(result.files.map((f) => [f.file, f]));
    expect(result.rejected).toBe(4);
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
    expect(byFile[path.join('klines', '1h', 'ADAUSDT-1h.zip')]!.problems[0]!.message).toMatch(
      /not a readable zip archive/,
    );
    expect(byFile[path.join('klines', '2h', 'ADAUSDT-2h.csv')]).toMatchObject({ status: 'skipped' });
    expect(problemLines(result)).toContain(
      `${path.join('klines', '1m', 'BTCUSDT-1m-2020-01-03.csv')}:21: expected 6 to 12 columns, got 2`,
    );
    expect(store.size()).toBe(before);
    expect(store.nativeIntervals('ETHUSDT')).toEqual([]);
  });

  it('rejects a file that disagrees with stored candles, and accepts a harmless overlap', async () => {
    const { dir, remove } = linkedDataDir([]);
    cleanups.push(remove);
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
    const before = storeFiles(store);
    const result = await importDirectory(dir, { db: database.all, data: new MarketData(store) });
    const [copy, edited] = [...result.files].sort((a, b) => (a.file < b.file ? -1 : 1));
    expect(copy).toMatchObject({ status: 'imported', rows: 1440, added: 0, overlapping: 1440 });
    expect(edited).toMatchObject({ status: 'rejected' });
    expect(edited!.problems).toEqual([
      { line: 100, message: expect.stringMatching(/conflicts with the stored one/) },
    ]);
    expect(storeFiles(store)).toEqual(before);
  });

  describe('Binance zips at scale (generated)', () => {
    const generated = tempDir('ptv-generated-');
    cleanups.push(generated.remove);
    // Three pairs over 2023-03-22 → 2023-03-26 in daily zips: the real outage of 2023-03-24 13:00 UTC is in it.
    const FROM = Date.UTC(2023, 2, 22);
    const TO = Date.UTC(2023, 2, 26);
    beforeAll(async () => {
      await generateMarketData({
        pairs: 3,
        from: FROM,
        to: TO,
        interval: '1m',
        out: generated.dir,
        seed: 7,
        anchorDir: MARKET_DATA,
        period: 'daily',
        timeUnit: 'us',
        header: true,
        threads: 1,
      });
    }, 120_000);

    it('verifies checksums, and importing twice gives identical data', async () => {
      const a = freshStore();
      const first = await importDirectory(generated.dir, { db: database.all, data: new MarketData(a) });
      expect(first.rejected).toBe(0);
      const klines = first.files.filter((f) => f.kind === 'klines');
      expect(klines).toHaveLength(12);
      expect(klines.every((f) => f.status === 'imported' && f.checksum === 'verified')).toBe(true);
      const once = storeFiles(a);
      const twice = await importDirectory(generated.dir, { db: database.all, data: new MarketData(a) });
      expect(twice.files.filter((f) => f.kind === 'klines').every((f) => f.status === 'unchanged')).toBe(
        true,
      );
      expect(storeFiles(a)).toEqual(once);
      // Another store importing the same files holds the same bytes.
      const b = freshStore();
      await importDirectory(generated.dir, { db: database.all, data: new MarketData(b) });
      expect(storeFiles(b)).toEqual(once);
      // A zip whose .CHECKSUM does not match is rejected, nothing of it used.
      const { dir, remove } = linkedDataDir([]);
      cleanups.push(remove);
      const zip = path.join(generated.dir, 'klines', 'BTCUSDT', '1m', 'BTCUSDT-1m-2023-03-22.zip');
      fs.mkdirSync(path.join(dir, 'klines'), { recursive: true });
      fs.copyFileSync(zip, path.join(dir, 'klines', 'BTCUSDT-1m-2023-03-22.zip'));
      fs.writeFileSync(
        path.join(dir, 'klines', 'BTCUSDT-1m-2023-03-22.zip.CHECKSUM'),
        `${'0'.repeat(64)}  x.zip\n`,
      );
      const c = freshStore();
      const bad = await importDirectory(dir, { db: database.all, data: new MarketData(c) });
      expect(bad.files[0]).toMatchObject({
        status: 'rejected',
        problems: [{ message: expect.stringMatching(/checksum mismatch/) }],
      });
      expect(c.size()).toBe(0);
      // The same zip beside the same wrong .CHECKSUM, into a store that holds its bytes already (imported above
      // from the generated directory): still rejected, not `unchanged` (found by helper sweepd).
      const again = await importDirectory(dir, { db: database.all, data: new MarketData(a) });
      expect(again.files[0]).toMatchObject({
        status: 'rejected',
        problems: [{ message: expect.stringMatching(/checksum mismatch/) }],
      });
      expect(storeFiles(a)).toEqual(once);
    });

    it('resumes an interrupted import: the result is the same as an uninterrupted one', async () => {
      const clean = freshStore();
      await importDirectory(generated.dir, { db: database.all, data: new MarketData(clean) });

      // Interrupted the hard way: month files written, then the process dies before the manifest is written.
      const crashed = freshStore();
      await expect(
        importDirectory(generated.dir, {
          db: database.all,
          data: new MarketData(crashed),
          flushMs: Number.POSITIVE_INFINITY,
          onProgress: (p) => {
            if (p.files === 5) throw new Error('killed');
          },
        }),
      ).rejects.toThrow('killed');
      const reopened = new ColumnStore(crashed.root);
      expect(reopened.size()).toBe(0); // the manifest was never written
      const resumed = await importDirectory(generated.dir, {
        db: database.all,
        data: new MarketData(reopened),
      });
      expect(resumed.rejected).toBe(0);
      const files = resumed.files.filter((f) => f.kind === 'klines');
      expect(files.filter((f) => f.status === 'imported')).toHaveLength(12);
      // What the first run wrote is found again (overlaps), nothing is added twice.
      expect(files.reduce((n, f) => n + (f.overlapping ?? 0), 0)).toBeGreaterThan(0);
      expect(reopened.size()).toBe(clean.size());
      expect(storeFiles(reopened)).toEqual(storeFiles(clean));

      // Interrupted politely (shutdown between files): the next run imports only the rest.
      const stopped = freshStore();
      const abort = new AbortController();
      const part = await importDirectory(generated.dir, {
        db: database.all,
        data: new MarketData(stopped),
        signal: abort.signal,
        onProgress: (p) => {
          if (p.files === 4) abort.abort();
        },
      });
      expect(part.files.filter((f) => f.kind === 'klines')).toHaveLength(4);
      const rest = await importDirectory(generated.dir, { db: database.all, data: new MarketData(stopped) });
      const statuses = rest.files.filter((f) => f.kind === 'klines').map((f) => f.status);
      expect(statuses.filter((s) => s === 'unchanged')).toHaveLength(4);
      expect(statuses.filter((s) => s === 'imported')).toHaveLength(8);
      expect(storeFiles(stopped)).toEqual(storeFiles(clean));
    });

    it('reports gaps exactly: the real outage in every pair, and minutes removed from one', async () => {
      const { dir, remove } = tempDir('ptv-gaps-');
      cleanups.push(remove);
      // The generated ETHUSDT day of 2023-03-23 as CSV, with 5 minutes and then 1 minute removed.
      const eth = path.join(generated.dir, 'klines', 'ETHUSDT', '1m', 'ETHUSDT-1m-2023-03-23.zip');
      const text = await unzipText(eth);
      const lines = text.trim().split('\n');
      const minute = (h: number, m: number) => String(Date.UTC(2023, 2, 23, h, m) * 1000);
      const removed = new Set([
        ...[0, 1, 2, 3, 4].map((m) => minute(10, m)), // 10:00–10:04
        minute(22, 30),
      ]);
      const kept = lines.filter((l) => !removed.has(l.split(',')[0]!));
      expect(kept).toHaveLength(lines.length - 6);
      for (const f of fs.readdirSync(generated.dir)) {
        if (f.endsWith('.json')) fs.copyFileSync(path.join(generated.dir, f), path.join(dir, f));
      }
      fs.cpSync(path.join(generated.dir, 'klines'), path.join(dir, 'klines'), { recursive: true });
      writeFile(dir, 'klines/ETHUSDT/1m/ETHUSDT-1m-2023-03-23.csv', `${kept.join('\n')}\n`);
      fs.rmSync(path.join(dir, 'klines/ETHUSDT/1m/ETHUSDT-1m-2023-03-23.zip'));
      fs.rmSync(path.join(dir, 'klines/ETHUSDT/1m/ETHUSDT-1m-2023-03-23.zip.CHECKSUM'));

      const s = freshStore();
      const result = await importDirectory(dir, { db: database.all, data: new MarketData(s) });
      expect(result.rejected).toBe(0);
      const outage = {
        interval: '1m',
        start: Date.UTC(2023, 2, 24, 13),
        end: Date.UTC(2023, 2, 24, 14),
        missingCandles: 60,
      };
      const byPair = Object.fromEntries(result.pairs.map((p) => [p.symbol, p.gaps]));
      expect(Object.keys(byPair)).toEqual(['BTCUSDT', 'ETHUSDT', 'SOLUSDT']);
      expect(byPair['BTCUSDT']).toEqual([outage]);
      expect(byPair['ETHUSDT']).toEqual([
        {
          interval: '1m',
          start: Date.UTC(2023, 2, 23, 10, 0),
          end: Date.UTC(2023, 2, 23, 10, 5),
          missingCandles: 5,
        },
        {
          interval: '1m',
          start: Date.UTC(2023, 2, 23, 22, 30),
          end: Date.UTC(2023, 2, 23, 22, 31),
          missingCandles: 1,
        },
        outage,
      ]);
      // As /market/data-range lists them: one entry per distinct hole, with every pair that has it.
      expect(s.gaps()).toEqual([
        { ...byPair['ETHUSDT']![0]!, symbols: ['ETHUSDT'] },
        { ...byPair['ETHUSDT']![1]!, symbols: ['ETHUSDT'] },
        { ...outage, symbols: ['BTCUSDT', 'ETHUSDT', 'SOLUSDT'] },
      ]);
      // Served intervals cover the holes without inventing candles: the outage hour is missing at 1h too.
      const hours = candlesFromColumns(s.read('BTCUSDT', '1h', FROM, TO)).map((c) => c.openTime);
      expect(hours).toHaveLength(4 * 24 - 1);
      expect(hours).not.toContain(Date.UTC(2023, 2, 24, 13));
    });
  });
});

const unzipText = async (zip: string): Promise<string> => {
  const yauzl = (await import('yauzl')).default;
  const archive = await yauzl.openPromise(zip);
  try {
    const entry = await new Promise<import('yauzl').Entry>((resolve, reject) => {
      archive.once('entry', resolve);
      archive.once('error', reject);
      archive.readEntry();
    });
    const chunks: Buffer[] = [];
    for await (const chunk of await archive.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString();
  } finally {
    archive.close();
  }
};
