import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closedCandlesBetween,
  lastClosed,
  quoteVolume24h,
  type SessionMarket,
} from '../../domain/backtest/market';
import { backtestMarketSource } from '../../src/backtest/market-source';
import type { TestApp } from '../accounts/support';
import {
  dataDirectory,
  normalizeSessionText,
  ok,
  runSessionCommands,
  type SessionCommand,
  sessionBody,
  sessionOrder,
  startBacktestApp,
  type Trader,
  trader,
} from './http-support';

/**
 * Issue 24 item 3: a session reads its window in chunks ahead of the virtual clock. A session over a window many
 * times the chunk answers every read and every step exactly as the same session holding its window in one chunk,
 * and what it holds stays bounded by the chunk, not by the window.
 */
const H = 3_600_000;
const START = Date.UTC(2022, 0, 1);
const END = Date.UTC(2022, 2, 1); // 1,416 hourly steps
const PAIRS = ['BTCUSDT', 'ETHUSDT'];
const CHUNK = 24; // a day of hours: the window is ~60 chunks (and 11 months of history before it)
const ONE_CHUNK = 1_000_000_000;

let remove: () => void;
let marketDir: string;
const apps: TestApp[] = [];

beforeAll(() => {
  const data = dataDirectory();
  remove = data.remove;
  marketDir = data.dir;
});

afterAll(async () => {
  // close, not stop: it also drops the app's database (on PostgreSQL, three were left behind per CI pass).
  for (const t of apps) await t.close();
  remove?.();
});

/** Every read a step or a response makes of the market at virtual time `at`, as plain data. */
const readsAt = (market: SessionMarket, at: number) =>
  PAIRS.map((symbol) => ({
    last: lastClosed(market, symbol, at),
    volume: quoteVolume24h(market, symbol, at)?.toFixed(),
    day: closedCandlesBetween(market, symbol, at, at - 25 * H, at),
    newest: closedCandlesBetween(market, symbol, at, 0, Number.MAX_SAFE_INTEGER, { limit: 60, newest: true }),
    older: closedCandlesBetween(market, symbol, at, at - 20 * 24 * H, Number.MAX_SAFE_INTEGER, {
      limit: 30,
      newest: false,
    }),
  }));

describe('a session window read in chunks', () => {
  it('reads exactly what one chunk holds at every virtual time, and holds a bounded part of it', async () => {
    const t = await startBacktestApp(marketDir);
    apps.push(t);
    const services = t.app.services.market!;
    const shared = 600;
    const chunked = backtestMarketSource(services, { chunkCandles: CHUNK, sharedCandles: shared });
    const whole = backtestMarketSource(services, { chunkCandles: ONE_CHUNK });
    const a = chunked.load(PAIRS, '1h', END);
    const b = whole.load(PAIRS, '1h', END);
    if ('error' in a || 'error' in b) throw new Error('the session market did not load');
    expect(a.fingerprint).toBe(b.fingerprint);
    const meta = (m: SessionMarket) =>
      m.series.map((s) => ({
        symbol: s.symbol,
        length: s.length,
        first: s.firstOpenTime,
        last: s.lastOpenTime,
        gaps: s.gaps,
      }));
    expect(meta(a.market)).toEqual(meta(b.market));
    expect(a.market.series[0]!.length).toBeGreaterThan(50 * CHUNK);

    let moves = 0;
    let generation = a.market.window!.generation;
    for (let at = START; at <= END; at += H) {
      expect(readsAt(a.market, at)).toEqual(readsAt(b.market, at));
      if (a.market.window!.generation !== generation) {
        moves++;
        generation = a.market.window!.generation;
      }
      // Resident: the chunk (24 candles), the day before it and one interval on each side, the candle before.
      for (const s of a.market.series) expect(s.openTime.length).toBeLessThanOrEqual(CHUNK + 24 + 3);
      expect(chunked.residentCandles()).toBeLessThanOrEqual(shared);
    }
    expect(moves).toBeGreaterThanOrEqual(58);
    // The whole window in one chunk holds every candle up to the end.
    expect(b.market.series[0]!.openTime.length).toBe(b.market.series[0]!.length);
  }, 120_000);

  it('steps, answers and completes a session exactly as with one chunk, through HTTP and the worker thread', async () => {
    const commands: SessionCommand[] = [
      ['POST', '/start'],
      ['GET', '/market/candles/BTCUSDT?limit=500'],
      ['POST', '/step/batch', { steps: 30 }],
      sessionOrder('BTCUSDT', 'buy', 'market', '0.05'),
      sessionOrder('ETHUSDT', 'buy', 'limit', '0.8', { price: '3500' }),
      ['POST', '/step'],
      ['POST', '/step/batch', { steps: 200 }],
      sessionOrder('BTCUSDT', 'sell', 'take_profit', '0.05', { trigger_price: '45000' }),
      sessionOrder('ETHUSDT', 'sell', 'stop_loss', '0.8', { trigger_price: '2500' }),
      // 1,100 steps × 2 pairs: decided on the worker thread, which asks for ~46 chunks on the way.
      ['POST', '/step/batch', { steps: 1100 }],
      ['GET', '/market/prices'],
      ['GET', '/market/ticker/ETHUSDT'],
      ['GET', '/market/candles/ETHUSDT?limit=100'],
      ['GET', '/market/candles/ETHUSDT?start_time=2022-01-05T00:00:00Z&limit=50'],
      ['GET', '/account/portfolio'],
      sessionOrder('ETHUSDT', 'buy', 'market', '0.3'),
      ['POST', '/step/batch', { steps: 100_000 }],
      ['GET', '/results'],
      ['GET', '/results/equity-curve?limit=10000'],
      ['GET', '/results/trades?limit=1000'],
      ['GET', '/trade/orders?limit=500'],
    ];
    const runWith = async (chunkCandles: number) => {
      const t = await startBacktestApp(marketDir, undefined, {
        BACKTEST_CHUNK_CANDLES: String(chunkCandles),
        BACKTEST_THREADS: '1',
      });
      apps.push(t);
      const who: Trader = await trader(t.app, { max_position_size_pct: 100 });
      const body = sessionBody(who, START, END, PAIRS, { strategy_label: 'chunks' });
      const created = await ok(t.app, who.headers, 'POST', '/backtest/create', body);
      const id = created.session_id as string;
      const out = await runSessionCommands(t.app, who, id, commands);
      await t.close();
      apps.splice(apps.indexOf(t), 1);
      return normalizeSessionText(out.join('\n'), id);
    };
    const chunked = await runWith(CHUNK);
    const whole = await runWith(ONE_CHUNK);
    expect(chunked).toContain('"is_complete":true');
    expect(chunked).toMatch(/"orders_filled":\[\{/);
    expect(chunked).toBe(whole);
  }, 300_000);
});
