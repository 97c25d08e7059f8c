import { afterEach, describe, expect, it } from 'vitest';
import { fromUnits, toUnits, toUnitsNumber } from '../../domain/market/decimal';
import { candlesChannels } from '../../src/http/ws/candles-channel';
import type { WsChannel, WsConnection } from '../../src/http/ws/registry';
import { MarketFeed } from '../../src/market/feed';
import type { MarketServices } from '../../src/market/services';
import type { Services } from '../../src/services';

/**
 * The `candles` channel over a real market feed (no source: the test ingests the ticks): a candle whose minute has
 * ended is closed by the channel's own timer when no tick of the next minute comes (a quiet pair), once, with the
 * values of every tick it held.
 */
let channel: WsChannel | undefined;
afterEach(() => channel?.close?.());

const MINUTE = 60_000;

describe('the candles channel without a next tick', () => {
  it('closes the candle at the end of its interval, once', async () => {
    const feed = new MarketFeed();
    const market = {
      feed,
      ticks$: feed.ticks$,
      requirePair: (symbol: string) => ({ symbol }),
    } as unknown as MarketServices;
    channel = candlesChannels[0]!.create({ market } as unknown as Services)!;
    const received: any[] = [];
    const connection: WsConnection = {
      id: 'test',
      request: {} as WsConnection['request'],
      principal: null,
      send: (c, type, data) => received.push({ channel: c, type, data }) > 0,
      sendRaw: (m) => received.push(JSON.parse(m)) > 0,
    };
    const sub = channel.subscription(
      { action: 'subscribe', channel: 'candles', symbol: 'BTCUSDT', interval: 60 },
      connection,
    );
    expect(sub.ack).toEqual({ symbol: 'BTCUSDT', interval: '1m' });
    const stop = sub.start(() => {});
    // The candle of the current minute (started below by a tick) must not end while the test runs (~1.5 s), or the
    // channel's timer rightly closes it too: start at least 3 s before the minute's end (a fresh-clone run failed so).
    const intoMinute = Date.now() % MINUTE;
    if (intoMinute > MINUTE - 3_000) await new Promise((r) => setTimeout(r, MINUTE - intoMinute + 50));
    // Three ticks in the minute before this one, then silence.
    const minute = Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE;
    const tick = (offset: number, price: string, quantity: string) =>
      feed.ingest({
        symbol: 'BTCUSDT',
        price: fromUnits(toUnits(price)),
        priceUnits: toUnitsNumber(price),
        quantity: fromUnits(toUnits(quantity)),
        quantityUnits: toUnits(quantity),
        time: minute + offset,
        tradeId: offset,
        isBuyerMaker: false,
        trade: true,
        source: 'synthetic',
      });
    tick(1_000, '100', '1');
    tick(2_000, '105', '2');
    tick(3_000, '99', '0.5');
    expect(received.map((m) => m.type)).toEqual(['candle', 'candle', 'candle']);
    expect(received[1].data).toMatchObject({ open: '100.00000000', high: '105.00000000', is_closed: false });

    await new Promise((resolve) => setTimeout(resolve, 700));
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
