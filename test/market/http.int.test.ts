import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BigNumber from 'bignumber.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config';
import { candlesResponse, priceResponse } from '../../src/contract/market';
import { buildApp } from '../../src/http/app';
import { createLogger } from '../../src/logger';
import { createRuntime, type Runtime } from '../../src/runtime';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { openInbox, type WsMessage } from '../support/ws-client';
import { csvRows, linkedDataDir } from './support';

/**
 * The nine `/market/*` endpoints and the `/ws/v1` ticker channels through HTTP (`inject`), on a real runtime
 * (PGlite, or PostgreSQL with DATABASE_URL) whose `files` source replays the real BTCUSDT and ETHUSDT candles.
 */
let database: TestDatabase;
let runtime: Runtime;
let app: FastifyInstance;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  const data = linkedDataDir([
    'exchangeInfo.json',
    'ticker_24hr.json',
    'klines/1h/BTCUSDT-1h.csv',
    'klines/1h/ETHUSDT-1h.csv',
    'klines/1m/BTCUSDT-1m-2020-01-01.csv',
    'klines/1m/BTCUSDT-1m-2020-01-02.csv',
    'klines/1m/BTCUSDT-1m-2020-01-03.csv',
  ]);
  cleanups.push(data.remove);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-market-http-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  database = await createTestDatabase();
  const config = loadConfig({
    DATA_DIR: dataDir,
    MARKET_DATA_DIR: data.dir,
    LOG_LEVEL: 'silent',
    WS_HEARTBEAT_MS: '400',
  });
  runtime = await createRuntime(config, createLogger('silent', { pretty: false }), { database });
  app = await buildApp(runtime.services);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await runtime?.close();
  await database?.close();
  for (const c of cleanups) c();
});

const get = async (url: string) => {
  const r = await app.inject({ method: 'GET', url: `/api/v1${url}` });
  return { status: r.statusCode, body: r.json(), headers: r.headers };
};

const DECIMAL8 = /^-?\d+\.\d{8}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const expectError = (r: { status: number; body: any }, status: number, code: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error.code).toBe(code);
  expect(typeof r.body.error.message).toBe('string');
};

describe('GET /market/pairs', () => {
  it('lists the 456 USDT pairs of the snapshot with filters, 359 active', async () => {
    const r = await get('/market/pairs');
    expect(r.status).toBe(200);
    expect(r.headers['x-ratelimit-limit']).toBe('1200');
    expect(r.body.total).toBe(456);
    expect(r.body.pairs).toHaveLength(456);
    expect(r.body.pairs.find((p: any) => p.symbol === 'BTCUSDT')).toEqual({
      symbol: 'BTCUSDT',
      base_asset: 'BTC',
      quote_asset: 'USDT',
      status: 'active',
      min_qty: '0.00001000',
      step_size: '0.00001000',
      min_notional: '5.00000000',
      tick_size: '0.01000000',
    });
    expect((await get('/market/pairs?status=active')).body.total).toBe(359);
    expect((await get('/market/pairs?status=inactive')).body.total).toBe(97);
    expectError(await get('/market/pairs?status=halted'), 422, 'VALIDATION_ERROR');
  });
});

