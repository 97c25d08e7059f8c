import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { aggregateCandles } from '../../domain/market/aggregate';
import { toUnits } from '../../domain/market/decimal';
import { parseKlineCsv } from '../../domain/market/klines';
import { generateMarketDataCli } from '../../src/cli/generate';
import { generatedFilePath, generateMarketData } from '../../src/market/generator/generate';
import {
  type GeneratorSource,
  type PairPlan,
  planFiles,
  planPairs,
  readGeneratorSource,
} from '../../src/market/generator/plan';
import { renderFile } from '../../src/market/generator/render';
import { MARKET_DATA, tempDir } from './support';

/**
 * `generate-market-data` (issue 24 item 5): minute paths bridged inside the real hours — valid Binance klines on
 * each pair's grid, aggregating back exactly to the real hourly candles of the anchor pairs, the same bytes for the
 * same seed, written as Binance's zips with a matching `.CHECKSUM`.
 */
let source: GeneratorSource;
let plans: PairPlan[];
const JAN = Date.UTC(2022, 0, 1);
const FEB = Date.UTC(2022, 1, 1);

beforeAll(() => {
  source = readGeneratorSource(MARKET_DATA);
  plans = planPairs(source, 20);
});

const render = (symbol: string, seed = 42, from = JAN, to = FEB) => {
  const plan = plans.find((p) => p.symbol === symbol)!;
  const [file] = planFiles([plan], '1m', from, to, 'monthly');
  return renderFile(plan, file!, { seed, timeUnit: 'ms', header: false });
};

/** The CLI's options for a day of one pair's hourly candles into `out`, anchored on `anchors`. */
const oneDayOfOnePair = (out: string, anchors: string) => ({
  pairs: '1',
  from: '2022-01-01',
  to: '2022-01-02',
  interval: '1h',
  out,
  seed: '42',
  anchors,
  timeUnit: 'ms',
});

