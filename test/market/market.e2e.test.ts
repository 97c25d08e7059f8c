import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useRealDataServer } from '../support/real-data-server';
import { operatorHeaders } from '../support/server-process';
import { csvRows } from './support';

/**
 * The real server process (`src/main.ts serve`) on the real data set (`MARKET_DATA_DIR=../shared/market-data`),
 * over HTTP and WebSocket: the "Done when" checks. Uses embedded PGlite in a temporary DATA_DIR, or a
 * fresh database on DATABASE_URL's server when that is set.
 */
const server = useRealDataServer('ptv-market-e2e-');

const get = async (url: string) => {
  const r = await fetch(`${server.url}${url}`, { headers: url === '/health' ? operatorHeaders : {} });
  return { status: r.status, body: (await r.json()) as any };
};

describe('market data on the real server with the real data', () => {
  it('lists the 456 USDT pairs of the snapshot, 359 active', async () => {
    const r = await get('/api/v1/market/pairs');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(456);
    expect(r.body.pairs.filter((p: any) => p.status === 'active')).toHaveLength(359);
  });

  it('moves the prices of the 16 pairs with candles every second', async () => {
    const samples: Record<string, { price: string; timestamp: string }>[] = [];
    for (let i = 0; i < 4; i++) {
      const all = (await get('/api/v1/market/prices')).body;
      expect(all.count).toBe(16);
      const one: Record<string, { price: string; timestamp: string }> = {};
      await Promise.all(
        Object.keys(all.prices).map(async (s) => {
          one[s] = (await get(`/api/v1/market/price/${s}`)).body;
        }),
      );
      samples.push(one);
      await new Promise((r) => setTimeout(r, 1100));
    }
    for (const symbol of Object.keys(samples[0]!)) {
      const times = samples.map((s) => Date.parse(s[symbol]!.timestamp));
      for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1000);
      expect(new Set(samples.map((s) => s[symbol]!.price)).size, symbol).toBeGreaterThan(1);
    }
  });

  it('serves the real hourly candles, by default those closed by the replayed time of the live prices', async () => {
    const replayed = Date.parse((await get('/health')).body.checks.market_feed.replayed_time);
    const r = await get('/api/v1/market/candles/BTCUSDT?interval=1h');
    expect(r.status).toBe(200);
    const all = csvRows('klines/1h/BTCUSDT-1h.csv');
    const closed = all.filter((x) => Number(x[0]) + 3_600_000 <= replayed);
    const got = r.body.candles.map((c: any) => [
      Date.parse(c.time),
      c.open,
      c.high,
      c.low,
      c.close,
      c.volume,
    ]);
    // (A candle can close between reading the clock and the request: allow the window one candle later.)
    const windows = [closed.slice(-100), all.slice(closed.length - 99, closed.length + 1)];
    expect(windows.map((w) => w.map((x) => [Number(x[0]), x[1], x[2], x[3], x[4], x[5]]))).toContainEqual(
      got,
    );
    const explicit = await get('/api/v1/market/candles/BTCUSDT?interval=1h&end_time=2023-12-31T00:00:00Z');
    expect(explicit.body.candles.at(-1).time).toBe(new Date(Number(all.at(-1)![0])).toISOString());
  });

  it('reports the five real outages as gaps of all 16 pairs', async () => {
    const r = await get('/api/v1/market/data-range');
    expect(r.body.total_pairs).toBe(16);
    expect(r.body.data_gaps.map((g: any) => [g.start, g.missing_candles, g.symbols.length])).toEqual([
      ['2021-04-20T02:00:00.000Z', 2, 16],
      ['2021-04-25T05:00:00.000Z', 3, 16],
      ['2021-08-13T02:00:00.000Z', 4, 16],
      ['2021-09-29T07:00:00.000Z', 2, 16],
      ['2023-03-24T13:00:00.000Z', 1, 16],
    ]);
  });

  it('pushes BTCUSDT ticker messages to a WebSocket client', async () => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws/v1`);
    const tickers: any[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      if (m.channel === 'ticker' && m.type === 'ticker') tickers.push(m);
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ action: 'subscribe', channel: 'ticker', symbol: 'BTCUSDT' }));
    const started = Date.now();
    while (tickers.length < 3 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 50));
    ws.close();
    expect(tickers.length).toBeGreaterThanOrEqual(3);
    expect(tickers[2].data).toMatchObject({
      symbol: 'BTCUSDT',
      price: expect.stringMatching(/^\d+\.\d{8}$/),
    });
  });

  it('shows the market feed in /health', async () => {
    const r = await get('/health');
    expect(r.body.checks.market_feed).toMatchObject({
      status: 'ok',
      source: 'files',
      symbols: 16,
      pairs: 456,
    });
  });
});
