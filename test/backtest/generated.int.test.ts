import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { generateMarketData } from '../../src/market/generator/generate';
import type { TestApp } from '../accounts/support';
import { MARKET_DATA, tempDir } from '../market/support';
import {
  ok,
  readsAtClock,
  sandboxOrder,
  sessionBody,
  startBacktestApp,
  type Trader,
  trader,
} from './http-support';

/**
 * A 1-minute backtest on generated Binance zips (issue 24: "a backtest on generated data still passes the
 * look-ahead checks"): two pairs × two days from `generate-market-data`, imported at start, stepped through HTTP in
 * batches; at each virtual time T every sandbox answer holds nothing after T, and the step's price is the minute
 * that closed at T exactly as in the generated file (read here from the zip, independently of the import).
 */
const START = Date.UTC(2022, 0, 1);
const END = Date.UTC(2022, 0, 3);
const M = 60_000;

let t: TestApp;
let alice: Trader;
const generated = tempDir('ptv-generated-');
/** Close (text) by open time of each generated pair's minutes. */
const closes = new Map<string, Map<number, string>>();

/** The CSV text inside a Binance zip. */
const unzipText = async (file: string): Promise<string> => {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  try {
    const entry = await new Promise<yauzl.Entry>((resolve, reject) => {
      zip.once('entry', resolve).once('error', reject);
      zip.readEntry();
    });
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    zip.close();
  }
};

beforeAll(async () => {
  const result = await generateMarketData({
    pairs: 2,
    from: START,
    to: END,
    interval: '1m',
    out: generated.dir,
    seed: 11,
    anchorDir: MARKET_DATA,
    period: 'daily',
    timeUnit: 'ms',
    header: false,
    threads: 1,
  });
  expect(result.symbols).toEqual(['BTCUSDT', 'ETHUSDT']);
  for (const symbol of result.symbols) {
    const rows = new Map<number, string>();
    for (const day of ['2022-01-01', '2022-01-02']) {
      const text = await unzipText(
        path.join(generated.dir, 'klines', symbol, '1m', `${symbol}-1m-${day}.zip`),
      );
      for (const line of text.trim().split('\n')) {
        const cells = line.split(',');
        rows.set(Number(cells[0]), cells[4]!);
      }
    }
    closes.set(symbol, rows);
  }
  t = await startBacktestApp(generated.dir);
  alice = await trader(t.app, { max_position_size_pct: 100 });
}, 180_000);

afterAll(async () => {
  await t?.close();
  generated.remove();
});

/** The close of the last generated minute of `symbol` closed by `at` (a gap leaves the one before it). */
const closeAt = (symbol: string, at: number): { time: number; close: string } => {
  const rows = closes.get(symbol)!;
  for (let open = at - M; open >= START; open -= M) {
    const close = rows.get(open);
    if (close !== undefined) return { time: open, close };
  }
  throw new Error(`no ${symbol} minute closed by ${new Date(at).toISOString()}`);
};

/** `"43250.12"` as the venue writes it (8 decimals). */
const eight = (text: string) => {
  const [int, frac = ''] = text.split('.');
  return `${int}.${frac.padEnd(8, '0')}`;
};

describe('a 1-minute backtest on generated data', () => {
  it('never answers data from after virtual time, and steps on the generated minutes', async () => {
    const body = sessionBody(alice, START, END, null, { candle_interval: '1m', strategy_label: 'generated' });
    const created = await ok(t.app, alice.headers, 'POST', '/backtest/create', {
      ...body,
      starting_balance: '100000',
    });
    expect(created).toMatchObject({ total_steps: 2 * 1440, estimated_pairs: 2 });
    const id = created.session_id as string;
    await ok(t.app, alice.headers, 'POST', `/backtest/${id}/start`);
    let step = 0;
    for (const batch of [1, 7, 60, 1000, 1811]) {
      const stepped = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step/batch`, { steps: batch });
      step += batch;
      const at = Date.parse(stepped.virtual_time);
      expect(at).toBe(START + step * M);
      if (step === 1) {
        await sandboxOrder(t.app, alice.headers, id, {
          symbol: 'ETHUSDT',
          side: 'buy',
          type: 'market',
          quantity: '1',
        });
      }
      for (const symbol of ['BTCUSDT', 'ETHUSDT']) {
        const expected = closeAt(symbol, at);
        expect(stepped.prices[symbol]).toMatchObject({
          time: new Date(expected.time).toISOString(),
          close: eight(expected.close),
        });
      }
      const reads = await readsAtClock(t.app, alice, id, stepped, [
        '/market/price/BTCUSDT',
        '/market/prices',
        '/market/ticker/ETHUSDT',
        '/market/candles/BTCUSDT?interval=1m&limit=1000',
        '/market/candles/ETHUSDT?interval=5m',
        '/market/candles/BTCUSDT?interval=1h',
        '/market/candles/BTCUSDT?interval=1m&limit=1000&start_time=2022-01-01T00:00:00Z&end_time=2022-01-03T00:00:00Z',
      ]);
      const [price, , , minutes, fives, hours, ranged] = reads;
      expect(price.price).toBe(eight(closeAt('BTCUSDT', at).close));
      expect(Date.parse(minutes.candles.at(-1).time)).toBe(closeAt('BTCUSDT', at).time);
      // From start_time: the first 1,000 minutes, or every minute closed by T when fewer.
      if (ranged.count < 1000) expect(ranged.candles.at(-1)).toEqual(minutes.candles.at(-1));
      else expect(Date.parse(ranged.candles.at(-1).time)).toBeLessThan(at);
      for (const c of fives.candles) expect(Date.parse(c.time) + 5 * M).toBeLessThanOrEqual(at);
      for (const c of hours.candles) expect(Date.parse(c.time) + 60 * M).toBeLessThanOrEqual(at);
    }
    expect(step).toBe(2 * 1440 - 1);
    const last = await ok(t.app, alice.headers, 'POST', `/backtest/${id}/step`);
    expect(last).toMatchObject({ is_complete: true, status: 'completed' });
    const results = await ok(t.app, alice.headers, 'GET', `/backtest/${id}/results`);
    expect(results.summary.total_trades).toBe(1);
  }, 180_000);
});