describe('generate-market-data', () => {
  it('answers --anchors naming no data set with a usage error (exit code 2) and writes nothing', async () => {
    const out = tempDir();
    const missing = path.join(out.dir, 'no-such-data');
    const run = generateMarketDataCli(oneDayOfOnePair(path.join(out.dir, 'out'), missing));
    // Found by helper sweepd: it was `error: ENOENT: no such file or directory, open '…/exchangeInfo.json'`, exit 1.
    await expect(run).rejects.toMatchObject({
      exitCode: 2,
      message: `--anchors ${missing}: no Binance data set there (no exchangeInfo.json)`,
    });
    expect(fs.existsSync(path.join(out.dir, 'out'))).toBe(false);
    out.remove();
  });

  it('anchors on a data set in its own layout (../shared/market-data holds binance/exchangeInfo.json)', async () => {
    // The check above looked for exchangeInfo.json in the named directory itself, so the real data set's own layout
    // (and the default, the sibling ../shared/market-data) was refused as "no Binance data set there".
    const out = tempDir();
    const exit = await generateMarketDataCli(oneDayOfOnePair(path.join(out.dir, 'out'), MARKET_DATA));
    expect(exit).toBe(0);
    expect(fs.existsSync(path.join(out.dir, 'out', 'exchangeInfo.json'))).toBe(true);
    out.remove();
  });

  it('plans the real hourly pairs first (by volume), then other active, unpegged pairs', () => {
    expect(plans.slice(0, 2).map((p) => p.symbol)).toEqual(['BTCUSDT', 'ETHUSDT']);
    expect(plans.slice(0, 16).every((p) => p.own)).toBe(true);
    const rest = plans.slice(16);
    expect(rest.every((p) => !p.own && p.pair.status === 'active')).toBe(true);
    expect(rest.map((p) => p.symbol)).not.toContain('USDCUSDT');
  });

  it('bridges minutes that aggregate exactly to the real hours of an anchor pair', () => {
    const { csv, candles } = render('BTCUSDT');
    const parsed = parseKlineCsv(csv.toString(), '1m');
    expect(parsed.problems).toEqual([]);
    expect(candles).toBe(31 * 1440);
    const hours = aggregateCandles(parsed.candles, '1m', '1h');
    const real = plans[0]!.anchor.candles.filter((c) => c.openTime >= JAN && c.openTime < FEB);
    expect(hours.map(({ parts, quoteVolume, tradeCount, ...c }) => c)).toEqual(
      real.map(({ quoteVolume, tradeCount, ...c }) => c),
    );
    expect(hours.every((h) => h.parts === 60)).toBe(true);
  });

  it('keeps a scaled pair on its own tick size and lot step, with every column Binance has', () => {
    const plan = plans[16]!;
    const { csv } = render(plan.symbol);
    const parsed = parseKlineCsv(csv.toString(), '1m');
    expect(parsed.problems).toEqual([]);
    const tick = BigInt(plan.tickUnits);
    const step = BigInt(plan.stepUnits);
    for (const c of parsed.candles.slice(0, 2000)) {
      for (const p of [c.open, c.high, c.low, c.close]) expect(toUnits(p) % tick).toBe(0n);
      expect(toUnits(c.volume) % step).toBe(0n);
      expect(c.quoteVolume).not.toBeNull();
      expect(c.tradeCount).not.toBeNull();
    }
    const line = csv.toString().split('\n')[0]!.split(',');
    expect(line).toHaveLength(12);
  });

  it('gives the same bytes for the same seed and other paths for another seed', () => {
    const a = render('ETHUSDT', 7, JAN, JAN + 86_400_000);
    const b = render('ETHUSDT', 7, JAN, JAN + 86_400_000);
    const c = render('ETHUSDT', 8, JAN, JAN + 86_400_000);
    expect(a.csv.equals(b.csv)).toBe(true);
    expect(a.csv.equals(c.csv)).toBe(false);
  });

  it('leaves a real outage missing in the minutes too', () => {
    // 2023-03-24 13:00 UTC is missing from every real hourly series.
    const day = Date.UTC(2023, 2, 24);
    const { csv, candles } = render('BTCUSDT', 42, day, day + 86_400_000);
    expect(candles).toBe(23 * 60);
    const times = parseKlineCsv(csv.toString(), '1m').candles.map((c) => c.openTime);
    expect(times).not.toContain(Date.UTC(2023, 2, 24, 13, 30));
    expect(times).toContain(Date.UTC(2023, 2, 24, 14, 0));
  });

  describe('writes Binance zips', () => {
    const out = tempDir('ptv-generate-');
    afterAll(() => out.remove());

    it('with checksums, resumable, and refusing to mix other options into the directory', async () => {
      const options = {
        pairs: 2,
        from: Date.UTC(2022, 0, 31),
        to: Date.UTC(2022, 1, 2),
        interval: '1m' as const,
        out: out.dir,
        seed: 42,
        anchorDir: MARKET_DATA,
        period: 'monthly' as const,
        timeUnit: 'us' as const,
        header: true,
        threads: 1,
      };
      const first = await generateMarketData(options);
      expect(first).toMatchObject({ files: 4, totalFiles: 4, existing: 0, candles: 4 * 1440 });
      const [file] = planFiles(plans.slice(0, 1), '1m', options.from, options.to, 'monthly');
      const zip = generatedFilePath(out.dir, file!);
      expect(path.relative(out.dir, zip)).toBe(
        path.join('klines', 'BTCUSDT', '1m', 'BTCUSDT-1m-2022-01.zip'),
      );
      const bytes = fs.readFileSync(zip);
      expect(fs.readFileSync(`${zip}.CHECKSUM`, 'utf8')).toBe(
        `${createHash('sha256').update(bytes).digest('hex')}  BTCUSDT-1m-2022-01.zip\n`,
      );
      const text = await unzipOnly(zip);
      const lines = text.trim().split('\n');
      expect(lines[0]).toMatch(/^open_time,/);
      expect(lines[1]!.split(',')[0]).toBe(String(Date.UTC(2022, 0, 31) * 1000));
      expect(parseKlineCsv(text, '1m').problems).toEqual([]);
      const info = JSON.parse(fs.readFileSync(path.join(out.dir, 'exchangeInfo.json'), 'utf8'));
      expect(info.symbols.map((s: { symbol: string }) => s.symbol).sort()).toEqual(['BTCUSDT', 'ETHUSDT']);

      // A file lost (an interrupted run) is made again, the others are kept; the result is the same bytes.
      fs.rmSync(`${zip}.CHECKSUM`);
      const again = await generateMarketData(options);
      expect(again).toMatchObject({ files: 4, existing: 3 });
      expect(fs.readFileSync(zip).equals(bytes)).toBe(true);

      await expect(generateMarketData({ ...options, seed: 1 })).rejects.toThrow(/other options/);
    }, 180_000);
  });
});

const unzipOnly = async (zip: string): Promise<string> => {
  const archive = await yauzl.openPromise(zip);
  try {
    const entry = await new Promise<yauzl.Entry>((resolve, reject) => {
      archive.once('entry', resolve);
      archive.once('error', reject);
      archive.readEntry();
    });
    const stream = await archive.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString();
  } finally {
    archive.close();
  }
};