describe('GET /market/price/{symbol} and /market/prices', () => {
  it('serves the cached price, case-insensitive, with a microsecond timestamp; public, market rate group', async () => {
    const r = await get('/market/price/btcusdt');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['price', 'symbol', 'timestamp']);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(priceResponse.strict().parse(r.body)).toEqual(r.body); // pre-serialized, still the schema's shape
    expect(r.body.symbol).toBe('BTCUSDT');
    expect(r.body.price).toMatch(DECIMAL8);
    expect(r.body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(Math.abs(Date.parse(r.body.timestamp) - Date.now())).toBeLessThan(5_000);
    expect(r.headers['x-ratelimit-limit']).toBe('1200');
  });

  it('answers INVALID_SYMBOL for unknown pairs and PRICE_NOT_AVAILABLE before a price exists', async () => {
    expectError(await get('/market/price/FOOUSDT'), 400, 'INVALID_SYMBOL');
    const none = await get('/market/price/ZILUSDT'); // a real pair without candles in this data set
    expectError(none, 503, 'PRICE_NOT_AVAILABLE');
    expect(none.body.error.details).toEqual({ symbol: 'ZILUSDT' });
  });

  it('lists prices: all, or the requested ones that have a price', async () => {
    const all = await get('/market/prices');
    expect(all.status).toBe(200);
    expect(Object.keys(all.body.prices)).toEqual(['BTCUSDT', 'ETHUSDT']);
    expect(all.body.count).toBe(2);
    expect(all.body.timestamp).toMatch(ISO_MS);
    const some = await get('/market/prices?symbols=ethusdt,ZILUSDT');
    expect(some.body).toMatchObject({ count: 1, prices: { ETHUSDT: expect.stringMatching(DECIMAL8) } });
    expectError(await get('/market/prices?symbols=BTCUSDT,NOPE'), 400, 'INVALID_SYMBOL');
    // `symbols` present but naming no pair is refused, like /market/tickers, not answered with nothing.
    for (const empty of ['', ',', ' , ']) {
      const r = await get(`/market/prices?symbols=${encodeURIComponent(empty)}`);
      expectError(r, 422, 'VALIDATION_ERROR');
      expect(r.body.error.details.issues[0]).toMatchObject({ field: 'symbols', location: 'querystring' });
    }
  });
});

describe('GET /market/ticker/{symbol} and /market/tickers', () => {
  it('serves the rolling 24h ticker', async () => {
    const r = await get('/market/ticker/ethusdt');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(
      [
        'change',
        'change_pct',
        'close',
        'high',
        'low',
        'open',
        'quote_volume',
        'symbol',
        'timestamp',
        'trade_count',
        'volume',
      ].sort(),
    );
    const b = r.body;
    for (const k of ['open', 'high', 'low', 'close', 'volume', 'quote_volume', 'change', 'change_pct']) {
      expect(b[k], k).toMatch(DECIMAL8);
    }
    const n = (k: string) => new BigNumber(b[k]);
    expect(n('high').gte(n('close')) && n('close').gte(n('low')) && n('high').gte(n('open'))).toBe(true);
    expect(n('change').eq(n('close').minus(n('open')))).toBe(true);
    expect(b.trade_count).toBeGreaterThan(80_000); // one replayed tick per second over ~24 h
    expectError(await get('/market/ticker/NOPE'), 400, 'INVALID_SYMBOL');
    expectError(await get('/market/ticker/ZILUSDT'), 503, 'PRICE_NOT_AVAILABLE');
  });

  it('serves up to 100 tickers keyed by symbol', async () => {
    const r = await get('/market/tickers?symbols=BTCUSDT,ethusdt,ZILUSDT');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['BTCUSDT', 'ETHUSDT']);
    expect(Object.keys(r.body.BTCUSDT).sort()).toEqual(
      ['change_pct', 'close', 'high', 'low', 'open', 'symbol', 'trade_count', 'volume'].sort(),
    );
    const pairs = (await get('/market/pairs')).body.pairs.map((p: any) => p.symbol) as string[];
    expect((await get(`/market/tickers?symbols=${pairs.slice(0, 100).join(',')}`)).status).toBe(200);
    expectError(
      await get(`/market/tickers?symbols=${pairs.slice(0, 101).join(',')}`),
      422,
      'VALIDATION_ERROR',
    );
    expectError(await get('/market/tickers'), 422, 'VALIDATION_ERROR');
    expectError(await get('/market/tickers?symbols=BTCUSDT,NOPE'), 400, 'INVALID_SYMBOL');
  });
});

/** Independent aggregation of the hourly CSV (bignumber.js, not the code under test). */
const aggregateCsv = (rows: string[][], bucketMs: number) => {
  const out = new Map<number, { o: string; h: BigNumber; l: BigNumber; c: string; v: BigNumber }>();
  for (const [t, o, h, l, c, v] of rows) {
    const bucket = Math.floor(Number(t) / bucketMs) * bucketMs;
    const e = out.get(bucket);
    if (!e)
      out.set(bucket, { o: o!, h: new BigNumber(h!), l: new BigNumber(l!), c: c!, v: new BigNumber(v!) });
    else {
      e.h = BigNumber.max(e.h, h!);
      e.l = BigNumber.min(e.l, l!);
      e.c = c!;
      e.v = e.v.plus(v!);
    }
  }
  return [...out.entries()].map(([t, e]) => ({
    time: new Date(t).toISOString(),
    open: e.o,
    high: e.h.toFixed(8),
    low: e.l.toFixed(8),
    close: e.c,
    volume: e.v.toFixed(8),
    trade_count: 0,
  }));
};

