import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWs, type WsClient } from '../support/ws-client';
import { type CompatServer, startCompatServer } from './support';

/**
 * The WebSocket `candles` channel (issue 17, item 9; docs/market-data.md "WebSocket") on the real server process,
 * subscribed the way the original SDK does: the forming candle on every tick, the closed candle once at its close.
 * The `files` source ticks every second, so a one-minute candle closes within the test.
 */
let server: CompatServer | undefined;
let ws = '';

beforeAll(async () => {
  server = await startCompatServer();
  ws = server.url.replace('http', 'ws');
}, 150_000);

afterAll(async () => {
  await server?.close();
}, 30_000);

const MINUTE = 60_000;
const n = Number;

/** Runs `use` on a new socket to the server's `/ws/v1`, closed when `use` has settled (passed or thrown). */
const withSocket = async (use: (socket: WsClient) => Promise<void>) => {
  const socket = await connectWs(ws);
  try {
    await use(socket);
  } finally {
    socket.ws.close();
  }
};

/** Subscribes `socket` to the candles of `symbol` at `interval` (a name or seconds; the channel's default if none). */
const subscribeCandles = (socket: WsClient, symbol: string, interval?: string | number) =>
  socket.send({
    action: 'subscribe',
    channel: 'candles',
    symbol,
    ...(interval === undefined ? {} : { interval }),
  });

describe('the candles channel', () => {
  it(
    'pushes the forming candle on each tick and the closed candle at its close',
    () =>
      withSocket(async (socket) => {
        subscribeCandles(socket, 'BTCUSDT', '1m');
        expect(await socket.next((m) => m.type === 'subscribed')).toEqual({
          channel: 'candles',
          type: 'subscribed',
          data: { symbol: 'BTCUSDT', interval: '1m' },
        });
        // Forming candles of one minute, until its close.
        const forming: any[] = [];
        let closed: any;
        for (;;) {
          const m = await socket.next((x) => x.channel === 'candles', 70_000);
          if (m.type === 'candle_closed') {
            // A minute joined in its last second has one push at most (the candle so far): the next one is
            // watched whole instead.
            if (forming.length > 1) {
              closed = m;
              break;
            }
            forming.length = 0;
            continue;
          }
          expect(m.type).toBe('candle');
          expect(m.data).toMatchObject({ symbol: 'BTCUSDT', interval: '1m', is_closed: false });
          if (forming.length > 0 && m.data.time !== forming[0].data.time) {
            throw new Error('a new minute began before the previous one was closed');
          }
          forming.push(m);
        }
        const minute = forming[0].data.time as string;
        expect(Date.parse(minute) % MINUTE).toBe(0);
        expect(closed.data).toMatchObject({
          time: minute,
          is_closed: true,
          symbol: 'BTCUSDT',
          interval: '1m',
        });
        expect(Date.parse(closed.data.close_time)).toBe(Date.parse(minute) + MINUTE - 1);
        // It closed at the end of its minute (not before), within a second or so of it.
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(minute) + MINUTE);
        // Every forming candle of the minute holds the one before it; the closed one holds them all.
        for (let i = 1; i < forming.length; i++) {
          const [a, b] = [forming[i - 1].data, forming[i].data];
          expect(b.open).toBe(a.open);
          expect(n(b.high)).toBeGreaterThanOrEqual(n(a.high));
          expect(n(b.low)).toBeLessThanOrEqual(n(a.low));
          expect(n(b.volume)).toBeGreaterThanOrEqual(n(a.volume));
        }
        const c = closed.data;
        expect(c.open).toBe(forming[0].data.open);
        for (const f of forming) {
          expect(n(c.high)).toBeGreaterThanOrEqual(n(f.data.close));
          expect(n(c.low)).toBeLessThanOrEqual(n(f.data.close));
        }
        expect(n(c.high)).toBeGreaterThanOrEqual(Math.max(n(c.open), n(c.close)));
        expect(n(c.low)).toBeLessThanOrEqual(Math.min(n(c.open), n(c.close)));
        // The next minute forms next.
        const next = await socket.next((x) => x.channel === 'candles' && x.type === 'candle', 5_000);
        expect(Date.parse(next.data.time)).toBe(Date.parse(minute) + MINUTE);
      }),
    150_000,
  );

  it('gives a subscriber joining mid-candle the whole candle so far; takes the interval in seconds', async () => {
    const first = await connectWs(ws);
    const second = await connectWs(ws);
    try {
      subscribeCandles(first, 'ETHUSDT', 300);
      expect(await first.next((m) => m.type === 'subscribed')).toMatchObject({
        data: { symbol: 'ETHUSDT', interval: '5m' },
      });
      const a = await first.next((m) => m.type === 'candle');
      await first.next((m) => m.type === 'candle' && m.data.close !== undefined);
      subscribeCandles(second, 'ETHUSDT', '5m');
      const b = await second.next((m) => m.type === 'candle');
      if (b.data.time === a.data.time) expect(b.data.open).toBe(a.data.open);
      // A 5-minute candle begins on a 5-minute boundary and was folded from the minute buckets before the
      // subscription: its volume is the 24h window's, not only the ticks since.
      expect(Date.parse(b.data.time) % (5 * MINUTE)).toBe(0);
      expect(b.data.interval).toBe('5m');

      // The original SDK's channel form: answered on that name.
      second.send({ action: 'subscribe', channel: 'candles:BTCUSDT', interval: '1m' });
      expect(await second.next((m) => m.type === 'subscribed' && m.data.symbol === 'BTCUSDT')).toMatchObject({
        channel: 'candles:BTCUSDT',
      });
      expect(
        await second.next((m) => m.type === 'candle' && m.data.symbol === 'BTCUSDT', 5_000),
      ).toMatchObject({ channel: 'candles:BTCUSDT' });
    } finally {
      first.ws.close();
      second.ws.close();
    }
  });

  it('refuses an interval it does not serve and an unknown symbol, and the socket stays open', () =>
    withSocket(async (socket) => {
      subscribeCandles(socket, 'BTCUSDT', '2h');
      expect(await socket.next((m) => m.type === 'error')).toMatchObject({
        channel: 'system',
        // As GET /market/candles/{symbol} answers it (spec "Errors": an unsupported candle interval).
        data: {
          code: 'INVALID_SYMBOL',
          message:
            'unsupported candle interval 2h: use one of 1m, 5m, 15m, 1h, 4h, 1d (or seconds: 60 … 86400)',
          channel: 'candles',
        },
      });
      subscribeCandles(socket, 'NOPEUSDT');
      expect(await socket.next((m) => m.type === 'error')).toMatchObject({
        data: { code: 'INVALID_SYMBOL' },
      });
      subscribeCandles(socket, 'BTCUSDT');
      expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({
        data: { symbol: 'BTCUSDT', interval: '1m' },
      });
    }));
});
