import BigNumber from 'bignumber.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Candle } from '../../domain/market/candle';
import { toUnits } from '../../domain/market/decimal';
import { parseKlineCsv } from '../../domain/market/klines';
import { parseExchangeInfo } from '../../domain/market/pair';
import { replayTime } from '../../domain/market/replay-clock';
import { MarketFeed } from '../../src/market/feed';
import { createFilesSource } from '../../src/market/sources/files';
import type { PriceTick } from '../../src/market/ticks';
import { readData, tempMarketData } from './support';

/**
 * The `files` source (issue item 3): a live feed replaying the real candles, time-shifted to now, with ticks
 * every second along each candle's path, forward-filled across the real outages.
 */
const HOUR = 3_600_000;
const data = tempMarketData();
let btc: readonly Candle[];

beforeAll(() => {
  data.setPairs(parseExchangeInfo(JSON.parse(readData('exchangeInfo.json'))));
  for (const symbol of ['BTCUSDT', 'ETHUSDT']) {
    data.candles.merge(symbol, '1h', parseKlineCsv(readData(`klines/1h/${symbol}-1h.csv`), '1h').candles);
  }
  btc = data.candles.live.nativeSeries('BTCUSDT', '1h');
});

const candleAt = (t: number) => btc.find((c) => c.openTime <= t && t < c.openTime + HOUR);