describe('GET /market/candles/{symbol}', () => {
  const rows = csvRows('klines/1h/BTCUSDT-1h.csv');
  const asCandle = (r: string[]) => ({
    time: new Date(Number(r[0])).toISOString(),
    open: r[1],
    high: r[2],
    low: r[3],
    close: r[4],
    volume: r[5],
    trade_count: 0,
  });

  it('defaults to the newest 100 hourly candles closed by the replayed time, oldest first, exactly as stored', async () => {
    // The live prices replay the data time-shifted to now: the default candles lead up to the replayed time the
    // prices are at, not to the end of the data (years ahead of the live price).
    const replayed = runtime.services.market!.replayedNow()!;
    const closed = rows.filter((row) => Number(row[0]) + 3_600_000 <= replayed);
    const r = await get('/market/candles/btcusdt');
    expect(r.status).toBe(200);
    expect(r.body.symbol).toBe('BTCUSDT');
    expect(r.body.interval).toBe('1h');
    expect(r.body.count).toBe(r.body.candles.length);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(candlesResponse.parse(r.body)).toEqual(r.body);
    // (A candle can close between reading the clock and the request: allow the window one candle later.)
    const expected = [closed.slice(-100), rows.slice(closed.length - 99, closed.length + 1)].map((x) =>
      x.map(asCandle),
    );
    expect(expected).toContainEqual(r.body.candles);
  });

  it('honours inclusive start_time/end_time and limit', async () => {
    const start = new Date(Number(rows[10]![0])).toISOString();
    const end = new Date(Number(rows[14]![0])).toISOString();
    const r = await get(`/market/candles/BTCUSDT?interval=1h&start_time=${start}&end_time=${end}`);
    expect(r.body.candles).toEqual(rows.slice(10, 15).map(asCandle));
    const limited = await get(`/market/candles/BTCUSDT?start_time=${start}&limit=3`);
    expect(limited.body.candles).toEqual(rows.slice(10, 13).map(asCandle));
    const before = await get(`/market/candles/BTCUSDT?end_time=${end}&limit=2`);
    expect(before.body.candles).toEqual(rows.slice(13, 15).map(asCandle));
    // The outage of 2021-04-20 02:00–03:00 stays a hole (reported in data_gaps), not invented candles.
    const gap = await get(
      '/market/candles/BTCUSDT?start_time=2021-04-20T00:00:00Z&end_time=2021-04-20T05:00:00Z',
    );
    expect(gap.body.candles.map((c: any) => c.time.slice(11, 13))).toEqual(['00', '01', '04', '05']);
  });

  it('serves 4h and 1d candles equal to an independent aggregation of the 1h file', async () => {
    for (const [interval, ms] of [
      ['4h', 4 * 3_600_000],
      ['1d', 86_400_000],
    ] as const) {
      const expected = aggregateCsv(rows, ms);
      const got: any[] = [];
      let start = expected[0]!.time;
      for (;;) {
        const r = await get(`/market/candles/BTCUSDT?interval=${interval}&limit=1000&start_time=${start}`);
        expect(r.status).toBe(200);
        got.push(...r.body.candles);
        if (r.body.count < 1000) break;
        start = new Date(Date.parse(r.body.candles.at(-1).time) + ms).toISOString();
      }
      expect(got).toEqual(expected);
    }
  });

  it('aggregates 5m from the real 1m files and keeps their trade counts', async () => {
    const r = await get('/market/candles/BTCUSDT?interval=5m&start_time=2020-01-01T00:00:00Z&limit=2');
    expect(r.body.candles[0]).toMatchObject({ time: '2020-01-01T00:00:00.000Z', open: '7195.24000000' });
    expect(r.body.candles[0].trade_count).toBeGreaterThan(0);
    const minutes = await get('/market/candles/BTCUSDT?interval=1m&start_time=2020-01-01T00:00:00Z&limit=5');
    const sum = minutes.body.candles.reduce((s: BigNumber, c: any) => s.plus(c.volume), new BigNumber(0));
    expect(r.body.candles[0].volume).toBe(sum.toFixed(8));
    expect((await get('/market/candles/ETHUSDT?interval=1m')).body).toMatchObject({ count: 0, candles: [] });
  });

  it('rejects bad intervals and unknown symbols with INVALID_SYMBOL, bad bounds with VALIDATION_ERROR', async () => {
    const twoHours = await get('/market/candles/BTCUSDT?interval=2h');
    expectError(twoHours, 400, 'INVALID_SYMBOL');
    // The WebSocket candles channel answers the same (test/market/candles-channel.unit.test.ts).
    expect(twoHours.body.error).toEqual({
      code: 'INVALID_SYMBOL',
      message: 'unsupported candle interval 2h: use one of 1m, 5m, 15m, 1h, 4h, 1d (or seconds: 60 … 86400)',
      details: { interval: '2h', supported: ['1m', '5m', '15m', '1h', '4h', '1d'] },
    });
    expectError(await get('/market/candles/BTCUSDT?interval=1H'), 400, 'INVALID_SYMBOL');
    expectError(await get('/market/candles/NOPE'), 400, 'INVALID_SYMBOL');
    expectError(await get('/market/candles/BTCUSDT?limit=0'), 422, 'VALIDATION_ERROR');
    expectError(await get('/market/candles/BTCUSDT?limit=1001'), 422, 'VALIDATION_ERROR');
    expectError(await get('/market/candles/BTCUSDT?start_time=yesterday'), 422, 'VALIDATION_ERROR');
    expectError(
      await get('/market/candles/BTCUSDT?start_time=2022-01-02T00:00:00Z&end_time=2022-01-01T00:00:00Z'),
      422,
      'VALIDATION_ERROR',
    );
    expect((await get('/market/candles/BTCUSDT?limit=1000')).body.count).toBe(1000);
  });
});

