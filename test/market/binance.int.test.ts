import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { marketSettings } from '../../src/market/config';
import { MarketFeed } from '../../src/market/feed';
import { createBinanceSource } from '../../src/market/sources/binance';
import { reconnectingSocket } from '../../src/market/sources/reconnecting-socket';
import { operatorHeadersOf } from '../support/runtime';
import { until } from '../support/until';
import { RECORDED, useFakeBinance } from './fake-binance';
import { tempMarketData } from './support';

/**
 * The `binance` source against a local fake server serving the recorded real REST responses and WebSocket
 * frames (no network): pairs, trade ticks, kline backfill into the store, a dropped connection and its
 * reconnect, the mini-ticker mode, and the whole runtime serving `/market/price` from it.
 */
const fx = useFakeBinance('ptv-binance-');

const settingsFor = (env: Record<string, string>) =>
  marketSettings(
    loadConfig({
      DATA_DIR: fx.dataDir,
      MARKET_SOURCE: 'binance',
      BINANCE_REST_URL: fx.fake.restUrl,
      BINANCE_WS_URL: fx.fake.wsUrl,
      BINANCE_RECONNECT_MIN_MS: '50',
      BINANCE_RECONNECT_MAX_MS: '200',
      ...env,
    }),
  );

/** A Binance source against the fake exchange, with `env` over the test settings, a new feed and fresh market data. */
const binanceSource = (env: Record<string, string>) => {
  const feed = new MarketFeed();
  const data = tempMarketData();
  const source = createBinanceSource({ feed, data, db: fx.database.all, settings: settingsFor(env) });
  return { feed, data, source };
};

describe('binance source (trade streams)', () => {
  it('loads pairs, backfills klines, turns trades into ticks, and reconnects after a dropped connection', async () => {
    const { feed, data, source } = binanceSource({ MARKET_SYMBOLS: 'btcusdt,ETHUSDT' });
    await source.start();
    try {
      expect(data.pairs()).toHaveLength(456);
      expect(data.referenceTicker('BTCUSDT')?.quoteVolume).toBe('2167538240.48367050');
      expect(fx.fake.connections.at(-1)).toBe('btcusdt@trade/ethusdt@trade');

      // The recorded trade frame becomes the price, with its own time and source, and a public trade.
      await until(() => feed.prices.get('BTCUSDT')?.price === '102571.17000000');
      expect(feed.prices.get('BTCUSDT')).toEqual({
        symbol: 'BTCUSDT',
        price: '102571.17000000',
        time: RECORDED.trade.data['T'],
        source: 'binance',
        updateId: expect.any(Number),
      });
      expect(feed.trades.latest('BTCUSDT', 1)[0]).toMatchObject({
        tradeId: RECORDED.trade.data['t'],
        quantity: '0.00100000',
        isBuyerMaker: true,
      });

      // Kline backfill over REST, stored append-only with source `binance`.
      await source.backfilled();
      expect(
        fx.fake.requests.filter((r) => r.startsWith('/api/v3/klines?symbol=BTCUSDT&interval=1m')),
      ).toHaveLength(1);
      expect(data.candles.live.nativeSeries('BTCUSDT', '1m')).toHaveLength(10);
      const stored = await sql<{ n: string }>`
        select count(*)::text as n from market_candles where symbol = 'BTCUSDT' and source = 'binance'`.execute(
        fx.database.all,
      );
      expect(stored.rows[0]!.n).toBe('10');

      // A dropped connection: reconnect with back-off, backfill again, and keep receiving.
      const ticksBefore = feed.tickCount;
      fx.fake.drop();
      // The fake sees a connection before the client's 'open' event counts it: wait for both.
      await until(() => fx.fake.connections.length === 2 && source.status().connections === 2);
      await until(() => feed.tickCount > ticksBefore);
      expect(source.status()).toMatchObject({ ok: true, connected: true, connections: 2 });
      await source.backfilled();
      expect(fx.fake.requests.filter((r) => r.startsWith('/api/v3/klines?symbol=BTCUSDT'))).toHaveLength(2);

      // Frames from the recorded set arriving live are decoded too (aggTrade uses its aggregate id).
      fx.fake.broadcast(RECORDED.aggTrade);
      await until(() => feed.trades.latest('BTCUSDT', 1)[0]?.tradeId === RECORDED.aggTrade.data['a']);
      // Garbage frames are ignored, not fatal.
      fx.fake.broadcast('not json');
      fx.fake.broadcast({ stream: 'x', data: { e: 'trade', s: 'BTCUSDT', p: 'NaN' } });
      fx.fake.broadcast(RECORDED.trade);
      await until(() => feed.trades.latest('BTCUSDT', 1)[0]?.tradeId === RECORDED.trade.data['t']);
    } finally {
      await source.stop();
    }
    expect(source.status().connected).toBe(false);
  });

  it('reconnects after each of several drops', async () => {
    const { source } = binanceSource({
      MARKET_SYMBOLS: 'BTCUSDT',
      BINANCE_RECONNECT_MIN_MS: '30',
      BINANCE_RECONNECT_MAX_MS: '100',
    });
    await source.start();
    try {
      await until(() => source.status().connected === true);
      const before = fx.fake.connections.length;
      for (let i = 0; i < 3; i++) {
        fx.fake.drop();
        // The fake sees a connection before the client's 'open' event counts it: wait for both,
        // so the next drop closes an open socket rather than one still opening.
        await until(
          () => fx.fake.connections.length === before + i + 1 && source.status().connections === i + 2,
        );
      }
      expect(source.status()).toMatchObject({ connected: true, connections: 4 });
      expect(fx.fake.connections).toHaveLength(before + 3);
    } finally {
      await source.stop();
    }
  });
});