describe('files source', () => {
  it('emits one tick per second per pair, moving along the real candle of the replayed hour', async () => {
    let clock = Date.UTC(2030, 0, 1, 12, 0, 0);
    const feed = new MarketFeed();
    const source = createFilesSource({ feed, data, now: () => clock, timerMs: 5 });
    const ticks: PriceTick[] = [];
    feed.ticks$.subscribe((t) => ticks.push(t));
    await source.start();
    try {
      const { window } = source.replay()!;
      expect(source.replay()!.interval).toBe('1h');
      // Before any live tick the backfill already gives a price, a 24h ticker and trades.
      expect(feed.prices.get('BTCUSDT')).toMatchObject({ time: clock, source: 'files' });
      expect(feed.ticker('BTCUSDT', clock)!.tradeCount).toBeGreaterThan(86_000);
      expect(feed.trades.latest('BTCUSDT', 500)).toHaveLength(500);
      for (let s = 1; s <= 5; s++) {
        clock += 1000;
        await new Promise((r) => setTimeout(r, 30));
      }
      const btcTicks = ticks.filter((t) => t.symbol === 'BTCUSDT');
      expect(btcTicks.map((t) => t.time)).toEqual([1, 2, 3, 4, 5].map((s) => Date.UTC(2030, 0, 1, 12, 0, s)));
      expect(ticks.filter((t) => t.symbol === 'ETHUSDT')).toHaveLength(5);
      const distinct = new Set(btcTicks.map((t) => t.price));
      expect(distinct.size).toBeGreaterThan(1);
      for (const t of btcTicks) {
        const candle = candleAt(replayTime(window, t.time))!;
        expect(toUnits(t.price) >= toUnits(candle.low) && toUnits(t.price) <= toUnits(candle.high)).toBe(
          true,
        );
        expect(t.tradeId).toBe(Math.floor(replayTime(window, t.time) / 1000));
      }
      expect(feed.prices.get('BTCUSDT')!.price).toBe(btcTicks.at(-1)!.price);
    } finally {
      await source.stop();
    }
  });

  it('passes through each replayed candle’s open, high, low and close within its hour', () => {
    const source = createFilesSource({ feed: new MarketFeed(), data, now: () => 0 });
    void source.start(); // builds the replay (no timer needed for tickAt)
    const { window } = source.replay()!;
    // Wall hour whose replayed hour is the 500th candle.
    const candle = btc[500]!;
    const wallHour = candle.openTime + (Date.UTC(2030, 0, 1) - replayTime(window, Date.UTC(2030, 0, 1)));
    const prices = Array.from(
      { length: 3600 },
      (_, k) => source.tickAt('BTCUSDT', wallHour + k * 1000)!.price,
    );
    expect(prices[0]).toBe(candle.open);
    expect(prices[3599]).toBe(candle.close);
    expect(prices).toContain(candle.high);
    expect(prices).toContain(candle.low);
    void source.stop();
  });

  it('forward-fills the last close across the real outage of 2021-04-20 02:00–04:00, as price-only ticks', () => {
    const source = createFilesSource({ feed: new MarketFeed(), data, now: () => 0 });
    void source.start();
    const { window } = source.replay()!;
    const shift = Date.UTC(2030, 0, 1) - replayTime(window, Date.UTC(2030, 0, 1));
    const inGap = Date.UTC(2021, 3, 20, 2, 30) + shift;
    const tick = source.tickAt('BTCUSDT', inGap)!;
    const before = btc.find((c) => c.openTime === Date.UTC(2021, 3, 20, 1))!;
    expect(tick).toMatchObject({ price: before.close, trade: false, quantity: '0.00000000' });
    const after = source.tickAt('BTCUSDT', Date.UTC(2021, 3, 20, 4) + shift)!;
    expect(after).toMatchObject({
      price: btc.find((c) => c.openTime === Date.UTC(2021, 3, 20, 4))!.open,
      trade: true,
    });
    void source.stop();
  });

  it('forward-fills across a day with no candles from the last candle of the day before, and replays the next day', () => {
    // A pair of its own with hourly candles on 2021-04-05 and 2021-04-07 only: replayed 2021-04-06 has no candle in
    // its day window, so its price is the last close of the 5th (kept beside the window), then the 7th replays.
    const gap = tempMarketData();
    const day = (d: number, h: number) => Date.UTC(2021, 3, d, h);
    const candle = (openTime: number, close: string): Candle => ({
      openTime,
      open: '100.00000000',
      high: '120.00000000',
      low: '90.00000000',
      close,
      volume: '1.00000000',
      quoteVolume: '100.00000000',
      tradeCount: 10,
    });
    gap.candles.merge('GAPUSDT', '1h', [
      ...Array.from({ length: 24 }, (_, h) => candle(day(5, h), h === 23 ? '101.25000000' : '100.50000000')),
      ...Array.from({ length: 24 }, (_, h) => candle(day(7, h), '110.00000000')),
    ]);
    const source = createFilesSource({ feed: new MarketFeed(), data: gap, now: () => 0 });
    void source.start();
    const { window } = source.replay()!;
    const shift = Date.UTC(2030, 0, 1) - replayTime(window, Date.UTC(2030, 0, 1));
    for (const at of [day(6, 0), day(6, 12), day(6, 23) + HOUR - 1000]) {
      expect(source.tickAt('GAPUSDT', at + shift)).toMatchObject({
        price: '101.25000000',
        trade: false,
        quantity: '0.00000000',
      });
    }
    expect(source.tickAt('GAPUSDT', day(7, 0) + shift)).toMatchObject({ price: '100.00000000', trade: true });
    expect(source.tickAt('GAPUSDT', day(7, 1) - 1000 + shift)).toMatchObject({
      price: '110.00000000',
      trade: true,
    });
    void source.stop();
  });

  it('keeps a real 24-hour window: at the end of a replayed hour it equals the last 24 real candles', async () => {
    const probe = createFilesSource({ feed: new MarketFeed(), data, now: () => 0 });
    await probe.start();
    const { window } = probe.replay()!;
    await probe.stop();
    const shift = Date.UTC(2030, 0, 1) - replayTime(window, Date.UTC(2030, 0, 1));
    const lastOfDay = btc[3000]!;
    const clock = lastOfDay.openTime + HOUR - 1000 + shift; // the last second of that candle
    const feed = new MarketFeed();
    const source = createFilesSource({ feed, data, now: () => clock, symbols: ['BTCUSDT'] });
    await source.start();
    await source.stop();
    const day = btc.slice(3000 - 23, 3001);
    const t = feed.ticker('BTCUSDT', clock)!;
    expect(t.open).toBe(day[0]!.open);
    expect(t.close).toBe(lastOfDay.close);
    expect(t.volume).toBe(day.reduce((s, c) => s.plus(c.volume), new BigNumber(0)).toFixed(8));
    expect(t.high).toBe(BigNumber.max(...day.map((c) => c.high)).toFixed(8));
    expect(t.low).toBe(BigNumber.min(...day.map((c) => c.low)).toFixed(8));
    expect(t.tradeCount).toBe(24 * 3600);
  });
});
