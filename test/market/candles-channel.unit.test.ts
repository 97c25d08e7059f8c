import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/shared/errors';
import { candlesChannels } from '../../src/http/ws/candles-channel';
import type { WsChannel, WsConnection } from '../../src/http/ws/registry';
import { MarketFeed } from '../../src/market/feed';
import type { Services } from '../../src/services';
import { feedOnlyMarket, syntheticTick } from '../support/price-ticks';
import { until } from '../support/until';

/**
 * The `candles` channel over a real market feed (no source: the test ingests the ticks): a candle whose minute has
 * ended is closed by the channel's own timer when no tick of the next minute comes (a quiet pair), once, with the
 * values of every tick it held. A subscription's stopper is safe to call again once a later subscription of the
 * same candles has made a new stream: that stream is still followed (ticks and the closing timer reach it).
 */
let channel: WsChannel | undefined;
afterEach(() => channel?.close?.());

const MINUTE = 60_000;

/** The channel over a fresh feed whose ticks the test ingests. */
const open = () => {
  const feed = new MarketFeed();
  channel = candlesChannels[0]!.create({ market: feedOnlyMarket(feed) } as unknown as Services)!;
  return feed;
};

/** A connection whose messages (parsed) go to `received`. */
const connectionInto = (received: any[]): WsConnection => ({
  id: 'test',
  request: {} as WsConnection['request'],
  principal: null,
  send: (c, type, data) => received.push({ channel: c, type, data }) > 0,
  sendRaw: (m) => received.push(JSON.parse(m)) > 0,
});

/** Subscribes `connection` to BTCUSDT's 1m candles and starts it; returns the subscription and its stopper. */
const subscribe = (connection: WsConnection) => {
  const sub = channel!.subscription(
    { action: 'subscribe', channel: 'candles', symbol: 'BTCUSDT', interval: 60 },
    connection,
  );
  return { sub, stop: sub.start(() => {}) };
};

/**
 * The open time of the minute before this one, after waiting, when needed, until at least 3 s are left in this
 * minute: the candle of the current minute (started by a tick) must not end while a test runs (~1.5 s), or the
 * channel's timer rightly closes it too (a fresh-clone run failed so).
 */
const previousMinute = async (): Promise<number> => {
  const intoMinute = Date.now() % MINUTE;
  if (intoMinute > MINUTE - 3_000) await new Promise((r) => setTimeout(r, MINUTE - intoMinute + 50));
  return Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE;
};

/** A trade of BTCUSDT `offset` ms after `minute`. */
const tickAt = (feed: MarketFeed, minute: number, offset: number, price: string, quantity: string) =>
  feed.ingest(syntheticTick('BTCUSDT', price, quantity, minute + offset, offset, true));

/**
 * Waits (at most 10 s) until `received` holds a `candle_closed`: the channel's 250 ms timer is unref'd and a loaded
 * machine can run it seconds late, so a fixed wait would see no close. The callers then assert exactly what came.
 */
const closeArrives = (received: any[]) =>
  until(() => received.some((m) => m.type === 'candle_closed'), { timeoutMs: 10_000, what: 'candle_closed' });