describe('GET /market/trades/{symbol}', () => {
  it('serves recent trades from the tick stream, newest first', async () => {
    const r = await get('/market/trades/btcusdt?limit=5');
    expect(r.status).toBe(200);
    expect(r.body.symbol).toBe('BTCUSDT');
    expect(r.body.trades).toHaveLength(5);
    const [a, b] = r.body.trades;
    expect(Object.keys(a).sort()).toEqual(['is_buyer_maker', 'price', 'quantity', 'time', 'trade_id']);
    expect(a.trade_id).toBeGreaterThan(b.trade_id);
    expect(Date.parse(a.time)).toBeGreaterThan(Date.parse(b.time));
    expect(a.price).toMatch(DECIMAL8);
    expect(typeof a.is_buyer_maker).toBe('boolean');
    expect((await get('/market/trades/BTCUSDT')).body.trades).toHaveLength(100);
    expect((await get('/market/trades/BTCUSDT?limit=500')).body.trades).toHaveLength(500);
    expect((await get('/market/trades/ZILUSDT')).body.trades).toEqual([]);
    expectError(await get('/market/trades/BTCUSDT?limit=501'), 422, 'VALIDATION_ERROR');
    expectError(await get('/market/trades/NOPE'), 400, 'INVALID_SYMBOL');
  });
});

describe('GET /market/orderbook/{symbol}', () => {
  it('builds a synthetic book around the current price', async () => {
    const r = await get('/market/orderbook/BTCUSDT');
    expect(r.status).toBe(200);
    expect(r.body.bids).toHaveLength(10);
    expect(r.body.asks).toHaveLength(10);
    expect(r.body.timestamp).toMatch(ISO_MS);
    const bid = new BigNumber(r.body.bids[0][0]);
    const ask = new BigNumber(r.body.asks[0][0]);
    expect(bid.lt(ask)).toBe(true);
    expect(new BigNumber(r.body.bids[1][0]).lt(bid)).toBe(true);
    expect(new BigNumber(r.body.asks[1][0]).gt(ask)).toBe(true);
    expect((await get('/market/orderbook/BTCUSDT?depth=5')).body.asks).toHaveLength(5);
    expect((await get('/market/orderbook/BTCUSDT?depth=20')).body.bids).toHaveLength(20);
  });

  it('rejects depths other than 5, 10, 20 with INVALID_SYMBOL; no price → PRICE_NOT_AVAILABLE', async () => {
    for (const depth of ['7', '0', 'abc', '100', '5.0']) {
      expectError(await get(`/market/orderbook/BTCUSDT?depth=${depth}`), 400, 'INVALID_SYMBOL');
    }
    expectError(await get('/market/orderbook/NOPE'), 400, 'INVALID_SYMBOL');
    expectError(await get('/market/orderbook/ZILUSDT'), 503, 'PRICE_NOT_AVAILABLE');
  });
});