describe('reconnecting socket', () => {
  it('backs off exponentially (with jitter, capped) while nothing answers', async () => {
    const net = await import('node:net');
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r())); // a port where nothing listens
    const waits: number[] = [];
    const socket = reconnectingSocket({
      url: () => `ws://127.0.0.1:${port}/stream`,
      minDelayMs: 20,
      maxDelayMs: 160,
      onMessage: () => {},
      onClose: (_reason, retryInMs) => waits.push(retryInMs),
    });
    socket.start();
    await until(() => waits.length >= 6);
    await socket.stop();
    waits.slice(0, 6).forEach((w, i) => {
      const base = Math.min(160, 20 * 2 ** i);
      expect(w).toBeGreaterThanOrEqual(base / 2);
      expect(w).toBeLessThanOrEqual(base);
    });
    expect(socket.connected).toBe(false);
  });
});

describe('binance source (!miniTicker@arr)', () => {
  it('serves the exchange’s own rolling 24h ticker and price for every pair', async () => {
    const { feed, source } = binanceSource({ BINANCE_STREAM: 'miniTicker' });
    await source.start();
    try {
      expect(fx.fake.connections.at(-1)).toBe('!miniTicker@arr');
      await until(() => feed.ticker('BTCUSDT') !== undefined);
      expect(feed.ticker('BTCUSDT')).toMatchObject({
        basis: 'exchange',
        open: '102339.76000000',
        high: '104096.36000000',
        low: '99260.86000000',
        close: '102571.17000000',
        volume: '30195.39867000',
        quoteVolume: '3065280135.28113970',
        change: '231.41000000',
      });
      expect(feed.prices.get('BTCUSDT')).toMatchObject({
        price: '102571.17000000',
        time: RECORDED.miniTicker.data['E'],
      });
      expect(feed.trades.latest('BTCUSDT', 10)).toEqual([]); // quotes are not trades
    } finally {
      await source.stop();
    }
  });
});

describe('runtime with MARKET_SOURCE=binance', () => {
  it('serves /market/price from the live feed and reports the feed in /health', async () => {
    const { runtime, app } = await fx.startVenue();
    try {
      await until(() => runtime.services.market!.feed.prices.get('BTCUSDT')?.price === '102571.17000000');
      const r = await app.inject({ method: 'GET', url: '/api/v1/market/price/btcusdt' });
      expect(r.json()).toEqual({
        symbol: 'BTCUSDT',
        price: '102571.17000000',
        timestamp: `${new Date(RECORDED.trade.data['T'] as number).toISOString().slice(0, -1)}000Z`,
      });
      const health = (
        await app.inject({ method: 'GET', url: '/health', headers: operatorHeadersOf(app) })
      ).json();
      expect(health.checks.market_feed).toMatchObject({
        status: 'ok',
        source: 'binance',
        connected: true,
        pairs: 456,
      });
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
