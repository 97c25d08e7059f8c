import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useRealDataServer } from '../support/real-data-server';
import { openInbox } from '../support/ws-client';
import { useProBinance } from './pro-client';

/**
 * Issue 19, item 3: Binance's WebSocket market streams (`/binance/ws`, `/binance/stream`) from the venue's market
 * feed, through the real `ccxt.pro.binance` client (its `urls.api.ws.spot` pointed at the venue) against the real
 * server process on the real market data, and through a bare socket for the raw and combined formats.
 */
const venue = useRealDataServer('ptv-binance-ws-');
const pro = useProBinance(venue);
let wsBase: string;

const SYMBOL = 'BTC/USDT';

/** A bare socket of the Binance door with an inbox. */
const open = (path: string) => openInbox(`${wsBase}${path}`);

const restPrice = async (symbol: string) =>
  Number(
    ((await (await fetch(`${venue.url}/api/v1/market/price/${symbol}`)).json()) as { price: string }).price,
  );

beforeAll(() => {
  wsBase = venue.url.replace('http://', 'ws://');
});

describe('ccxt.pro.binance market streams against the venue', () => {
  it('watchTicker: the 24h mini ticker of the live price', async () => {
    const ticker = await pro().watchTicker(SYMBOL);
    expect(ticker.symbol).toBe(SYMBOL);
    const price = await restPrice('BTCUSDT');
    expect(Math.abs(ticker.last! - price) / price).toBeLessThan(0.02);
    expect(ticker.high!).toBeGreaterThanOrEqual(ticker.low!);
  });

  it('watchOHLCV: the forming 1m candle', async () => {
    const candles = await pro().watchOHLCV(SYMBOL, '1m');
    const [time, open, high, low, close] = candles.at(-1)!;
    expect(time! % 60_000).toBe(0);
    expect(Math.abs(Date.now() - time!)).toBeLessThan(3 * 60_000);
    expect(high!).toBeGreaterThanOrEqual(Math.max(open!, close!));
    expect(low!).toBeLessThanOrEqual(Math.min(open!, close!));
  });

  it('watchTrades: the public trades of the feed', async () => {
    const trades = await pro().watchTrades(SYMBOL);
    expect(trades.length).toBeGreaterThan(0);
    for (const t of trades) {
      expect(t.symbol).toBe(SYMBOL);
      expect(t.price).toBeGreaterThan(0);
      expect(t.amount).toBeGreaterThan(0);
    }
  });

  it('watchOrderBook: the REST snapshot plus the diff stream stays one consistent book', async () => {
    const first = await pro().watchOrderBook(SYMBOL);
    const nonce = first.nonce!;
    expect(first.bids.length).toBeGreaterThan(0);
    // Several updates in a row: each must continue the last (U = previous u + 1), else ccxt throws ChecksumError.
    let book = first;
    for (let i = 0; i < 3; i++) book = await pro().watchOrderBook(SYMBOL);
    expect(book.nonce!).toBeGreaterThan(nonce);
    expect(book.bids[0]![0]!).toBeLessThan(book.asks[0]![0]!);
    // The book ccxt keeps is the server's book: the same 20 levels a side as the REST depth at that moment.
    expect(book.bids.length).toBe(20);
    expect(book.asks.length).toBe(20);
    const mid = (book.bids[0]![0]! + book.asks[0]![0]!) / 2;
    expect(Math.abs(mid - (await restPrice('BTCUSDT'))) / mid).toBeLessThan(0.02);
  });
});

describe('Binance stream formats on a bare socket', () => {
  it('combined streams wrap each event as {stream, data}', async () => {
    const s = await open('/binance/stream?streams=btcusdt@bookTicker/ethusdt@depth5@100ms/btcusdt@ticker');
    const top = await s.next((m) => m.stream === 'btcusdt@bookTicker');
    expect(top.data).toMatchObject({ s: 'BTCUSDT', u: expect.any(Number) });
    expect(Number(top.data.b)).toBeLessThan(Number(top.data.a));
    const depth = await s.next((m) => m.stream === 'ethusdt@depth5@100ms');
    expect(depth.data.bids).toHaveLength(5);
    expect(depth.data.asks).toHaveLength(5);
    const ticker = await s.next((m) => m.stream === 'btcusdt@ticker', 5_000);
    expect(ticker.data).toMatchObject({ e: '24hrTicker', s: 'BTCUSDT' });
    s.ws.close();
  });

  it('a raw stream in the URL; live SUBSCRIBE, LIST_SUBSCRIPTIONS, UNSUBSCRIBE and Binance’s request errors', async () => {
    const s = await open('/binance/ws/btcusdt@kline_1m');
    const kline = await s.next((m) => m.e === 'kline', 5_000);
    expect(kline.k).toMatchObject({ s: 'BTCUSDT', i: '1m', x: false });

    s.send({ method: 'SUBSCRIBE', params: ['ethusdt@aggTrade', '!miniTicker@arr'], id: 7 });
    expect(await s.next((m) => m.id === 7)).toEqual({ result: null, id: 7 });
    const all = await s.next((m) => Array.isArray(m), 5_000);
    expect(all[0]).toMatchObject({ e: '24hrMiniTicker' });
    s.send({ method: 'LIST_SUBSCRIPTIONS', id: 8 });
    expect((await s.next((m) => m.id === 8)).result.sort()).toEqual(
      ['!miniTicker@arr', 'btcusdt@kline_1m', 'ethusdt@aggTrade'].sort(),
    );
    s.send({ method: 'UNSUBSCRIBE', params: ['!miniTicker@arr'], id: 9 });
    expect(await s.next((m) => m.id === 9)).toEqual({ result: null, id: 9 });

    s.send({ method: 'SUBSCRIBE', params: ['nopeusdt@trade'], id: 10 });
    expect(await s.next((m) => m.id === 10)).toMatchObject({ error: { code: 2 }, id: 10 });
    s.send({ method: 'SUBSCRIBE', params: ['btcusdt@kline_3m'], id: 11 });
    expect(await s.next((m) => m.id === 11)).toMatchObject({ error: { code: 2 }, id: 11 });
    s.ws.send('{not json');
    expect(await s.next((m) => m.error?.code === 3)).toMatchObject({ id: null });
    s.send({ method: 'SET_PROPERTY', params: ['combined', true], id: 12 });
    expect(await s.next((m) => m.id === 12)).toEqual({ result: null, id: 12 });
    // Combined from now on: events carry their stream's name.
    expect((await s.next((m) => m.stream === 'btcusdt@kline_1m', 5_000)).data.e).toBe('kline');
    s.send({ method: 'LIST_SUBSCRIPTIONS', id: 13 });
    expect((await s.next((m) => m.id === 13)).result.sort()).toEqual([
      'btcusdt@kline_1m',
      'ethusdt@aggTrade',
    ]);
    s.ws.close();
  });

  it('an unknown stream in the URL is refused with code 2 and the socket closed', async () => {
    const s = await open('/binance/ws/nopeusdt@trade');
    expect(await s.next((m) => m.error !== undefined)).toMatchObject({ error: { code: 2 } });
    if (s.ws.readyState !== WebSocket.CLOSED) await new Promise((resolve) => s.ws.once('close', resolve));
    expect(s.ws.readyState).toBe(WebSocket.CLOSED);
  });
});