describe('the candles channel without a next tick', () => {
  it('closes the candle at the end of its interval, once', async () => {
    const feed = open();
    const received: any[] = [];
    const { sub, stop } = subscribe(connectionInto(received));
    expect(sub.ack).toEqual({ symbol: 'BTCUSDT', interval: '1m' });
    // Three ticks in the minute before this one, then silence.
    const minute = await previousMinute();
    const tick = (offset: number, price: string, quantity: string) =>
      tickAt(feed, minute, offset, price, quantity);
    tick(1_000, '100', '1');
    tick(2_000, '105', '2');
    tick(3_000, '99', '0.5');
    expect(received.map((m) => m.type)).toEqual(['candle', 'candle', 'candle']);
    expect(received[1].data).toMatchObject({ open: '100.00000000', high: '105.00000000', is_closed: false });

    await closeArrives(received);
    // One more timer period: a second close would have come by now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closed = received.filter((m) => m.type === 'candle_closed');
    expect(closed).toHaveLength(1);
    expect(closed[0]).toEqual({
      channel: 'candles',
      type: 'candle_closed',
      data: {
        symbol: 'BTCUSDT',
        interval: '1m',
        time: new Date(minute).toISOString(),
        close_time: new Date(minute + MINUTE - 1).toISOString(),
        open: '100.00000000',
        high: '105.00000000',
        low: '99.00000000',
        close: '99.00000000',
        volume: '3.50000000',
        quote_volume: '359.50000000',
        trade_count: 3,
        is_closed: true,
      },
    });
    // A tick of the next minute starts a new candle; the closed one is not sent again.
    tick(MINUTE + 500, '101', '1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received.filter((m) => m.type === 'candle_closed')).toHaveLength(1);
    expect(received.at(-1)).toMatchObject({
      type: 'candle',
      data: { time: new Date(minute + MINUTE).toISOString(), open: '101.00000000' },
    });
    stop();
  });
});

describe('a stopper called again', () => {
  it('leaves the stream of a later subscription of the same candles alone', async () => {
    const feed = open();
    const first: any[] = [];
    const second: any[] = [];
    const a = subscribe(connectionInto(first));
    a.stop();
    const b = subscribe(connectionInto(second));
    a.stop(); // again, once the key's stream is b's
    const minute = await previousMinute();
    tickAt(feed, minute, 1_000, '100', '1');
    await closeArrives(second);
    // b's stream is still followed by the tick and by the channel's timer, which closes the quiet candle.
    expect(second.map((m) => m.type)).toEqual(['candle', 'candle_closed']);
    expect(first).toEqual([]);
    b.stop();
    tickAt(feed, minute, 2_000, '101', '1');
    expect(second).toHaveLength(2);
  });
});

describe('a subscription at the edge of a minute', () => {
  it('gets the close of the candle it was first sent before the next minute forms', async () => {
    const feed = open();
    const minute = (await previousMinute()) + MINUTE; // this minute, with at least 3 s left
    tickAt(feed, minute, 0, '100', '1');
    const received: any[] = [];
    const { stop } = subscribe(connectionInto(received));
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ type: 'candle', data: { time: new Date(minute).toISOString() } });
    // The next minute's first tick closes the candle the subscriber holds, then forms the next one.
    tickAt(feed, minute, MINUTE + 500, '101', '1');
    expect(received.slice(1).map((m) => [m.type, m.data.time, m.data.close])).toEqual([
      ['candle_closed', new Date(minute).toISOString(), '100.00000000'],
      ['candle', new Date(minute + MINUTE).toISOString(), '101.00000000'],
    ]);
    stop();
  });

  it('is first sent the forming candle not yet closed, though a new minute began, then its close', async () => {
    const feed = open();
    const before = await previousMinute();
    const early: any[] = [];
    const a = subscribe(connectionInto(early));
    tickAt(feed, before, 1_000, '100', '1'); // the stream's forming candle: the minute before, not closed yet
    const late: any[] = [];
    const b = subscribe(connectionInto(late));
    expect(late).toEqual([
      expect.objectContaining({
        type: 'candle',
        data: expect.objectContaining({ time: new Date(before).toISOString() }),
      }),
    ]);
    await closeArrives(late);
    expect(late.map((m) => [m.type, m.data.time])).toEqual([
      ['candle', new Date(before).toISOString()],
      ['candle_closed', new Date(before).toISOString()],
    ]);
    a.stop();
    b.stop();
  });
});

describe('the candles channel’s refusal of an interval', () => {
  it('is the REST candles’ (spec "Errors": INVALID_SYMBOL 400), not VALIDATION_ERROR', () => {
    open();
    const refusal = (interval: unknown) => {
      try {
        channel!.subscription(
          { action: 'subscribe', channel: 'candles', symbol: 'BTCUSDT', interval },
          connectionInto([]),
        );
      } catch (error) {
        return error;
      }
      throw new Error(`interval ${String(interval)} was accepted`);
    };
    const error = refusal('2h') as DomainError;
    expect(error).toBeInstanceOf(DomainError);
    // What GET /market/candles/BTCUSDT?interval=2h answers (test/market/http.int.test.ts).
    expect([error.code, error.status, error.message, error.details]).toEqual([
      'INVALID_SYMBOL',
      400,
      'unsupported candle interval 2h: use one of 1m, 5m, 15m, 1h, 4h, 1d (or seconds: 60 … 86400)',
      { interval: '2h', supported: ['1m', '5m', '15m', '1h', '4h', '1d'] },
    ]);
    // Seconds as a string, as REST's query gives them: the same refusal.
    expect((refusal('7200') as DomainError).message).toMatch(/^unsupported candle interval 7200: /);
    // A long string is echoed cut to REST's bound (8 characters), in the message and the details.
    const long = refusal('x'.repeat(10_000)) as DomainError;
    expect(long.code).toBe('INVALID_SYMBOL');
    expect(long.details).toEqual({ interval: 'xxxxxxxx…', supported: ['1m', '5m', '15m', '1h', '4h', '1d'] });
    expect(long.message).toBe(
      'unsupported candle interval xxxxxxxx…: use one of 1m, 5m, 15m, 1h, 4h, 1d (or seconds: 60 … 86400)',
    );
    // A value of no interval's type (an object, a boolean, a number of seconds not served) is a malformed
    // message: VALIDATION_ERROR naming the field, not echoed.
    for (const wrong of [{ m: 1 }, true, 7200]) {
      const error = refusal(wrong) as DomainError;
      expect([error.code, error.message, error.details]).toEqual([
        'VALIDATION_ERROR',
        '"interval" must be one of 1m, 5m, 15m, 1h, 4h, 1d (or seconds: 60 … 86400)',
        { field: 'interval' },
      ]);
    }
  });
});