describe('GET /market/data-range', () => {
  it('reports the range, intervals and the five real outages as gaps', async () => {
    const r = await get('/market/data-range');
    expect(r.status).toBe(200);
    expect(r.body.earliest).toBe('2020-01-01T00:00:00.000Z');
    expect(r.body.latest).toBe(
      new Date(Number(csvRows('klines/1h/ETHUSDT-1h.csv').at(-1)![0]) + 3_600_000).toISOString(),
    );
    expect(r.body.total_pairs).toBe(2);
    expect(r.body.intervals_available).toEqual(['1m', '5m', '15m', '1h', '4h', '1d']);
    expect(r.body.data_gaps).toEqual(
      [
        ['2021-04-20T02:00:00.000Z', '2021-04-20T04:00:00.000Z', 2],
        ['2021-04-25T05:00:00.000Z', '2021-04-25T08:00:00.000Z', 3],
        ['2021-08-13T02:00:00.000Z', '2021-08-13T06:00:00.000Z', 4],
        ['2021-09-29T07:00:00.000Z', '2021-09-29T09:00:00.000Z', 2],
        ['2023-03-24T13:00:00.000Z', '2023-03-24T14:00:00.000Z', 1],
      ].map(([start, end, missing]) => ({
        interval: '1h',
        start,
        end,
        missing_candles: missing,
        symbols: ['BTCUSDT', 'ETHUSDT'],
      })),
    );
    expect(r.body.pairs.find((p: any) => p.symbol === 'ETHUSDT')).toMatchObject({
      intervals: ['1h', '4h', '1d'],
      stored_intervals: ['1h'],
    });
  });
});

describe('WebSocket /ws/v1', () => {
  let base = '';
  beforeAll(async () => {
    base = (await app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
  });

  /** A socket on `/ws/v1`, its welcome unread; `send` passes a string as it is (malformed messages), `next` waits 3 s. */
  const open = async () => {
    const { ws, next } = await openInbox(`${base}/ws/v1`);
    const send = (m: unknown) => ws.send(typeof m === 'string' ? m : JSON.stringify(m));
    return { ws, next: (test: (m: WsMessage) => boolean, timeoutMs = 3000) => next(test, timeoutMs), send };
  };

  it('delivers ticker messages for a symbol, also when subscribed as "ticker:SYMBOL"', async () => {
    const { ws, next, send } = await open();
    const welcome = await next((m) => m.type === 'welcome');
    expect(welcome).toMatchObject({ channel: 'system', data: { max_subscriptions: 10 } });
    expect(welcome.data.channels.map((c: any) => c.name)).toEqual(
      expect.arrayContaining(['ticker', 'ticker_all']),
    );
    send({ action: 'subscribe', channel: 'ticker', symbol: 'btcusdt' });
    expect(await next((m) => m.type === 'subscribed')).toEqual({
      channel: 'ticker',
      type: 'subscribed',
      data: { symbol: 'BTCUSDT' },
    });
    const first = await next((m) => m.type === 'ticker');
    const second = await next((m) => m.type === 'ticker' && m.data.timestamp !== first.data.timestamp, 3000);
    expect(second).toMatchObject({
      channel: 'ticker',
      data: { symbol: 'BTCUSDT', price: expect.stringMatching(DECIMAL8) },
    });
    expect(second.data).toHaveProperty('change_pct');
    send({ action: 'subscribe', channel: 'ticker:ETHUSDT' });
    // Answered on the name it was subscribed with (the original SDK's form, issue 17 item 8).
    expect(await next((m) => m.type === 'subscribed' && m.data.symbol === 'ETHUSDT')).toMatchObject({
      channel: 'ticker:ETHUSDT',
    });
    await next((m) => m.type === 'ticker' && m.data.symbol === 'ETHUSDT' && m.channel === 'ticker:ETHUSDT');
    send({ action: 'unsubscribe', channel: 'ticker', symbol: 'BTCUSDT' });
    expect(await next((m) => m.type === 'unsubscribed')).toMatchObject({ data: { symbol: 'BTCUSDT' } });
    ws.terminate();
  });

  it('delivers ticker_all batches, pongs, and heartbeats (a socket that answers pings stays open)', async () => {
    const { ws, next, send } = await open();
    send({ action: 'subscribe', channel: 'ticker_all' });
    await next((m) => m.type === 'subscribed' && m.channel === 'ticker_all');
    const batch = await next((m) => m.channel === 'ticker_all' && m.type === 'tickers', 3000);
    expect(batch.data.map((t: any) => t.symbol)).toEqual(['BTCUSDT', 'ETHUSDT']);
    send({ action: 'ping' });
    expect(await next((m) => m.type === 'pong')).toMatchObject({ channel: 'system' });
    expect(await next((m) => m.type === 'heartbeat', 2000)).toMatchObject({ channel: 'system' });
    await next((m) => m.type === 'heartbeat', 2000);
    await next((m) => m.type === 'heartbeat', 2000);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.terminate();
  });

  it('closes a socket that does not answer the heartbeat ping', async () => {
    const silent = new WebSocket(`${base}/ws/v1`, { autoPong: false });
    const closed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)));
    const started = Date.now();
    await closed;
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('answers bad messages with an error message and keeps the socket open; at most 10 subscriptions', async () => {
    const { ws, next, send } = await open();
    const error = () => next((m) => m.type === 'error');
    send('not json');
    expect(await error()).toMatchObject({
      channel: 'system',
      data: {
        code: 'VALIDATION_ERROR',
        details: {
          issues: [{ field: 'message', location: 'message', message: 'message is not valid JSON' }],
        },
      },
    });
    send({ action: 'dance', channel: 'ticker' });
    expect((await error()).data).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ field: 'action', location: 'message' }] },
    });
    send({ action: 'subscribe', channel: 'weather' });
    expect((await error()).data.message).toMatch(/unknown channel/);
    send({ action: 'subscribe', channel: 'ticker', symbol: 'NOPEUSDT' });
    expect((await error()).data).toMatchObject({ code: 'INVALID_SYMBOL', channel: 'ticker' });
    send({ action: 'subscribe', channel: 'ticker' });
    expect((await error()).data).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ field: 'symbol', location: 'message' }] },
    });
    send({ action: 'unsubscribe', channel: 'ticker', symbol: 'BTCUSDT' });
    expect((await error()).data.message).toMatch(/not subscribed/);
    const symbols = ((await get('/market/pairs?status=active')).body.pairs as any[])
      .slice(0, 11)
      .map((p) => p.symbol);
    for (const s of symbols.slice(0, 10)) {
      send({ action: 'subscribe', channel: 'ticker', symbol: s });
      await next((m) => m.type === 'subscribed' && m.data.symbol === s);
    }
    send({ action: 'subscribe', channel: 'ticker', symbol: symbols[10] });
    expect((await error()).data).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { limit: 10, issues: [{ field: 'message', location: 'message' }] },
    });
    send({ action: 'ping' });
    await next((m) => m.type === 'pong');
    ws.terminate();
  });
});

describe('rate limit (spec "Limits": market data 1,200 per minute, separate group)', () => {
  it('answers 429 RATE_LIMIT_EXCEEDED after 1,200 market requests from one client', async () => {
    const before = await get('/market/price/BTCUSDT');
    const remaining = Number(before.headers['x-ratelimit-remaining']);
    for (let i = 0; i < remaining; i++)
      await app.inject({ method: 'GET', url: '/api/v1/market/price/BTCUSDT' });
    const limited = await get('/market/price/BTCUSDT');
    expectError(limited, 429, 'RATE_LIMIT_EXCEEDED');
    expect(limited.body.error.details).toMatchObject({ limit: 1200, window_seconds: 60 });
    expect(limited.headers['retry-after']).toBeDefined();
  });
});
